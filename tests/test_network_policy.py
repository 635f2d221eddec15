"""NetworkPolicies: API port only from clients and Prometheus, DNS-only egress for servers, hub egress for the cache Job."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pulumi
import pytest
from pydantic import BaseModel, Field, ValidationError

from components.network_policy import TYPE_TOKEN, NetworkPolicies, NetworkPoliciesArgs
from components.render.network_policy import MODEL_CACHE, SERVER
from config.errors import ConfigError
from config.exposure import ExposureConfig
from config.messages import issue_from_pydantic
from config.network import NetworkPolicyConfig
from plan.flows import ROLLOUT_GATE
from plan.names import labels, selector_labels
from tests.harness import resolve, run_program
from tests.plan_parts import model_cache_policy_of as render_model_cache_policy
from tests.plan_parts import policies_of as policies
from tests.plan_parts import server_policy_of as render_server_policy
from tests.plan_parts import traffic_of

NEWEST_KUBERNETES = kubernetes_validate.latest_version()
DNS_PORTS = [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]
POLICIES: dict[str, dict[str, Any]] = {
    "defaults": {},
    "client namespaces and pods": {"client_namespaces": ["gateway", "apps"], "client_pod_selector": {"app": "web"}},
    "no prometheus": {"prometheus_namespace": None},
    "no hub": {"hub_egress_cidrs": []},
    "in-cluster mirror": {"hub_egress_cidrs": ["10.20.0.0/16"], "hub_egress_ports": [443, 8443]},
}


def component_args(namespace: pulumi.Input[str], instance: str, port: int, policy: NetworkPolicyConfig) -> NetworkPoliciesArgs:
    identity, traffic = traffic_of("inference", instance, port, policy)
    return NetworkPoliciesArgs(identity, traffic, namespace)


def policy(**fields: Any) -> NetworkPolicyConfig:
    return NetworkPolicyConfig.model_validate(fields)


def server(**fields: Any) -> dict[str, Any]:
    return render_server_policy("inference", "prod", 8000, policy(**fields))


def model_cache(**fields: Any) -> dict[str, Any]:
    return render_model_cache_policy("inference", "prod", policy(**fields))


@pytest.mark.parametrize("fields", POLICIES.values(), ids=POLICIES.keys())
def test_every_rendered_policy_passes_strict_schema_validation_for_the_newest_kubernetes(fields: dict[str, Any]) -> None:
    for manifest in policies("inference", "prod", 8000, policy(**fields)):
        kubernetes_validate.validate(manifest, NEWEST_KUBERNETES, strict=True)


def test_network_policies_are_on_by_default() -> None:
    assert [m["metadata"]["name"] for m in policies("ns", "prod", 8000, NetworkPolicyConfig())] == [
        "prod-server",
        "prod-model-cache",
        "prod-rollout-gate",
    ]


def test_no_policy_is_rendered_when_disabled() -> None:
    assert policies("ns", "prod", 8000, policy(enabled=False)) == []


def test_server_policy_selects_only_this_instances_server_pods() -> None:
    assert server()["spec"]["podSelector"] == {
        "matchLabels": {
            "app.kubernetes.io/name": "vllm",
            "app.kubernetes.io/instance": "prod",
            "app.kubernetes.io/component": "server",
        }
    }


def test_server_policy_governs_both_directions_so_anything_unlisted_is_denied() -> None:
    assert server()["spec"]["policyTypes"] == ["Ingress", "Egress"]


def test_every_server_ingress_rule_opens_only_the_api_port() -> None:
    assert [rule["ports"] for rule in server()["spec"]["ingress"]] == [[{"protocol": "TCP", "port": 8000}]] * 2


def test_without_client_namespaces_only_pods_in_the_stacks_namespace_may_call_the_api() -> None:
    assert server()["spec"]["ingress"][0]["from"] == [{"podSelector": {"matchLabels": {}}}]


def test_client_namespaces_and_pod_labels_must_both_match_one_peer() -> None:
    peers = server(client_namespaces=["gateway", "apps"], client_pod_selector={"app": "web"})["spec"]["ingress"][0]["from"]
    assert peers == [
        {
            "namespaceSelector": {
                "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["apps", "gateway"]}]
            },
            "podSelector": {"matchLabels": {"app": "web"}},
        }
    ]


def test_only_the_prometheus_pods_of_the_prometheus_namespace_may_reach_the_port_that_serves_metrics() -> None:
    assert server()["spec"]["ingress"][1]["from"] == [
        {
            "namespaceSelector": {
                "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["monitoring"]}]
            },
            "podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}},
        }
    ]


def test_no_prometheus_rule_when_prometheus_namespace_is_null() -> None:
    assert len(server(prometheus_namespace=None)["spec"]["ingress"]) == 1


def test_server_egress_is_cluster_dns_only() -> None:
    assert server()["spec"]["egress"] == [
        {
            "to": [
                {
                    "namespaceSelector": {
                        "matchExpressions": [
                            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["kube-system"]}
                        ]
                    },
                    "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                }
            ],
            "ports": DNS_PORTS,
        }
    ]


def test_model_cache_policy_selects_the_download_job_pods() -> None:
    assert model_cache()["spec"]["podSelector"] == {
        "matchLabels": {
            "app.kubernetes.io/name": "vllm",
            "app.kubernetes.io/instance": "prod",
            "app.kubernetes.io/component": "model-cache",
        }
    }


def test_model_cache_pods_accept_no_ingress() -> None:
    spec = model_cache()["spec"]
    assert (spec["policyTypes"], spec["ingress"]) == (["Ingress", "Egress"], [])


def test_model_cache_may_reach_the_hub_on_443_but_not_cluster_internal_ranges() -> None:
    assert model_cache()["spec"]["egress"][1] == {
        "to": [
            {
                "ipBlock": {
                    "cidr": "0.0.0.0/0",
                    "except": ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16"],
                }
            },
            {"ipBlock": {"cidr": "::/0", "except": ["fc00::/7", "fe80::/10"]}},
        ],
        "ports": [{"protocol": "TCP", "port": 443}],
    }


def test_except_ranges_outside_a_hub_cidr_are_left_out_of_its_ip_block() -> None:
    assert model_cache(hub_egress_cidrs=["10.20.0.0/16"])["spec"]["egress"][1]["to"] == [{"ipBlock": {"cidr": "10.20.0.0/16"}}]


def test_model_cache_egress_is_dns_only_without_hub_cidrs() -> None:
    assert [rule["ports"] for rule in model_cache(hub_egress_cidrs=[])["spec"]["egress"]] == [DNS_PORTS]


def test_policies_select_pods_by_the_labels_the_deployment_and_job_selectors_use() -> None:
    selectors = [m["spec"]["podSelector"]["matchLabels"] for m in policies("ns", "prod", 8000, NetworkPolicyConfig())]
    assert selectors == [selector_labels("prod", c) for c in (SERVER, MODEL_CACHE, ROLLOUT_GATE)]


def test_policies_carry_the_stacks_common_labels() -> None:
    metadata = [m["metadata"]["labels"] for m in policies("ns", "prod", 8000, NetworkPolicyConfig())]
    assert metadata == [labels("prod", c) for c in (SERVER, MODEL_CACHE, ROLLOUT_GATE)]


@pytest.mark.parametrize(
    ("fields", "key", "fragment"),
    [
        ({"hub_egress_cidrs": ["10.0.0.1/8"]}, "network_policy.hub_egress_cidrs", "'10.0.0.1/8' is not a network in CIDR"),
        (
            {"client_pod_selector": {"app name": "web"}},
            "network_policy.client_pod_selector",
            "'app name' is not a Kubernetes label key",
        ),
        (
            {"dns_pod_selector": {"k8s-app": "kube dns"}},
            "network_policy.dns_pod_selector",
            "'kube dns' (label k8s-app) is not a Kubernetes label value",
        ),
        ({"client_namespaces": ["Gateway"]}, "network_policy.client_namespaces[0]", "'Gateway' does not match the pattern"),
        ({"hub_egress_ports": [0]}, "network_policy.hub_egress_ports[0]", "0 is out of range: must be ≥ 1."),
        (
            {"client_namespace": ["gateway"]},
            "network_policy.client_namespace",
            "unknown key (did you mean `client_namespaces`?)",
        ),
    ],
)
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
        built["component"] = NetworkPolicies("vllm", component_args("inference", "prod", 8000, policy(**fields)))

    return run_program(build).resources, built


def test_component_registers_one_policy_per_pod_role_named_after_the_component() -> None:
    resources, _ = _register({})
    policies = sorted(r.name for r in resources if r.typ == "kubernetes:networking.k8s.io/v1:NetworkPolicy")
    assert policies == ["vllm-model-cache", "vllm-rollout-gate", "vllm-server"]


def test_component_uses_its_own_type_token() -> None:
    resources, _ = _register({})
    assert [r.typ for r in resources if not r.custom] == [TYPE_TOKEN]


def test_component_policies_are_children_of_the_component() -> None:
    _, built = _register({})
    assert f"{TYPE_TOKEN}$kubernetes:networking.k8s.io/v1:NetworkPolicy::vllm-server" in resolve(built["component"].server.urn)  # type: ignore[union-attr]


def test_component_accepts_the_namespace_as_an_output() -> None:
    def build() -> None:
        namespace = pulumi.Output.from_input("from-output")
        NetworkPolicies("vllm", component_args(namespace, "prod", 8000, NetworkPolicyConfig()))

    sent = next(r for r in run_program(build).resources if r.name == "vllm-server").inputs
    assert sent["metadata"]["namespace"] == "from-output"


def test_component_sends_the_rendered_spec_to_kubernetes() -> None:
    resources, _ = _register({})
    sent = next(r for r in resources if r.name == "vllm-server").inputs
    assert (sent["metadata"]["namespace"], sent["spec"]["podSelector"]) == ("inference", server()["spec"]["podSelector"])


def test_component_registers_no_policy_when_disabled() -> None:
    resources, built = _register({"enabled": False})
    assert ([r.typ for r in resources], built["component"].server) == ([TYPE_TOKEN], None)


# The policy follows the exposure (config/exposure.py), and node-local DNS.


def exposure_of(**fields: Any) -> ExposureConfig:
    return ExposureConfig.model_validate(fields)


GATEWAY_FIELDS = {"name": "inference-gateway", "namespace": "gateway-system"}


def gateway_server(gateway: dict[str, Any] | None = None, smoke_test: bool = True, **fields: Any) -> dict[str, Any]:
    return render_server_policy(
        "inference", "prod", 8000, policy(**fields), exposure_of(gateway={**GATEWAY_FIELDS, **(gateway or {})}), smoke_test
    )


def test_with_a_gateway_only_its_proxy_pods_smoke_test_pods_and_prometheus_may_call_the_port() -> None:
    assert [rule["from"] for rule in gateway_server()["spec"]["ingress"]] == [
        [
            {
                "namespaceSelector": {
                    "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["gateway-system"]}]
                },
                "podSelector": {"matchLabels": {"gateway.networking.k8s.io/gateway-name": "inference-gateway"}},
            }
        ],
        [{"podSelector": {"matchLabels": selector_labels("prod", "smoke-test")}}],
        [
            {
                "namespaceSelector": {
                    "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["monitoring"]}]
                },
                "podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}},
            }
        ],
    ]


def test_the_gateway_proxy_namespace_and_labels_are_configurable() -> None:
    peer = gateway_server(
        {
            "pods_namespace": "envoy-gateway-system",
            "pod_selector": {"gateway.envoyproxy.io/owning-gateway-name": "inference-gateway"},
        },
    )["spec"]["ingress"][0]["from"][0]
    assert peer == {
        "namespaceSelector": {
            "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["envoy-gateway-system"]}]
        },
        "podSelector": {"matchLabels": {"gateway.envoyproxy.io/owning-gateway-name": "inference-gateway"}},
    }


def test_a_gateway_in_the_stacks_namespace_is_looked_for_there() -> None:
    peer = render_server_policy("inference", "prod", 8000, policy(), exposure_of(gateway={"name": "gw"}))["spec"]["ingress"][0][
        "from"
    ][0]
    assert peer["namespaceSelector"]["matchExpressions"][0]["values"] == ["inference"]


def test_a_managed_gateways_proxy_subnet_is_admitted_as_an_ip_block() -> None:
    assert gateway_server({"source_cidrs": ["10.129.0.0/23"]})["spec"]["ingress"][0]["from"][1] == {
        "ipBlock": {"cidr": "10.129.0.0/23"}
    }


def test_client_namespaces_stay_admitted_beside_a_gateway_when_named() -> None:
    rules = gateway_server(client_namespaces=["apps"])["spec"]["ingress"]
    assert rules[1]["from"][0]["namespaceSelector"]["matchExpressions"][0]["values"] == ["apps"]


def test_with_an_ingress_only_the_controller_pods_may_call_the_port() -> None:
    exposure = exposure_of(
        ingress={
            "class_name": "nginx",
            "host": "a.example.com",
            "controller_namespace": "ingress-nginx",
            "controller_pod_selector": {"app.kubernetes.io/name": "ingress-nginx"},
        }
    )
    rules = render_server_policy("inference", "prod", 8000, policy(), exposure)["spec"]["ingress"]
    assert rules[0]["from"] == [
        {
            "namespaceSelector": {
                "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["ingress-nginx"]}]
            },
            "podSelector": {"matchLabels": {"app.kubernetes.io/name": "ingress-nginx"}},
        }
    ]


def test_without_exposure_the_smoke_test_still_gets_its_own_rule_so_its_flow_is_explicit() -> None:
    rules = render_server_policy("inference", "prod", 8000, policy(), smoke_test=True)["spec"]["ingress"]
    assert [rule["from"] for rule in rules][:2] == [
        [{"podSelector": {"matchLabels": {}}}],
        [{"podSelector": {"matchLabels": selector_labels("prod", "smoke-test")}}],
    ]


def test_node_local_dns_is_allowed_at_its_link_local_address_when_configured() -> None:
    assert server(node_local_dns=True)["spec"]["egress"][0]["to"][1:] == [{"ipBlock": {"cidr": "169.254.20.10/32"}}]


def test_node_local_dns_addresses_apply_to_the_download_job_too() -> None:
    assert model_cache(node_local_dns=True, node_local_dns_addresses=["169.254.20.10", "10.96.0.10"])["spec"]["egress"][0][
        "to"
    ][1:] == [{"ipBlock": {"cidr": "169.254.20.10/32"}}, {"ipBlock": {"cidr": "10.96.0.10/32"}}]


def test_without_node_local_dns_only_the_dns_pods_are_reachable() -> None:
    assert len(server()["spec"]["egress"][0]["to"]) == 1


def test_a_bad_node_local_dns_address_is_refused_with_the_fix() -> None:
    with pytest.raises(ValidationError) as error:
        policy(node_local_dns_addresses=["169.254.20.300"])
    assert "'169.254.20.300' is not an IP address" in str(error.value)


def test_the_smoke_test_pods_accept_nothing_and_reach_only_dns_and_the_server_port() -> None:
    smoke = policies("inference", "prod", 8000, policy(), smoke_test=True)[2]
    assert (smoke["metadata"]["name"], smoke["spec"]["ingress"], smoke["spec"]["egress"][0]) == (
        "prod-smoke-test",
        [],
        {
            "to": [{"podSelector": {"matchLabels": selector_labels("prod", "server")}}],
            "ports": [{"protocol": "TCP", "port": 8000}],
        },
    )


@pytest.mark.parametrize("smoke_test", [True, False])
def test_policies_with_a_gateway_and_node_local_dns_pass_strict_schema_validation(smoke_test: bool) -> None:
    exposure = exposure_of(gateway={**GATEWAY_FIELDS, "source_cidrs": ["10.129.0.0/23"]})
    for manifest in policies("inference", "prod", 8000, policy(node_local_dns=True), exposure, smoke_test):
        kubernetes_validate.validate(manifest, NEWEST_KUBERNETES, strict=True)
