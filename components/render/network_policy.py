"""NetworkPolicies (networking.k8s.io/v1) for the vLLM server pods and the model download Job.

Server pods: ingress on the API port from the callers (the gateway's or ingress controller's proxy pods
when exposure names one, the client namespaces, else the stack's own namespace), from the smoke-test pods and
from the Prometheus pods (vLLM serves /v1 and /metrics on one port; a NetworkPolicy cannot tell paths apart),
egress to cluster DNS only: the cache is filled by the download Job, so a serving pod never needs the hub.
Download pods: no ingress; egress to DNS and to the hub (hub_egress_cidrs minus the cluster ranges).
Smoke-test pods: no ingress; egress to DNS and the server pods' API port.
Pods are selected by the same three labels the Deployment and Job selectors use (plan/names.py).
Pure: plain dicts with Kubernetes' camelCase field names, no pulumi import.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from config.exposure import ExposureConfig
from config.network import NetworkPolicyConfig
from plan.identity import Identity
from plan.names import labels, selector_labels
from plan.routing import RoutingPlan
from plan.traffic import TrafficPlan

SERVER = "server"  # app.kubernetes.io/component of the vLLM server pods
MODEL_CACHE = "model-cache"  # app.kubernetes.io/component of the download Job's pods
SMOKE_TEST = "smoke-test"  # app.kubernetes.io/component of the smoke-test Job's pods
ROUTER = "router"  # app.kubernetes.io/component of the router pods (plan/routing.py)
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # set by the API server on every namespace
NO_EXPOSURE = ExposureConfig()  # the server policy without a gateway or ingress


def render_network_policies(
    identity: Identity, traffic: TrafficPlan, routing: RoutingPlan | None = None
) -> list[dict[str, Any]]:
    """The server, download-Job and (with the smoke test) smoke-test policies, in that order; none when
    network_policy.enabled is false. The server pods get the hub egress rule too when they download
    (per-replica volumes) or stream (object storage) the weights themselves (plan/traffic.py)."""
    policy, smoke_test = traffic.network_policy, traffic.smoke is not None
    if not policy.enabled:
        return []
    namespace, instance, port = identity.namespace, identity.instance, traffic.port
    objects = [
        render_server_policy(namespace, instance, port, policy, traffic.exposure, smoke_test, traffic.server_fetches_weights),
        render_model_cache_policy(namespace, instance, policy),
    ]
    if smoke_test:
        objects.append(render_smoke_test_policy(namespace, instance, port, policy))
    return objects if routing is None else with_router(objects, instance, routing, policy, traffic.exposure, smoke_test)


def render_server_policy(
    namespace: str,
    instance: str,
    port: int,
    policy: NetworkPolicyConfig,
    exposure: ExposureConfig = NO_EXPOSURE,
    smoke_test: bool = False,
    fetches_weights: bool = False,
) -> dict[str, Any]:
    api_port = [{"protocol": "TCP", "port": port}]
    ingress = [{"from": peers, "ports": api_port} for peers in _caller_peers(namespace, instance, policy, exposure, smoke_test)]
    if policy.prometheus_namespace is not None:
        prometheus = {
            **_namespace_peer([policy.prometheus_namespace]),
            "podSelector": {"matchLabels": dict(sorted(policy.prometheus_pod_selector.items()))},
        }
        ingress.append({"from": [prometheus], "ports": api_port})
    egress = [_dns_rule(policy), *(_hub_rules(policy) if fetches_weights else [])]
    return _policy(namespace, instance, SERVER, ingress=ingress, egress=egress)


def render_model_cache_policy(namespace: str, instance: str, policy: NetworkPolicyConfig) -> dict[str, Any]:
    return _policy(namespace, instance, MODEL_CACHE, ingress=[], egress=[_dns_rule(policy), *_hub_rules(policy)])


def _hub_rules(policy: NetworkPolicyConfig) -> list[dict[str, Any]]:
    if not (policy.hub_egress_cidrs and policy.hub_egress_ports):
        return []
    return [
        {
            "to": [_ip_block(cidr, policy.hub_egress_except_cidrs) for cidr in policy.hub_egress_cidrs],
            "ports": [{"protocol": "TCP", "port": port} for port in policy.hub_egress_ports],
        }
    ]


def render_smoke_test_policy(namespace: str, instance: str, port: int, policy: NetworkPolicyConfig) -> dict[str, Any]:
    server = {
        "to": [{"podSelector": {"matchLabels": selector_labels(instance, SERVER)}}],
        "ports": [{"protocol": "TCP", "port": port}],
    }
    return _policy(namespace, instance, SMOKE_TEST, ingress=[], egress=[_dns_rule(policy), server])


def _caller_peers(
    namespace: str, instance: str, policy: NetworkPolicyConfig, exposure: ExposureConfig, smoke_test: bool
) -> list[list[dict[str, Any]]]:
    """One peer list per ingress rule: the exposure's proxies, the client namespaces, and the smoke-test pods
    (unless every pod of the own namespace is already admitted). With neither exposure nor client namespaces
    the callers are the stack's own namespace."""
    rules: list[list[dict[str, Any]]] = []
    gateway, ingress = exposure.gateway, exposure.ingress
    if gateway is not None:
        proxies = {
            **_namespace_peer([gateway.proxy_namespace(namespace)]),
            "podSelector": {"matchLabels": dict(sorted(gateway.proxy_pod_selector().items()))},
        }
        rules.append([proxies, *(_ip_block(cidr, ()) for cidr in gateway.source_cidrs)])
    if ingress is not None:
        rules.append(
            [
                {
                    **_namespace_peer([ingress.controller_namespace]),
                    "podSelector": {"matchLabels": dict(sorted(ingress.controller_pod_selector.items()))},
                }
            ]
        )
    whole_namespace = not rules and not policy.client_namespaces and not policy.client_pod_selector
    if policy.client_namespaces or not rules:
        rules.append(_client_peers(policy))
    if smoke_test and not whole_namespace:
        rules.append([{"podSelector": {"matchLabels": selector_labels(instance, SMOKE_TEST)}}])
    return rules


