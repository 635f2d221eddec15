"""A traffic plan (plan/traffic.py) from a few parts, for the network-policy and reachability tests, which
vary one policy setting at a time without sizing a model."""

from __future__ import annotations

from config.exposure import ExposureConfig
from config.network import NetworkPolicyConfig
from plan.identity import Identity
from plan.names import Names
from plan.traffic import TrafficPlan, client_url, resolve_smoke, service_url
from tests.factories import make_config


def traffic_of(
    namespace: str,
    instance: str,
    port: int,
    policy: NetworkPolicyConfig,
    exposure: ExposureConfig | None = None,
    smoke_test: bool = False,
    server_fetches_weights: bool = False,
) -> tuple[Identity, TrafficPlan]:
    """The identity and traffic plan of an instance in `namespace` with these settings."""
    identity = Identity(instance, namespace, creates_namespace=False, retain_namespace_on_delete=False, names=Names(instance))
    exposure = exposure or ExposureConfig()
    return identity, TrafficPlan(
        exposure=exposure,
        port=port,
        served_model_name="llama",
        require_api_key=True,
        service_url=service_url(identity, port),
        client_url=client_url(exposure, identity, port),
        network_policy=policy,
        server_fetches_weights=server_fetches_weights,
        smoke=resolve_smoke(make_config(), instance) if smoke_test else None,
    )
