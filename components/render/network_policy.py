"""NetworkPolicies (networking.k8s.io/v1) for the vLLM server pods and the model download Job.

Server pods: ingress on the API port from the client namespaces/pods and from the Prometheus namespace
(vLLM serves /v1 and /metrics on one port; a NetworkPolicy cannot tell paths apart), egress to cluster
DNS only: the cache is filled by the download Job, so a serving pod never needs the model hub.
Download pods: no ingress; egress to DNS and to the hub (hub_egress_cidrs minus the cluster ranges).
Pods are selected by the same three labels the Deployment and Job selectors use (render/names.py).
Pure: plain dicts with Kubernetes' camelCase field names, no pulumi import.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from components.render.names import labels, selector_labels
from config.network import NetworkPolicyConfig

SERVER = "server"  # app.kubernetes.io/component of the vLLM server pods
MODEL_CACHE = "model-cache"  # app.kubernetes.io/component of the download Job's pods
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # set by the API server on every namespace


def render_network_policies(namespace: str, instance: str, port: int, policy: NetworkPolicyConfig,
                            server_fetches_weights: bool = False) -> list[dict[str, Any]]:
    """The server and download-Job policies, in that order; none when network_policy.enabled is false.
    `server_fetches_weights`: the server pods download (per-replica volumes) or stream (object storage) the
    weights themselves, so they get the hub egress rule too (config/delivery.py)."""
    if not policy.enabled:
        return []
    return [
        render_server_policy(namespace, instance, port, policy, server_fetches_weights),
        render_model_cache_policy(namespace, instance, policy),
    ]


def render_server_policy(namespace: str, instance: str, port: int, policy: NetworkPolicyConfig,
                         fetches_weights: bool = False) -> dict[str, Any]:
    api_port = [{"protocol": "TCP", "port": port}]
    ingress = [{"from": _client_peers(policy), "ports": api_port}]
    if policy.prometheus_namespace is not None:
        ingress.append({"from": [_namespace_peer([policy.prometheus_namespace])], "ports": api_port})
    egress = [_dns_rule(policy), *(_hub_rules(policy) if fetches_weights else [])]
    return _policy(namespace, instance, SERVER, ingress=ingress, egress=egress)


def render_model_cache_policy(namespace: str, instance: str, policy: NetworkPolicyConfig) -> dict[str, Any]:
    return _policy(namespace, instance, MODEL_CACHE, ingress=[], egress=[_dns_rule(policy), *_hub_rules(policy)])


def _hub_rules(policy: NetworkPolicyConfig) -> list[dict[str, Any]]:
    if not (policy.hub_egress_cidrs and policy.hub_egress_ports):
        return []
    return [{
        "to": [_ip_block(cidr, policy.hub_egress_except_cidrs) for cidr in policy.hub_egress_cidrs],
        "ports": [{"protocol": "TCP", "port": port} for port in policy.hub_egress_ports],
    }]


def _policy(namespace: str, instance: str, component: str, ingress: list[dict[str, Any]],
            egress: list[dict[str, Any]]) -> dict[str, Any]:
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
    return {"namespaceSelector": {"matchExpressions": [
        {"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": sorted(set(namespaces))}]}}


def _dns_rule(policy: NetworkPolicyConfig) -> dict[str, Any]:
    dns_pods = {
        **_namespace_peer([policy.dns_namespace]),
        "podSelector": {"matchLabels": dict(sorted(policy.dns_pod_selector.items()))},
    }
    return {"to": [dns_pods], "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]}


def _ip_block(cidr: str, except_cidrs: tuple[str, ...]) -> dict[str, Any]:
    """An ipBlock; Kubernetes accepts only `except` ranges strictly inside the cidr, so the others are dropped."""
    network = ipaddress.ip_network(cidr)
    inside = [text for text in except_cidrs if _strictly_inside(ipaddress.ip_network(text), network)]
    return {"ipBlock": {"cidr": cidr, "except": inside}} if inside else {"ipBlock": {"cidr": cidr}}


def _strictly_inside(candidate: ipaddress.IPv4Network | ipaddress.IPv6Network,
                     network: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    return candidate.version == network.version and candidate != network and candidate.subnet_of(network)  # type: ignore[arg-type]
