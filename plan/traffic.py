"""The traffic path, decided once: how clients reach the server (exposure, the Service and client URLs), who
may reach it (the network-policy inputs) and the post-deploy smoke test. Pure.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from config.delivery import ObjectStorageConfig
from config.exposure import ExposureConfig, GatewayConfig, IngressConfig
from config.network import NetworkPolicyConfig
from config.routing import RoutingConfig
from config.stack import StackConfig
from plan.delivery import DeliveryPlan
from plan.egress import BucketEndpoint, bucket_endpoint
from plan.flows import SERVER, FlowsPlan, Interceptor, pods, resolve_flows
from plan.identity import Identity
from plan.multinode import api_selector
from plan.names import cache_key, service_host
from plan.security import PodSecurity
from plan.zero import ZeroPlan

SCRIPT_PATH = Path(__file__).resolve().parents[1] / "smoke" / "check.py"
IMAGE_PULL_SECONDS = 300  # the smoke test's small python image, pulled on a CPU node
NO_ROUTING = RoutingConfig()
RETRIES = 1  # one retry: a connection reset while the last old pod drains is not a failed deploy


@dataclass(frozen=True)
class SmokePlan:
    """The post-deploy check: smoke/check.py sends one chat completion to the server."""

    image: str
    timeout_seconds: int  # the one request's bound
    max_tokens: int
    served_model_name: str
    require_api_key: bool  # the check reads the key file
    key: str  # what the answer depends on: a new key names a new ConfigMap and Job, which runs again
    name: str  # <instance>-smoke-test-<key>: the ConfigMap and the Job
    deadline_seconds: int  # the Job's activeDeadlineSeconds
    security: PodSecurity  # the Job's pod security (components/render/security.py)
    host: str | None = None  # the Host header it sends: the HTTPScaledObject's, through the interceptor


@dataclass(frozen=True)
class TrafficPlan:
    exposure: ExposureConfig
    port: int  # the server's container and Service port: the OpenAI API and /metrics
    api_selector: dict[str, str]  # the pods serving it (plan/multinode.py api_selector): Service, InferencePool
    served_model_name: str
    require_api_key: bool
    service_url: str  # the in-cluster Service clients and the smoke test call: the router's when routing is on
    backend_service: str  # the Service the route or Ingress forwards to: the router's when routing is on
    backend_port: int
    backend_namespace: str | None  # the backend's namespace when not the stack's: the add-on's interceptor
    route_host: str | None  # the Host the route rewrites requests to, which the interceptor routes on
    routed: bool  # routing.enabled: callers reach the router, the router reaches the servers
    client_url: str  # what clients use: the route's first hostname, the Ingress host, or the Service
    network_policy: NetworkPolicyConfig  # the client namespaces the stack's report names
    health_check_policy: bool  # GKE Gateway: a HealthCheckPolicy points the load balancer's check at /health
    route_timeout_seconds: int | None  # the HTTPRoute rule's timeouts.request, where the Gateway accepts the field
    backend_timeout_seconds: int | None  # GKE Gateway: the GCPBackendPolicy's timeoutSec, which bounds a request there
    ingress_annotations: dict[str, str]  # the Ingress's: ingress-nginx's proxy timeouts and request body bound
    flows: FlowsPlan  # every flow the NetworkPolicies admit (plan/flows.py)
    smoke: SmokePlan | None  # None when smoke_test.enabled is false

    @property
    def exposed(self) -> bool:
        return self.exposure.kind != "none"


@cache
def smoke_script() -> str:
    return SCRIPT_PATH.read_text(encoding="utf-8")


def launch_of(args: tuple[str, ...], env: dict[str, str]) -> tuple[str, ...]:
    """The server's rendered command line and environment (plan/server.py args, env), as one sequence."""
    return (*args, *(f"{name}={value}" for name, value in sorted(env.items())))


def smoke_key(cfg: StackConfig, launch: tuple[str, ...]) -> str:
    """What the smoke test's answer depends on: model, revision, served name, vLLM image, smoke image, script,
    bounds, and the server's command line and environment (`launch`: launch_of), so a tokenizer, context or
    engine flag change reruns it."""
    script = hashlib.sha256(smoke_script().encode()).hexdigest()
    smoke = cfg.smoke_test
    return cache_key(
        *launch,
        cfg.model.id,
        cfg.model.revision,
        cfg.served_model_name,
        cfg.vllm.image_ref,
        smoke.image,
        script,
        str(smoke.timeout_seconds),
        str(smoke.max_tokens),
        str(cfg.security.require_api_key),
    )


def smoke_deadline_seconds(timeout_seconds: int) -> int:
    """activeDeadlineSeconds: every attempt's bound plus a minute each, and the image pull."""
    return (RETRIES + 1) * (timeout_seconds + 60) + IMAGE_PULL_SECONDS


def smoke_timeout_seconds(timeout_seconds: int, zero: ZeroPlan | None) -> int:
    """The one request's bound: through the interceptor at zero it first waits out the cold start."""
    return timeout_seconds + (zero.condition_wait_seconds if zero is not None and zero.at_zero else 0)


