"""`routing`: vLLM's router (vllm-project/router) in front of the server replicas.

The router is released as the PyPI wheel `vllm-router` and the image `vllm/vllm-router:v<version>` built from
the same release (docs/sources.md §S9); its flags are checked against that
release's `vllm-router --help` (catalog/router_flags.py). It finds the server pods through the Kubernetes API
(`--service-discovery`), so it needs get/list/watch on pods in the stack's namespace (docs/routing.md).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveFloat, field_validator

from config.base import ConfigGroup
from config.network import Port, _check_cidr
from config.syntax import INT32_MAX, DnsLabel, ImageRepository, NonNegativeInt, PositiveInt

# The wheel version the tests install and whose --help catalog/router_flags.py holds; the image tag follows it.
ROUTER_VERSION = "0.1.17"
RouterVersion = Literal["0.1.17"]  # the releases catalog/router_flags.py holds
RouterPolicy = Literal[
    "random", "round_robin", "cache_aware", "kv_aware", "power_of_two", "consistent_hash", "sticky_least_loaded"
]


class RoutingConfig(ConfigGroup):
    """The router's Deployment, its pod discovery and its limits; off by default."""

    enabled: bool = Field(False, description="Put vLLM's router in front of the server replicas.")
    endpoint: DnsLabel | None = Field(
        None,
        description="One endpoint for several stacks' models: every stack of one namespace.name with this name "
        "labels its server pods with it, and the one with routing.enabled runs the router for all of them, "
        "routing by the request's model (docs/routing.md).",
    )
    replicas: int = Field(2, ge=2, le=100, description="Router replicas: at least two, so one can be drained.")
    policy: RouterPolicy = Field(
        "cache_aware", description="The router's --policy: cache_aware sends shared prefixes to the same replica."
    )
    image_repository: ImageRepository = Field("vllm/vllm-router", description="The router image, without its tag.")
    version: RouterVersion = Field(
        "0.1.17", description="The router release: the image tag v<version>, and the flag table it is checked against."
    )
    port: int = Field(8000, ge=1, le=65535, description="The router's HTTP port (its container and Service port).")
    prometheus_port: int = Field(29000, ge=1, le=65535, description="The router's --prometheus-port (its metrics).")
    cpu: str = Field("1", pattern=r"^[0-9]+(\.[0-9]+|m)?$", description="CPU request = limit of a router pod.")
    memory_gib: PositiveFloat = Field(1.0, le=64, description="Memory request = limit of a router pod, GiB.")
    max_concurrent_requests: PositiveInt = Field(
        32768, description="--max-concurrent-requests: requests in flight before the router queues."
    )
    queue_size: NonNegativeInt = Field(100, description="--queue-size: queued requests past the limit (0: answer 429).")
    queue_timeout_secs: PositiveInt = Field(60, description="--queue-timeout-secs: how long a request may wait queued.")
    request_timeout_secs: int = Field(
        1800, gt=0, le=INT32_MAX, description="--request-timeout-secs: one request's bound through the router."
    )
    health_check_interval_secs: PositiveInt = Field(
        10, description="--health-check-interval-secs: how often the router probes each server's /health."
    )
    health_failure_threshold: PositiveInt = Field(
        3, description="--health-failure-threshold: failed checks before a server is marked down."
    )
    error_alert_ratio: float = Field(
        0.05, gt=0, le=1, description="VllmRouterRequestErrors fires when this share of the router's requests fails."
    )
    api_server_cidrs: tuple[str, ...] = Field(
        (),
        description="Addresses of the Kubernetes API server, for the NetworkPolicy egress of the router (its pod "
        "discovery) and of the rollout gate; empty admits TCP api_server_ports to any address.",
    )
    api_server_ports: tuple[Port, ...] = Field((443, 6443), description="TCP ports of the Kubernetes API server.")

    @field_validator("api_server_cidrs")
    @classmethod
    def _cidrs_valid(cls, cidrs: tuple[str, ...]) -> tuple[str, ...]:
        for cidr in cidrs:
            _check_cidr(cidr)
        return cidrs

    @property
    def image(self) -> str:
        return f"{self.image_repository}:v{self.version}"
