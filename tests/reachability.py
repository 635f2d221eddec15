"""A NetworkPolicy evaluator with Kubernetes' semantics, for the reachability tests.

kubernetes.io/docs/concepts/services-networking/network-policies: a connection passes when the source's
egress and the destination's ingress both admit it. A pod no policy of that direction selects is open in it;
a selected pod admits only what some rule of some selecting policy admits (rules are ORed). A rule with no
`from`/`to` admits every peer, with no `ports` every port. A peer's namespaceSelector and podSelector in one
entry are ANDed; a podSelector alone means the policy's own namespace; ipBlock matches addresses (cidr minus
`except`). A port is a number or a name resolved against the destination pod's container ports; `endPort`
makes a range; the protocol defaults to TCP. Hosts outside the cluster (or on the host network) have no policy
and are matched by ipBlock only.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class Pod:
    name: str
    namespace: str
    labels: dict[str, str]
    ip: str = "10.1.0.10"
    named_ports: dict[str, int] = field(default_factory=dict)  # containerPort names


@dataclass(frozen=True)
class Host:
    """An address with no NetworkPolicy: outside the cluster, or a host-network pod."""

    name: str
    ip: str


Endpoint = Pod | Host


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A LabelSelector: matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist), all ANDed."""
    if any(labels.get(key) != value for key, value in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        key, operator, values = expression["key"], expression["operator"], expression.get("values", [])
        present = key in labels
        matched = {
            "In": present and labels.get(key) in values,
            "NotIn": not present or labels.get(key) not in values,
            "Exists": present,
            "DoesNotExist": not present,
        }[operator]
        if not matched:
            return False
    return True


def in_block(block: dict[str, Any], ip: str) -> bool:
    address = ipaddress.ip_address(ip)
    cidr = ipaddress.ip_network(block["cidr"])
    if address.version != cidr.version or address not in cidr:
        return False
    return not any(address in ipaddress.ip_network(text) for text in block.get("except", []))


def peer_matches(peer: dict[str, Any], endpoint: Endpoint, policy_namespace: str) -> bool:
    if "ipBlock" in peer:
        return in_block(peer["ipBlock"], endpoint.ip)
    if not isinstance(endpoint, Pod):
        return False
    if "namespaceSelector" in peer:
        if not selects(peer["namespaceSelector"], {NAMESPACE_NAME_LABEL: endpoint.namespace}):
            return False
    elif endpoint.namespace != policy_namespace:
        return False
    return selects(peer.get("podSelector", {}), endpoint.labels)


def port_matches(rule_port: dict[str, Any], protocol: str, port: int, destination: Endpoint) -> bool:
    if rule_port.get("protocol", "TCP") != protocol:
        return False
    wanted = rule_port.get("port")
    if wanted is None:
        return True
    if isinstance(wanted, str):
        named = destination.named_ports.get(wanted) if isinstance(destination, Pod) else None
        return named == port
    return wanted <= port <= rule_port.get("endPort", wanted)


def rule_admits(
    rule: dict[str, Any], peers_key: str, peer: Endpoint, protocol: str, port: int, destination: Endpoint, namespace: str
) -> bool:
    peers = rule.get(peers_key) or []
    ports = rule.get("ports") or []
    peer_ok = not peers or any(peer_matches(p, peer, namespace) for p in peers)
    port_ok = not ports or any(port_matches(p, protocol, port, destination) for p in ports)
    return peer_ok and port_ok


def direction_admits(
    policies: list[dict[str, Any]], pod: Pod, kind: str, peer: Endpoint, protocol: str, port: int, destination: Endpoint
) -> bool:
    """Whether the policies selecting `pod` for `kind` (Ingress or Egress) admit the connection."""
    key, peers_key = ("ingress", "from") if kind == "Ingress" else ("egress", "to")
    selecting = [
        policy
        for policy in policies
        if policy["metadata"]["namespace"] == pod.namespace
        and selects(policy["spec"]["podSelector"], pod.labels)
        and kind in policy["spec"].get("policyTypes", ["Ingress"])
    ]
    if not selecting:
        return True
    return any(
        rule_admits(rule, peers_key, peer, protocol, port, destination, policy["metadata"]["namespace"])
        for policy in selecting
        for rule in policy["spec"].get(key) or []
    )


def allowed(policies: list[dict[str, Any]], source: Endpoint, destination: Endpoint, port: int, protocol: str = "TCP") -> bool:
    """The connection passes the source's egress and the destination's ingress."""
    egress = not isinstance(source, Pod) or direction_admits(
        policies, source, "Egress", destination, protocol, port, destination
    )
    ingress = not isinstance(destination, Pod) or direction_admits(
        policies, destination, "Ingress", source, protocol, port, destination
    )
    return egress and ingress
