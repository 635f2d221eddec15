"""Who reaches which path, read from the rendered HTTPRoute and server NetworkPolicy.

A small evaluator of the rendered policy (namespaceSelector on kubernetes.io/metadata.name, podSelector
matchLabels; a peer with only a podSelector means the policy's own namespace) decides which pods may open the
API port; a pod that may, reaches every path (a NetworkPolicy cannot see paths). A client outside the
cluster reaches only what the route forwards. The test lists every (source, path) pair and asserts that no
client reaches a path vLLM's API key does not guard.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from components.render.exposure import render_exposure
from config.exposure import is_guarded
from config.stack import StackConfig
from tests.factories import make_config
from tests.kubernetes_fixtures import plan_of
from tests.plan_parts import server_policy_of as render_server_policy

INSTANCE = "prod"
GATEWAY = {"name": "inference-gateway", "namespace": "gateway-system", "hostnames": ["llm.example.com"]}
PATHS = (
    "/v1/chat/completions",
    "/v1/completions",
    "/v1/models",
    "/v1/embeddings",
    "/invocations",
    "/tokenize",
    "/detokenize",
    "/pooling",
    "/score",
    "/rerank",
    "/metrics",
    "/health",
)


@dataclass(frozen=True)
class Source:
    name: str
    namespace: str | None  # None: outside the cluster, through the gateway
    labels: tuple[tuple[str, str], ...] = ()
    trusted: bool = False  # the gateway proxy, Prometheus, the smoke test: not clients


SOURCES = (
    Source("client on the internet", None),
    Source("gateway proxy", "gateway-system", (("gateway.networking.k8s.io/gateway-name", "inference-gateway"),), True),
    Source("other pod in the gateway namespace", "gateway-system", (("app", "debug"),)),
    Source("prometheus", "monitoring", (("app.kubernetes.io/name", "prometheus"),), True),
    Source("grafana", "monitoring", (("app.kubernetes.io/name", "grafana"),)),
    Source("pod in the stack's namespace", INSTANCE, (("app", "notebook"),)),
    Source(
        "smoke test",
        INSTANCE,
        (
            ("app.kubernetes.io/name", "vllm"),
            ("app.kubernetes.io/instance", INSTANCE),
            ("app.kubernetes.io/component", "smoke-test"),
        ),
        True,
    ),
    Source("pod in another namespace", "team-a", (("app", "web"),)),
)


def peer_admits(peer: dict[str, Any], source: Source, policy_namespace: str) -> bool:
    if source.namespace is None or "ipBlock" in peer:
        return False
    if "namespaceSelector" in peer:
        (expression,) = peer["namespaceSelector"]["matchExpressions"]
        assert (expression["key"], expression["operator"]) == ("kubernetes.io/metadata.name", "In")
        if source.namespace not in expression["values"]:
            return False
    elif source.namespace != policy_namespace:
        return False
    wanted = peer.get("podSelector", {}).get("matchLabels", {})
    return set(wanted.items()) <= set(source.labels)


def opens_port(policy: dict[str, Any], source: Source, port: int) -> bool:
    namespace = policy["metadata"]["namespace"]
    return any(
        rule["ports"] == [{"protocol": "TCP", "port": port}]
        and any(peer_admits(peer, source, namespace) for peer in rule["from"])
        for rule in policy["spec"]["ingress"]
    )


def reachable(cfg: StackConfig) -> set[tuple[str, str]]:
    """Every (source, path) pair that reaches the server."""
    plan = plan_of(cfg, INSTANCE)
    traffic = plan.traffic
    policy = render_server_policy(
        plan.identity.namespace,
        INSTANCE,
        traffic.port,
        traffic.network_policy,
        traffic.exposure,
        smoke_test=traffic.smoke is not None,
    )
    routed = {
        m["path"]["value"]
        for obj in render_exposure(plan.identity, traffic)
        if obj["kind"] == "HTTPRoute"
        for rule in obj["spec"]["rules"]
        for m in rule["matches"]
    }
    pairs = set()
    for source in SOURCES:
        direct = opens_port(policy, source, cfg.server.port)
        for path in PATHS:
            if direct or (source.namespace is None and path in routed):
                pairs.add((source.name, path))
    return pairs


def gateway_stack(**network_policy: Any) -> StackConfig:
    return make_config(security={"require_api_key": True}, exposure={"gateway": GATEWAY}, network_policy=network_policy)


def test_with_a_gateway_the_exact_reachability_table_holds() -> None:
    every = set(PATHS)
    expected = {("client on the internet", path) for path in ("/v1/chat/completions", "/v1/completions", "/v1/models")}
    expected |= {(name, path) for name in ("gateway proxy", "prometheus", "smoke test") for path in every}
    assert reachable(gateway_stack()) == expected


@pytest.mark.parametrize("source", [s for s in SOURCES if not s.trusted], ids=lambda s: s.name)
def test_with_a_gateway_no_client_reaches_a_path_the_api_key_does_not_guard(source: Source) -> None:
    assert {path for name, path in reachable(gateway_stack()) if name == source.name and not is_guarded(path)} == set()


def test_with_a_gateway_grafana_in_the_monitoring_namespace_cannot_open_the_port() -> None:
    assert not any(name == "grafana" for name, _ in reachable(gateway_stack()))


def test_without_a_gateway_only_the_stacks_namespace_and_prometheus_reach_the_server() -> None:
    sources = {name for name, _ in reachable(make_config())}
    assert sources == {"pod in the stack's namespace", "smoke test", "prometheus"}


def test_named_client_namespaces_reach_every_path_directly_which_the_docs_say() -> None:
    pairs = reachable(make_config(network_policy={"client_namespaces": ["team-a"]}))
    assert ("pod in another namespace", "/invocations") in pairs