def resolve_smoke(
    cfg: StackConfig, instance: str, security: PodSecurity, launch: tuple[str, ...], zero: ZeroPlan | None = None
) -> SmokePlan:
    """`launch`: the server's command line and environment (launch_of); `zero`: the interceptor it goes through."""
    key = smoke_key(cfg, launch)
    timeout = smoke_timeout_seconds(cfg.smoke_test.timeout_seconds, zero)
    return SmokePlan(
        image=cfg.smoke_test.image,
        timeout_seconds=timeout,
        max_tokens=cfg.smoke_test.max_tokens,
        served_model_name=cfg.served_model_name,
        require_api_key=cfg.security.require_api_key,
        key=key,
        name=f"{instance}-smoke-test-{key}",
        deadline_seconds=smoke_deadline_seconds(timeout),
        security=security,
        host=zero.route_host if zero is not None else None,
    )


def backend(identity: Identity, port: int, routing: RoutingConfig) -> tuple[str, int]:
    """The Service callers reach: the router's when routing is on, else the server's."""
    return (identity.names.router, routing.port) if routing.enabled else (identity.names.server, port)


def service_url(identity: Identity, port: int, routing: RoutingConfig = NO_ROUTING, zero: ZeroPlan | None = None) -> str:
    """The in-cluster URL callers use: the interceptor's with the add-on, else the router's or the server's."""
    if zero is not None:
        return zero.interceptor_url
    name, backend_port = backend(identity, port, routing)
    return f"http://{service_host(name, identity.namespace)}:{backend_port}"


def gateway_ref(gateway: GatewayConfig, namespace: str) -> str:
    """namespace/name of the Gateway: its own namespace, or the stack's."""
    return f"{gateway.namespace or namespace}/{gateway.name}"


def client_url(
    exposure: ExposureConfig, identity: Identity, port: int, routing: RoutingConfig = NO_ROUTING, zero: ZeroPlan | None = None
) -> str:
    """The base URL clients use: the route's first hostname, the Ingress host, or the in-cluster Service."""
    gateway, ingress = exposure.gateway, exposure.ingress
    if gateway is not None:
        ref = gateway_ref(gateway, identity.namespace)
        host = gateway.hostnames[0] if gateway.hostnames else f"<address of Gateway {ref}>"
        return f"{gateway.url_scheme}://{host.replace('*', '<host>')}"
    if ingress is not None:
        return f"{'https' if ingress.tls_secret_name else 'http'}://{ingress.host}"
    return service_url(identity, port, routing, zero)


def gateway_timeouts(
    exposure: ExposureConfig, gateway_timeout_policy: bool, zero: ZeroPlan | None
) -> tuple[int | None, int | None]:
    """(the route's timeouts.request, the GCPBackendPolicy's timeoutSec): exposure.gateway.request_timeout_seconds
    in the one place the Gateway reads it. GKE's rejects a route carrying `timeouts`, and its load balancer cuts
    a request at the backend service's timeout (30 s unless a GCPBackendPolicy says otherwise: docs/sources.md
    §S8), long before a streamed completion ends. With the add-on the backend is the interceptor's Service, whose
    policy is the add-on owner's (docs/scale-to-zero.md)."""
    seconds = exposure.gateway.request_timeout_seconds if exposure.gateway is not None else None
    if not gateway_timeout_policy:
        return seconds, None
    return None, seconds if zero is None else None


# ingress-nginx cuts a proxied request that neither reads nor writes for 60 s (kubernetes/ingress-nginx
# internal/ingress/controller/config/config.go@17e788b8 NewDefault: ProxyReadTimeout 60, ProxySendTimeout 60).
INGRESS_NGINX_TIMEOUTS = ("nginx.ingress.kubernetes.io/proxy-read-timeout", "nginx.ingress.kubernetes.io/proxy-send-timeout")


# ingress-nginx forwards a request body of at most 1 MiB (nginx's client_max_body_size: kubernetes/ingress-nginx
# internal/ingress/controller/config/config.go@003f04ca:38 bodySize "1m") and answers a larger one 413. A value
# its SizeRegex refuses (internal/ingress/annotations/parser/validators.go@3146b86a:55) leaves that default.
INGRESS_NGINX_BODY_SIZE = "nginx.ingress.kubernetes.io/proxy-body-size"
INGRESS_NGINX_DEFAULT_BODY_MIB = 1
# The most JSON one prompt token takes: a token id of a large vocabulary with json.dumps' separator ("262143, ") is
# 8 bytes; a CJK character escaped as json.dumps does by default (\u4e2d) is 6, and one token often holds two.
PROMPT_BYTES_PER_TOKEN = 16


def request_body_mib(ingress: IngressConfig | None, max_model_len: int) -> int | None:
    """The largest request body the Ingress forwards: exposure.ingress.max_request_body_mib, else room for a prompt
    that fills max_model_len (vLLM answers a longer one 400 itself), never below ingress-nginx's own 1 MiB. None
    without an Ingress."""
    if ingress is None:
        return None
    if ingress.max_request_body_mib is not None:
        return ingress.max_request_body_mib
    return max(INGRESS_NGINX_DEFAULT_BODY_MIB, math.ceil(max_model_len * PROMPT_BYTES_PER_TOKEN / 2**20))


