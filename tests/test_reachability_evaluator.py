"""The evaluator (tests/reachability.py) follows Kubernetes' NetworkPolicy semantics, one rule at a time
(kubernetes.io/docs/concepts/services-networking/network-policies; docs/sources.md §S8)."""

from __future__ import annotations

from typing import Any

from tests.reachability import Host, Pod, allowed

CLIENT = Pod("client", "apps", {"app": "web"}, "10.1.0.5")
OTHER_CLIENT = Pod("other", "apps", {"app": "batch"}, "10.1.0.6")
FOREIGN = Pod("foreign", "team-a", {"app": "web"}, "10.1.0.7")
SERVER = Pod("server", "inference", {"app": "vllm"}, "10.1.0.8", {"http": 8000})


def ingress_policy(*rules: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {"name": "server", "namespace": "inference"},
        "spec": {"podSelector": {"matchLabels": {"app": "vllm"}}, "policyTypes": ["Ingress"], "ingress": list(rules)},
    }


def egress_policy(*rules: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {"name": "client", "namespace": "apps"},
        "spec": {"podSelector": {}, "policyTypes": ["Egress"], "egress": list(rules)},
    }


IN_APPS = {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["apps"]}]}


def test_an_unselected_pod_is_open() -> None:
    assert allowed([], FOREIGN, SERVER, 8000)


def test_a_namespace_and_pod_selector_in_one_peer_must_both_match() -> None:
    policy = ingress_policy({"from": [{"namespaceSelector": IN_APPS, "podSelector": {"matchLabels": {"app": "web"}}}]})
    assert [allowed([policy], pod, SERVER, 8000) for pod in (CLIENT, OTHER_CLIENT, FOREIGN)] == [True, False, False]


def test_a_namespace_and_pod_selector_in_two_peers_match_either() -> None:
    policy = ingress_policy({"from": [{"namespaceSelector": IN_APPS}, {"podSelector": {"matchLabels": {"app": "web"}}}]})
    assert [allowed([policy], pod, SERVER, 8000) for pod in (CLIENT, OTHER_CLIENT, FOREIGN)] == [True, True, False]


def test_a_pod_selector_alone_means_the_policys_own_namespace() -> None:
    policy = ingress_policy({"from": [{"podSelector": {"matchLabels": {"app": "web"}}}]})
    assert not allowed([policy], CLIENT, SERVER, 8000)


def test_an_ip_block_excepts_its_carve_outs() -> None:
    policy = egress_policy({"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["169.254.0.0/16"]}}]})
    assert allowed([policy], CLIENT, Host("hub", "18.0.0.1"), 443)
    assert not allowed([policy], CLIENT, Host("metadata", "169.254.169.254"), 80)


def test_an_end_port_admits_the_range_and_nothing_past_it() -> None:
    policy = ingress_policy({"ports": [{"protocol": "TCP", "port": 8000, "endPort": 8010}]})
    assert [allowed([policy], CLIENT, SERVER, port) for port in (7999, 8000, 8010, 8011)] == [False, True, True, False]


def test_a_named_port_resolves_against_the_destination_pod() -> None:
    policy = ingress_policy({"ports": [{"protocol": "TCP", "port": "http"}]})
    assert allowed([policy], CLIENT, SERVER, 8000) and not allowed([policy], CLIENT, SERVER, 9000)


def test_the_protocol_must_match() -> None:
    policy = ingress_policy({"ports": [{"protocol": "UDP", "port": 8000}]})
    assert not allowed([policy], CLIENT, SERVER, 8000, "TCP")


def test_egress_and_ingress_must_both_admit() -> None:
    closed_egress = egress_policy()
    assert not allowed([closed_egress], CLIENT, SERVER, 8000)
    assert not allowed([closed_egress, ingress_policy({})], CLIENT, SERVER, 8000)
    assert allowed([ingress_policy({})], CLIENT, SERVER, 8000)
