"""The DNS check: the server's DNS egress must reach the resolver the cluster's nodes give their pods. Pure.

On GKE that is kube-dns, NodeLocal DNSCache on the host network (169.254.20.10, on nodes labelled
addon.gke.io/node-local-dns-ds-ready=true) or Cloud DNS through the metadata server (169.254.169.254:53); no pod
selector matches a host-network resolver, so the policy must admit its address (catalog/profiles.py GKE_DNS,
docs/sources.md §S8). Cloud DNS leaves no mark on the objects this check reads, so GKE nodes alone say it may run.
"""

from __future__ import annotations

from catalog.profiles import CLOUD_DNS_ADDRESS, GKE_NODE_LABEL, NODE_LOCAL_DNS_ADDRESS, NODE_LOCAL_DNS_LABEL
from cluster.facts import ClusterFacts
from cluster.findings import Finding

FIX = "set cluster.profile: gke (it admits kube-dns, NodeLocal DNSCache and Cloud DNS)"


def check_dns(facts: ClusterFacts, admitted: tuple[str, ...], profile: str) -> list[Finding]:
    """`admitted`: the resolver addresses the DNS egress rule admits on 53 (the plan's flows)."""
    key, value = NODE_LOCAL_DNS_LABEL
    node_local = [node.name for node in facts.nodes if node.labels.get(key) == value]
    if node_local and NODE_LOCAL_DNS_ADDRESS not in admitted:
        return [
            Finding(
                "dns",
                "block",
                f"{len(node_local)} node(s) run NodeLocal DNSCache ({key}={value}, e.g. {node_local[0]}): their "
                f"pods resolve through {NODE_LOCAL_DNS_ADDRESS}:53, which the DNS egress rule of profile {profile} "
                "does not admit, so the download and the ranks cannot resolve any name.",
                f"{FIX}, or set network_policy.node_local_dns: true.",
            )
        ]
    gke = [node.name for node in facts.nodes if GKE_NODE_LABEL in node.labels]
    if gke and CLOUD_DNS_ADDRESS not in admitted:
        return [
            Finding(
                "dns",
                "warn",
                f"{len(gke)} node(s) are GKE nodes ({GKE_NODE_LABEL}, e.g. {gke[0]}); with Cloud DNS their pods "
                f"resolve through {CLOUD_DNS_ADDRESS}:53, which the DNS egress rule of profile {profile} does not admit.",
                f"{FIX}.",
            )
        ]
    if node_local:
        return [Finding("dns", "ok", f"NodeLocal DNSCache on {len(node_local)} node(s): {NODE_LOCAL_DNS_ADDRESS}:53 admitted.")]
    return []