def ingress_annotations(exposure: ExposureConfig, body_mib: int | None) -> dict[str, str]:
    """exposure.ingress.request_timeout_seconds and the request body bound (request_body_mib), in the one place
    the Ingress reads them."""
    if exposure.ingress is None or body_mib is None:
        return {}
    timeouts = {key: str(exposure.ingress.request_timeout_seconds) for key in INGRESS_NGINX_TIMEOUTS}
    return timeouts | {INGRESS_NGINX_BODY_SIZE: f"{body_mib}m"}


def inline_media_warnings(ingress: IngressConfig | None, body_mib: int | None, multimodal: bool) -> tuple[str, ...]:
    """A multimodal model behind an Ingress sized for text alone (request_body_mib): an image sent inline is
    answered 413."""
    if ingress is None or body_mib is None or not multimodal or ingress.max_request_body_mib is not None:
        return ()
    return (
        f"exposure.ingress: the model takes images or audio, and the Ingress forwards at most {body_mib} MiB a request "
        "(room for a text prompt of max_model_len): ingress-nginx answers a larger one, such as a photo sent inline "
        "as base64, with 413. Fix: set exposure.ingress.max_request_body_mib to the largest request your clients "
        "send.",
    )


def interceptor_peer(zero: ZeroPlan | None) -> Interceptor | None:
    if zero is None:
        return None
    return Interceptor(pods(zero.config.interceptor_pod_selector, (zero.config.namespace,)), zero.config.interceptor_port)


def bucket_of(bucket: ObjectStorageConfig | None, namespace: str, ports: tuple[int, ...] | None) -> BucketEndpoint | None:
    """The store the server (and the copy Job) reach for a bucket with its own endpoint_url."""
    if bucket is None or bucket.endpoint_url is None:
        return None
    return bucket_endpoint(bucket.endpoint_url, namespace, ports)


def resolve_traffic(
    cfg: StackConfig,
    identity: Identity,
    delivery: DeliveryPlan,
    launch: tuple[str, ...],
    body_mib: int | None,
    zero: ZeroPlan | None = None,
    keda_queries_thanos: bool = False,
) -> TrafficPlan:
    """`launch`: the server's command line and environment (launch_of), which the smoke test's key covers;
    `body_mib`: the largest request body the Ingress forwards (request_body_mib); `zero`:
    the add-on's interceptor, which then receives the route, the clients and the smoke test;
    `keda_queries_thanos`: KEDA's triggers query OpenShift's Thanos Querier (plan/scaling.py ThanosAccess)."""
    port, routing = cfg.server.port, cfg.routing
    backend_service, backend_port = backend(identity, port, routing)
    if zero is not None:
        backend_service, backend_port = zero.config.interceptor_service, zero.config.interceptor_port
    route_timeout, backend_timeout = gateway_timeouts(cfg.exposure, cfg.cluster.defaults.gateway_timeout_policy, zero)
    return TrafficPlan(
        exposure=cfg.exposure,
        port=port,
        api_selector=api_selector(identity.selector(SERVER), cfg.engine.nnodes),
        served_model_name=cfg.served_model_name,
        require_api_key=cfg.security.require_api_key,
        service_url=service_url(identity, port, routing, zero),
        backend_service=backend_service,
        backend_port=backend_port,
        backend_namespace=zero.config.namespace if zero is not None else None,
        route_host=zero.route_host if zero is not None else None,
        routed=routing.enabled,
        client_url=client_url(cfg.exposure, identity, port, routing, zero),
        network_policy=cfg.network_policy,
        # With the add-on the load balancer checks the interceptor's Service, in the add-on's namespace.
        health_check_policy=zero is None
        and cfg.exposure.gateway is not None
        and bool(cfg.cluster.defaults.load_balancer_probe_cidrs),
        route_timeout_seconds=route_timeout,
        backend_timeout_seconds=backend_timeout,
        ingress_annotations=ingress_annotations(cfg.exposure, body_mib),
        flows=resolve_flows(
            namespace=identity.namespace,
            port=port,
            policy=cfg.network_policy,
            exposure=cfg.exposure,
            profile=cfg.cluster.defaults,
            multinode=cfg.engine.nnodes > 1,
            # per-replica downloads or object storage: the server pods reach the hub or the bucket
            server_fetches_weights=delivery.mode != "shared_volume",
            identity=delivery.workload_identity,
            copies_to_bucket=delivery.copies_to_bucket,
            fill_job=delivery.runs_fill_job,
            smoke_test=cfg.smoke_test.enabled,
            routing=cfg.routing,
            keda_queries_thanos=keda_queries_thanos,
            interceptor=interceptor_peer(zero),
            image_prepull=cfg.server.prepull_image and cfg.target == "kubernetes",
            rollout_gate=cfg.target == "kubernetes",
            bucket=bucket_of(delivery.bucket, identity.namespace, cfg.network_policy.object_storage_ports),
        ),
        smoke=resolve_smoke(cfg, identity.instance, delivery.security, launch, zero) if cfg.smoke_test.enabled else None,
    )