def _policy(
    namespace: str, instance: str, component: str, ingress: list[dict[str, Any]], egress: list[dict[str, Any]]
) -> dict[str, Any]:
    """Both policy types are always listed, so an empty rule list denies that direction."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": f"{instance}-{component}", "namespace": namespace, "labels": labels(instance, component)},
        "spec": {
            "podSelector": {"matchLabels": selector_labels(instance, component)},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": ingress,
            "egress": egress,
        },
    }


def _client_peers(policy: NetworkPolicyConfig) -> list[dict[str, Any]]:
    """Client namespaces (or, when none are listed, the stack's own namespace), narrowed by pod labels."""
    pods = {"matchLabels": dict(sorted(policy.client_pod_selector.items()))}
    if not policy.client_namespaces:
        return [{"podSelector": pods}]
    return [{**_namespace_peer(policy.client_namespaces), "podSelector": pods}]


def _namespace_peer(namespaces: tuple[str, ...] | list[str]) -> dict[str, Any]:
    return {
        "namespaceSelector": {
            "matchExpressions": [{"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": sorted(set(namespaces))}]
        }
    }


def _dns_rule(policy: NetworkPolicyConfig) -> dict[str, Any]:
    """Cluster DNS pods, and NodeLocal DNSCache's addresses when it runs (host network: an ipBlock)."""
    dns_pods: list[dict[str, Any]] = [
        {
            **_namespace_peer([policy.dns_namespace]),
            "podSelector": {"matchLabels": dict(sorted(policy.dns_pod_selector.items()))},
        }
    ]
    if policy.node_local_dns:
        dns_pods += [{"ipBlock": {"cidr": str(ipaddress.ip_network(address))}} for address in policy.node_local_dns_addresses]
    return {"to": dns_pods, "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]}


def _ip_block(cidr: str, except_cidrs: tuple[str, ...]) -> dict[str, Any]:
    """An ipBlock; Kubernetes accepts only `except` ranges strictly inside the cidr, so the others are dropped."""
    network = ipaddress.ip_network(cidr)
    inside = [text for text in except_cidrs if _strictly_inside(ipaddress.ip_network(text), network)]
    return {"ipBlock": {"cidr": cidr, "except": inside}} if inside else {"ipBlock": {"cidr": cidr}}


def _strictly_inside(
    candidate: ipaddress.IPv4Network | ipaddress.IPv6Network, network: ipaddress.IPv4Network | ipaddress.IPv6Network
) -> bool:
    return candidate.version == network.version and candidate != network and candidate.subnet_of(network)  # type: ignore[arg-type]


def with_router(
    objects: list[dict[str, Any]],
    instance: str,
    routing: RoutingPlan,
    policy: NetworkPolicyConfig,
    exposure: ExposureConfig,
    smoke_test: bool,
) -> list[dict[str, Any]]:
    """With the router on: the server pods admit the router pods too, the smoke test calls the router, and the
    router's own policy is appended (callers and Prometheus in; DNS, the API server and the servers out)."""
    namespace = routing.namespace
    router_pods = {"podSelector": {"matchLabels": dict(routing.selector)}}
    for manifest in objects:
        component = manifest["metadata"]["labels"]["app.kubernetes.io/component"]
        if component == SERVER:
            manifest["spec"]["ingress"].append({"from": [router_pods], "ports": [_tcp(routing.server_port)]})
        if component == SMOKE_TEST:
            manifest["spec"]["egress"].append({"to": [router_pods], "ports": [_tcp(routing.port)]})
    return [*objects, render_router_policy(namespace, instance, routing, policy, exposure, smoke_test)]


def render_router_policy(
    namespace: str, instance: str, routing: RoutingPlan, policy: NetworkPolicyConfig, exposure: ExposureConfig, smoke_test: bool
) -> dict[str, Any]:
    api_port = [_tcp(routing.port)]
    callers = _caller_peers(namespace, instance, policy, exposure, smoke_test)
    ingress = [{"from": peers, "ports": api_port} for peers in callers]
    if policy.prometheus_namespace is not None:
        prometheus = {
            **_namespace_peer([policy.prometheus_namespace]),
            "podSelector": {"matchLabels": dict(sorted(policy.prometheus_pod_selector.items()))},
        }
        ingress.append({"from": [prometheus], "ports": [_tcp(routing.prometheus_port)]})
    servers = {"to": [{"podSelector": {"matchLabels": dict(routing.server_selector)}}], "ports": [_tcp(routing.server_port)]}
    api_server: dict[str, Any] = {"ports": [_tcp(port) for port in routing.api_server_ports]}
    if routing.api_server_cidrs:  # else any address on those ports: the API server's address is the cluster's
        api_server = {"to": [_ip_block(cidr, ()) for cidr in routing.api_server_cidrs], **api_server}
    return _policy(namespace, instance, ROUTER, ingress=ingress, egress=[_dns_rule(policy), servers, api_server])


def _tcp(port: int) -> dict[str, Any]:
    return {"protocol": "TCP", "port": port}
