"""NetworkPolicies: API port only from clients and Prometheus, DNS-only egress for servers, hub egress for the cache Job."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pulumi
import pytest
from pydantic import BaseModel, Field, ValidationError

from components.network_policy import TYPE_TOKEN, NetworkPolicies, NetworkPoliciesArgs
from components.render.names import labels, selector_labels
from components.render.network_policy import (
    MODEL_CACHE,
    SERVER,
    render_model_cache_policy,
    render_network_policies,
    render_server_policy,
)
from config.errors import ConfigError
from config.messages import issue_from_pydantic
from config.network import NetworkPolicyConfig
from tests.harness import resolve, run_program

NEWEST_KUBERNETES = kubernetes_validate.latest_version()
DNS_PORTS = [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]
POLICIES: dict[str, dict[str, Any]] = {
    "defaults": {},
    "client namespaces and pods": {"client_namespaces": ["gateway", "apps"], "client_pod_selector": {"app": "web"}},
    "no prometheus": {"prometheus_namespace": None},
    "no hub": {"hub_egress_cidrs": []},
    "in-cluster mirror": {"hub_egress_cidrs": ["10.20.0.0/16"], "hub_egress_ports": [443, 8443]},
}


def policy(**fields: Any) -> NetworkPolicyConfig:
    return NetworkPolicyConfig.model_validate(fields)


def server(**fields: Any) -> dict[str, Any]:
    return render_server_policy("inference", "prod", 8000, policy(**fields))


def model_cache(**fields: Any) -> dict[str, Any]:
    return render_model_cache_policy("inference", "prod", policy(**fields))


@pytest.mark.parametrize("fields", POLICIES.values(), ids=POLICIES.keys())
def test_every_rendered_policy_passes_strict_schema_validation_for_the_newest_kubernetes(fields: dict[str, Any]) -> None:
    for manifest in render_network_policies("inference", "prod", 8000, policy(**fields)):
        kubernetes_validate.validate(manifest, NEWEST_KUBERNETES, strict=True)


def test_network_policies_are_on_by_default() -> None:
    assert [m["metadata"]["name"] for m in render_network_policies("ns", "prod", 8000, NetworkPolicyConfig())] == \
        ["prod-server", "prod-model-cache"]


def test_no_policy_is_rendered_when_disabled() -> None:
    assert render_network_policies("ns", "prod", 8000, policy(enabled=False)) == []


def test_server_policy_selects_only_this_instances_server_pods() -> None:
    assert server()["spec"]["podSelector"] == {"matchLabels": {
        "app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": "prod", "app.kubernetes.io/component": "server"}}


def test_server_policy_governs_both_directions_so_anything_unlisted_is_denied() -> None:
    assert server()["spec"]["policyTypes"] == ["Ingress", "Egress"]


def test_every_server_ingress_rule_opens_only_the_api_port() -> None:
    assert [rule["ports"] for rule in server()["spec"]["ingress"]] == [[{"protocol": "TCP", "port": 8000}]] * 2


def test_without_client_namespaces_only_pods_in_the_stacks_namespace_may_call_the_api() -> None:
    assert server()["spec"]["ingress"][0]["from"] == [{"podSelector": {"matchLabels": {}}}]


def test_client_namespaces_and_pod_labels_must_both_match_one_peer() -> None:
    peers = server(client_namespaces=["gateway", "apps"], client_pod_selector={"app": "web"})["spec"]["ingress"][0]["from"]
    assert peers == [{
        "namespaceSelector": {"matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["apps", "gateway"]}]},
        "podSelector": {"matchLabels": {"app": "web"}},
    }]


def test_prometheus_namespace_may_reach_the_api_port_that_also_serves_metrics() -> None:
    assert server()["spec"]["ingress"][1]["from"] == [{"namespaceSelector": {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["monitoring"]}]}}]


def test_no_prometheus_rule_when_prometheus_namespace_is_null() -> None:
    assert len(server(prometheus_namespace=None)["spec"]["ingress"]) == 1


def test_server_egress_is_cluster_dns_only() -> None:
    assert server()["spec"]["egress"] == [{
        "to": [{
            "namespaceSelector": {"matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["kube-system"]}]},
            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
        }],
        "ports": DNS_PORTS,
    }]


def test_model_cache_policy_selects_the_download_job_pods() -> None:
    assert model_cache()["spec"]["podSelector"] == {"matchLabels": {
        "app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": "prod",
        "app.kubernetes.io/component": "model-cache"}}


def test_model_cache_pods_accept_no_ingress() -> None:
    spec = model_cache()["spec"]
    assert (spec["policyTypes"], spec["ingress"]) == (["Ingress", "Egress"], [])


def test_model_cache_may_reach_the_hub_on_443_but_not_cluster_internal_ranges() -> None:
    assert model_cache()["spec"]["egress"][1] == {
        "to": [
            {"ipBlock": {"cidr": "0.0.0.0/0", "except": [
                "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16"]}},
            {"ipBlock": {"cidr": "::/0", "except": ["fc00::/7", "fe80::/10"]}},
        ],
        "ports": [{"protocol": "TCP", "port": 443}],
    }


def test_except_ranges_outside_a_hub_cidr_are_left_out_of_its_ip_block() -> None:
    assert model_cache(hub_egress_cidrs=["10.20.0.0/16"])["spec"]["egress"][1]["to"] == [
        {"ipBlock": {"cidr": "10.20.0.0/16"}}]


def test_model_cache_egress_is_dns_only_without_hub_cidrs() -> None:
    assert [rule["ports"] for rule in model_cache(hub_egress_cidrs=[])["spec"]["egress"]] == [DNS_PORTS]


def test_policies_select_pods_by_the_labels_the_deployment_and_job_selectors_use() -> None:
    selectors = [m["spec"]["podSelector"]["matchLabels"]
                 for m in render_network_policies("ns", "prod", 8000, NetworkPolicyConfig())]
    assert selectors == [selector_labels("prod", SERVER), selector_labels("prod", MODEL_CACHE)]


def test_policies_carry_the_stacks_common_labels() -> None:
    metadata = [m["metadata"]["labels"] for m in render_network_policies("ns", "prod", 8000, NetworkPolicyConfig())]
    assert metadata == [labels("prod", SERVER), labels("prod", MODEL_CACHE)]


@pytest.mark.parametrize(("fields", "key", "fragment"), [
    ({"hub_egress_cidrs": ["10.0.0.1/8"]}, "network_policy.hub_egress_cidrs", "'10.0.0.1/8' is not a network in CIDR"),
    ({"client_pod_selector": {"app name": "web"}}, "network_policy.client_pod_selector",
     "'app name' is not a Kubernetes label key"),
    ({"dns_pod_selector": {"k8s-app": "kube dns"}}, "network_policy.dns_pod_selector",
     "'kube dns' (label k8s-app) is not a Kubernetes label value"),
    ({"client_namespaces": ["Gateway"]}, "network_policy.client_namespaces[0]", "'Gateway' does not match the pattern"),
    ({"hub_egress_ports": [0]}, "network_policy.hub_egress_ports[0]", "0 is out of range: must be ≥ 1."),
    ({"client_namespace": ["gateway"]}, "network_policy.client_namespace", "unknown key (did you mean `client_namespaces`?)"),
])
def test_bad_network_policy_settings_name_the_key(fields: dict[str, Any], key: str, fragment: str) -> None:
    issues = _issues({"network_policy": fields})
    assert any(issue.key == key and fragment in issue.render() for issue in issues), [i.render() for i in issues]


class Root(BaseModel):
    network_policy: NetworkPolicyConfig = Field(default_factory=NetworkPolicyConfig)


def _issues(raw: dict[str, Any]) -> list[Any]:
    """Validate the group as the stack would, under a `network_policy` key."""
    try:
        Root.model_validate(raw)
    except ValidationError as error:
        return ConfigError([issue_from_pydantic(Root, e) for e in error.errors()]).issues
    return []


def test_every_network_policy_setting_is_documented() -> None:
    assert [name for name, field in NetworkPolicyConfig.model_fields.items() if not field.description] == []


def _register(fields: dict[str, Any]) -> tuple[list[Any], dict[str, NetworkPolicies]]:
    built: dict[str, NetworkPolicies] = {}

    def build() -> None:
        built["component"] = NetworkPolicies("vllm", NetworkPoliciesArgs("inference", "prod", 8000, policy(**fields)))

    return run_program(build).resources, built


def test_component_registers_one_policy_per_pod_role_named_after_the_component() -> None:
    resources, _ = _register({})
    policies = sorted(r.name for r in resources if r.typ == "kubernetes:networking.k8s.io/v1:NetworkPolicy")
    assert policies == ["vllm-model-cache", "vllm-server"]


def test_component_uses_its_own_type_token() -> None:
    resources, _ = _register({})
    assert [r.typ for r in resources if not r.custom] == [TYPE_TOKEN]


def test_component_policies_are_children_of_the_component() -> None:
    _, built = _register({})
    assert f"{TYPE_TOKEN}$kubernetes:networking.k8s.io/v1:NetworkPolicy::vllm-server" in resolve(built["component"].server.urn)  # type: ignore[union-attr]


def test_component_accepts_the_namespace_as_an_output() -> None:
    def build() -> None:
        namespace = pulumi.Output.from_input("from-output")
        NetworkPolicies("vllm", NetworkPoliciesArgs(namespace, "prod", 8000, NetworkPolicyConfig()))

    sent = next(r for r in run_program(build).resources if r.name == "vllm-server").inputs
    assert sent["metadata"]["namespace"] == "from-output"


def test_component_sends_the_rendered_spec_to_kubernetes() -> None:
    resources, _ = _register({})
    sent = next(r for r in resources if r.name == "vllm-server").inputs
    assert (sent["metadata"]["namespace"], sent["spec"]["podSelector"]) == ("inference", server()["spec"]["podSelector"])


def test_component_registers_no_policy_when_disabled() -> None:
    resources, built = _register({"enabled": False})
    assert ([r.typ for r in resources], built["component"].server) == ([TYPE_TOKEN], None)
