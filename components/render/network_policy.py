"""NetworkPolicies (networking.k8s.io/v1), rendered from the plan's list of flows (plan/flows.py) and nothing else.

One policy per own component (server, model-cache, smoke-test, router, image-prepull), listing both policy types
so an empty rule list denies that direction. A flow whose destination is the component becomes one of its ingress rules; a flow
whose source is the component one of its egress rules; a flow between two own components both.
Pods are selected by the same three labels the workload selectors use (plan/names.py).
Pure: plain dicts with Kubernetes' camelCase field names, no pulumi import.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from plan.flows import MODEL_CACHE, SERVER, SMOKE_TEST, Addresses, Flow, Own, Peer, Pods, Port
from plan.identity import Identity
from plan.names import labels, selector_labels
from plan.traffic import TrafficPlan

__all__ = ["MODEL_CACHE", "SERVER", "SMOKE_TEST", "render_network_policies"]
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # set by the API server on every namespace


def render_network_policies(identity: Identity, traffic: TrafficPlan) -> list[dict[str, Any]]:
    """One policy per component of the flows plan, in its order; none when network_policy.enabled is false."""
    flows = traffic.flows
    if not flows.enabled:
        return []
    return [render_policy(identity.namespace, identity.instance, component, flows.flows) for component in flows.components]


def render_policy(namespace: str, instance: str, component: str, flows: tuple[Flow, ...]) -> dict[str, Any]:
    here = Own(component)
    ingress = [_rule("from", flow.source, flow, instance) for flow in flows if flow.destination == here]
    egress = [_rule("to", flow.destination, flow, instance) for flow in flows if flow.source == here]
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


def _rule(direction: str, peers: Own | tuple[Peer, ...], flow: Flow, instance: str) -> dict[str, Any]:
    rendered = [_own_peer(peers, instance)] if isinstance(peers, Own) else [_peer(peer) for peer in peers]
    return {direction: rendered, "ports": [_port(port) for port in flow.ports]}


def _own_peer(own: Own, instance: str) -> dict[str, Any]:
    return {"podSelector": {"matchLabels": selector_labels(instance, own.component)}}


def _peer(peer: Peer) -> dict[str, Any]:
    if isinstance(peer, Addresses):
        return _ip_block(peer.cidr, peer.except_cidrs)
    return _pods_peer(peer)


def _pods_peer(peer: Pods) -> dict[str, Any]:
    """namespaceSelector and podSelector in one peer: both must match."""
    rendered: dict[str, Any] = {}
    if peer.namespaces is not None:
        expression = {"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": list(peer.namespaces)}
        rendered["namespaceSelector"] = {"matchExpressions": [expression]}
    rendered["podSelector"] = {"matchLabels": dict(peer.labels)}
    return rendered


def _port(port: Port) -> dict[str, Any]:
    rendered: dict[str, Any] = {"protocol": port.protocol}
    if port.port is not None:
        rendered["port"] = port.port
    if port.end_port is not None:
        rendered["endPort"] = port.end_port
    return rendered


def _ip_block(cidr: str, except_cidrs: tuple[str, ...]) -> dict[str, Any]:
    """An ipBlock; Kubernetes accepts only `except` ranges strictly inside the cidr, so the others are dropped."""
    network = ipaddress.ip_network(cidr)
    inside = [text for text in except_cidrs if _strictly_inside(ipaddress.ip_network(text), network)]
    return {"ipBlock": {"cidr": cidr, "except": inside}} if inside else {"ipBlock": {"cidr": cidr}}


def _strictly_inside(
    candidate: ipaddress.IPv4Network | ipaddress.IPv6Network, network: ipaddress.IPv4Network | ipaddress.IPv6Network
) -> bool:
    return candidate.version == network.version and candidate != network and candidate.subnet_of(network)  # type: ignore[arg-type]
