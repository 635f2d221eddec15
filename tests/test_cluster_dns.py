"""The DNS check: the server's DNS egress admits the resolver the cluster's nodes give their pods (cluster/dns.py).

GKE labels a node addon.gke.io/node-local-dns-ds-ready=true once NodeLocal DNSCache (169.254.20.10) runs on it,
and every node cloud.google.com/gke-nodepool; with Cloud DNS pods resolve through 169.254.169.254:53
(docs/sources.md §S8).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cluster.dns import check_dns
from cluster.facts import facts_from_items
from components.render.network_policy import render_network_policies
from tests.cluster_facts import facts, node
from tests.factories import make_config
from tests.kubernetes_fixtures import plan_of
from tests.reachability import Host, Pod, allowed
from validation.cluster import check_cluster

NODE_LOCAL = {"addon.gke.io/node-local-dns-ds-ready": "true", "cloud.google.com/gke-nodepool": "gpu"}
GKE_NODE = {"cloud.google.com/gke-nodepool": "gpu"}
GKE_FIXTURE = Path(__file__).parent / "data" / "clusters" / "gke-a100-no-gfd.json"


def dns_findings(profile: str, items: list[dict[str, Any]], **network_policy: Any) -> list[tuple[str, str]]:
    plan = plan_of(make_config(cluster={"profile": profile}, network_policy=network_policy))
    result = check_cluster(plan, facts_from_items(items, "test"))
    return [(f.level, f.message) for f in result.findings if f.check == "dns"]


def test_nodes_running_node_local_dns_block_a_profile_whose_dns_rule_does_not_admit_it() -> None:
    (finding,) = dns_findings("generic", [node("g1", NODE_LOCAL)])
    assert finding[0] == "block" and "169.254.20.10:53" in finding[1] and "g1" in finding[1]


def test_the_block_names_the_profile_and_the_node_local_dns_key_as_the_fix() -> None:
    plan = plan_of(make_config())
    (finding,) = check_dns(facts(node("g1", NODE_LOCAL)), plan.traffic.flows.dns.addresses, "generic")
    assert "cluster.profile: gke" in finding.fix and "network_policy.node_local_dns: true" in finding.fix


def test_on_the_gke_profile_node_local_dns_is_admitted() -> None:
    assert dns_findings("gke", [node("g1", NODE_LOCAL)]) == [
        ("ok", "NodeLocal DNSCache on 1 node(s): 169.254.20.10:53 admitted.")
    ]


def test_network_policy_node_local_dns_admits_it_on_another_profile_leaving_the_cloud_dns_warning() -> None:
    assert [level for level, _ in dns_findings("generic", [node("g1", NODE_LOCAL)], node_local_dns=True)] == ["warn"]


def test_gke_nodes_without_node_local_dns_warn_that_cloud_dns_would_be_blocked_off_the_gke_profile() -> None:
    (finding,) = dns_findings("generic", [node("g1", GKE_NODE)])
    assert finding[0] == "warn" and "169.254.169.254:53" in finding[1]


def test_nodes_of_other_clusters_raise_no_dns_finding() -> None:
    assert dns_findings("generic", [node("g1", {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"})]) == []


def test_without_network_policies_nothing_is_checked() -> None:
    assert dns_findings("generic", [node("g1", NODE_LOCAL)], enabled=False) == []


def test_the_gke_snapshot_with_node_local_dns_labels_blocks_the_generic_profile() -> None:
    items = json.loads(GKE_FIXTURE.read_text())["items"]
    for item in items:
        if item["kind"] == "Node":
            item["metadata"]["labels"]["addon.gke.io/node-local-dns-ds-ready"] = "true"
    assert [level for level, _ in dns_findings("generic", items)] == ["block"]


def test_what_the_check_calls_admitted_the_rendered_policy_admits() -> None:
    plan = plan_of(make_config(cluster={"profile": "gke"}))
    server = Pod("server", plan.identity.namespace, plan.identity.labels("server"))
    policies = render_network_policies(plan.identity, plan.traffic)
    for address in plan.traffic.flows.dns.addresses:
        assert allowed(policies, server, Host("resolver", address), 53, "UDP")
