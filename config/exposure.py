"""`exposure` and `smoke_test`: how clients reach the server, and the post-deploy check that it answers.

vLLM's `--api-key` guards only paths under /v1, /v2, /inference and /cohere
(vllm-project/vllm vllm/entrypoints/serve/middleware/authenticate.py, GUARDED_PREFIX, in 0.33.0; shared
reference docs/sources.md §S7). /invocations runs the same chat and completion handlers without a key, and /tokenize,
/detokenize, /metrics, /health answer anyone. So clients reach the server only through a route that lists
guarded paths, and the NetworkPolicy keeps every other pod off the port (docs/exposure.md).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, Self

from pydantic import Field, PositiveInt, StringConstraints, field_validator, model_validator

from config.base import ConfigGroup
from config.network import NamespaceName, Port, _check_cidr
from config.syntax import DnsSubdomain
from config.syntax import check_label as _check_label

# The prefixes vLLM 0.33.0 checks the key on (authenticate.py GUARDED_PREFIX).
GUARDED_PREFIXES: tuple[str, ...] = ("/v1", "/v2", "/inference", "/cohere")
# What a chat/completions client needs from a generative model; Exact matches, so /v1/chat/completions/render
# and every unlisted /v1 path stay out.
GENERATE_PATHS: tuple[str, ...] = ("/v1/chat/completions", "/v1/completions", "/v1/models")
# Default smoke-test image: python:3.11-slim pinned by the digest public Dockerfiles pin it by (found with the
# code search). This sandbox cannot reach Docker Hub to re-check it: `docker buildx imagetools inspect
# python:3.11-slim` shows the current one; set smoke_test.image to pin your own.
SMOKE_IMAGE = "python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7"
HTTPROUTE_MAX_SECONDS = 99_999  # the most seconds an HTTPRoute Duration holds in one unit (GatewayConfig)

ObjectName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)]
Hostname = Annotated[
    str, StringConstraints(pattern=r"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$", max_length=253)
]
_PATH = re.compile(r"^/[A-Za-z0-9/_.-]*$")


def _labels_valid(labels: dict[str, str]) -> dict[str, str]:
    for key, value in labels.items():
        _check_label(key, value)
    return labels


class EndpointPickerConfig(ConfigGroup):
    """The Endpoint Picker an InferencePool names (endpointPickerRef): a Service in the stack's namespace, run by
    your platform (GIE's inferencepool chart, llm-d). The chart names it `<release>-epp` on port 9002 and labels
    its pods `inferencepool: <release>-epp` (kubernetes-sigs/gateway-api-inference-extension
    config/charts/inferencepool/templates/epp-service.yaml, _helpers.tpl, inferencepool.yaml)."""

    service: ObjectName = Field(description="The picker's Service, in the stack's namespace (endpointPickerRef.name).")
    port: Port = Field(9002, description="The Service's ext-proc port (endpointPickerRef.port.number).")
    failure_mode: Literal["FailClose", "FailOpen"] = Field(
        "FailClose", description="What the gateway does when the picker does not answer: refuse, or pick any pod."
    )
    pod_selector: dict[str, str] | None = Field(
        None,
        description="Labels of the picker's pods, admitted to the API port (it scrapes /metrics); default "
        "inferencepool: <service> (the chart's selector).",
    )

    @field_validator("pod_selector")
    @classmethod
    def _pod_labels(cls, labels: dict[str, str] | None) -> dict[str, str] | None:
        return None if labels is None else _labels_valid(labels)

    def pods(self) -> dict[str, str]:
        return dict(self.pod_selector) if self.pod_selector is not None else {"inferencepool": self.service}


class GatewayConfig(ConfigGroup):
    """An existing Gateway (gateway.networking.k8s.io/v1) the HTTPRoute attaches to."""

    name: ObjectName = Field(description="Name of the Gateway (created by your platform, not by this stack).")
    namespace: NamespaceName | None = Field(
        None,
        description="Namespace of the Gateway; the stack's namespace when unset. Its listener's "
        "allowedRoutes must admit the stack's namespace.",
    )
    section_name: ObjectName | None = Field(None, description="The Gateway listener to attach to (parentRefs sectionName).")
    hostnames: tuple[Hostname, ...] = Field((), description="HTTPRoute hostnames; empty takes the listener's.")
    backend: Literal["Service", "InferencePool"] = Field(
        "Service",
        description="Route to the Service, or to an InferencePool (inference.networking.k8s.io/v1) "
        "over the server pods, for gateways implementing the Inference Extension.",
    )
    endpoint_picker: EndpointPickerConfig | None = Field(
        None, description="With backend InferencePool: the Endpoint Picker the pool names (required there)."
    )
    # Rendered as "<n>s": the HTTPRoute CRD's Duration allows at most 5 digits per unit, `^([0-9]{1,5}(h|m|s|ms)){1,4}$`
    # (kubernetes-sigs/gateway-api config/crd/standard/gateway.networking.k8s.io_httproutes.yaml@8bb74df0:3112).
    request_timeout_seconds: PositiveInt | None = Field(
        300,
        le=HTTPROUTE_MAX_SECONDS,
        description="HTTPRoute rules timeouts.request (Extended support): a long generation must not be cut at a "
        "proxy default; null leaves it out for implementations that reject it. On the gke profile, the "
        "GCPBackendPolicy's timeoutSec instead (GKE does not accept the route's field).",
    )
    url_scheme: Literal["https", "http"] = Field(
        "https", description="Scheme of the Gateway listener, for the client URL and curl outputs."
    )
    pods_namespace: NamespaceName | None = Field(
        None, description="Namespace of the gateway's proxy pods (for the NetworkPolicy); the Gateway's when unset."
    )
    pod_selector: dict[str, str] | None = Field(
        None,
        description="Labels of the gateway's proxy pods; default gateway.networking.k8s.io/gateway-name: <name> "
        "(GEP-1762). {} admits every pod of pods_namespace.",
    )
    source_cidrs: tuple[str, ...] = Field(
        (),
        description="Addresses the gateway's proxies connect from when they are not pods (a cloud load "
        "balancer's proxy subnet); admitted on the API port.",
    )

    @field_validator("pod_selector")
    @classmethod
    def _pod_labels(cls, labels: dict[str, str] | None) -> dict[str, str] | None:
        return None if labels is None else _labels_valid(labels)

    @field_validator("source_cidrs")
    @classmethod
    def _cidrs_valid(cls, cidrs: tuple[str, ...]) -> tuple[str, ...]:
        for cidr in cidrs:
            _check_cidr(cidr)
        return cidrs

    def proxy_namespace(self, stack_namespace: str) -> str:
        return self.pods_namespace or self.namespace or stack_namespace

    def proxy_pod_selector(self) -> dict[str, str]:
        """GEP-1762: an implementation deploying a Gateway "MUST label all generated resources (Service,
        Deployment, etc) with gateway.networking.k8s.io/gateway-name" (kubernetes-sigs/gateway-api
        geps/gep-1762)."""
        if self.pod_selector is not None:
            return dict(self.pod_selector)
        return {"gateway.networking.k8s.io/gateway-name": self.name}


class IngressConfig(ConfigGroup):
    """An Ingress (networking.k8s.io/v1), for clusters without the Gateway API."""

    class_name: ObjectName = Field(description="ingressClassName (e.g. nginx).")
    host: Hostname = Field(description="The host name clients use.")
    tls_secret_name: DnsSubdomain | None = Field(
        None, description="TLS Secret (in the stack's namespace) for host; unset serves plain HTTP."
    )
    controller_namespace: NamespaceName = Field(description="Namespace of the ingress controller's pods.")
    request_timeout_seconds: PositiveInt = Field(
        300,
        description="ingress-nginx's proxy-read-timeout and proxy-send-timeout annotations (60 s otherwise): an "
        "answer that sends nothing for longer, such as a completion that is not streamed, is cut; other "
        "controllers ignore them and need a setting of their own.",
    )
    max_request_body_mib: PositiveInt | None = Field(
        None,
        description="ingress-nginx's proxy-body-size annotation: the largest request body it forwards (1 MiB "
        "otherwise; a larger one is answered 413 and never reaches vLLM). Unset: room for a prompt that fills "
        "max_model_len, 16 bytes a token, and at least 1 MiB. A multimodal model's clients send images or audio "
        "inline (base64): set it to their largest request.",
    )
    controller_pod_selector: dict[str, str] = Field(
        default_factory=dict,
        description="Labels of the controller pods (e.g. app.kubernetes.io/name: ingress-nginx); "
        "{} admits every pod of controller_namespace.",
    )

    @field_validator("controller_pod_selector")
    @classmethod
    def _pod_labels(cls, labels: dict[str, str]) -> dict[str, str]:
        return _labels_valid(labels)


class ExposureConfig(ConfigGroup):
    """How clients outside the stack's namespace reach the API. Neither set: the Service only (ClusterIP)."""

    gateway: GatewayConfig | None = Field(None, description="Attach an HTTPRoute to an existing Gateway.")
    ingress: IngressConfig | None = Field(None, description="Create an Ingress instead (no Gateway API).")
    paths: tuple[str, ...] = Field(
        GENERATE_PATHS, description="Paths the route or Ingress forwards (Exact); each must be one vLLM's API key guards."
    )

    @field_validator("paths")
    @classmethod
    def _paths_guarded(cls, paths: tuple[str, ...]) -> tuple[str, ...]:
        if not paths:
            raise ValueError("is empty. Fix: list at least /v1/chat/completions, or remove the key for the default.")
        for path in paths:
            if not _PATH.match(path) or ".." in path or not is_guarded(path):
                raise ValueError(
                    f"{path!r} is not a path vLLM's API key guards (only {', '.join(GUARDED_PREFIXES)} are; "
                    "/invocations, /tokenize, /detokenize, /pooling, /score, /rerank and /metrics answer without it). "
                    f"Fix: list paths such as {', '.join(GENERATE_PATHS)}."
                )
        return paths

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        if self.gateway is not None and self.ingress is not None:
            raise ValueError("sets both gateway and ingress. Fix: keep one of exposure.gateway or exposure.ingress.")
        return self

    @property
    def kind(self) -> Literal["gateway", "ingress", "none"]:
        return "gateway" if self.gateway else "ingress" if self.ingress else "none"


def is_guarded(path: str) -> bool:
    """Whether vLLM 0.33.0 checks the key on `path`: its middleware tests `path.startswith(prefix)`."""
    return path.startswith(GUARDED_PREFIXES)


class SmokeTestConfig(ConfigGroup):
    """A Job run after the rollout: one chat completion; its failure fails `pulumi up`."""

    enabled: bool = Field(True, description="Run the smoke test after each rollout that changes the model or image.")
    image: str = Field(SMOKE_IMAGE, min_length=1, description="Image with python3 that runs smoke/check.py.")
    timeout_seconds: PositiveInt = Field(
        120, le=3600, description="Bound on the one request (smoke/check.py --timeout-seconds)."
    )
    max_tokens: PositiveInt = Field(16, le=4096, description="max_tokens of the request.")
