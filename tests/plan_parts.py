"""Plan parts (plan/traffic.py, plan/scaling.py, plan/monitoring.py) built from a few values, for the tests
that vary one setting at a time without sizing a model; tests/kubernetes_fixtures.py plan_of sizes a whole stack."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from catalog.profiles import PROFILES
from catalog.vllm_metrics import VERSIONS
from components.render.network_policy import render_network_policies
from config.exposure import ExposureConfig
from config.network import NetworkPolicyConfig
from config.observability import AutoscalingConfig, MonitoringConfig
from config.routing import RoutingConfig
from plan.flows import SERVER as SERVER_COMPONENT
from plan.flows import resolve_flows
from plan.identity import Identity
from plan.monitoring import AlertThresholds, MonitoringPlan, prometheus_wiring
from plan.multinode import api_selector
from plan.names import Names
from plan.scaling import Capacity, ScalingPlan, Workload, derive_thresholds, hpa_name, keda_features
from plan.security import PodSecurity
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
    profile: str = "generic",
    multinode: bool = False,
) -> tuple[Identity, TrafficPlan]:
    """The identity and traffic plan of an instance in `namespace` with these settings."""
    identity = Identity(instance, namespace, creates_namespace=False, retain_namespace_on_delete=False, names=Names(instance))
    exposure = exposure or ExposureConfig()
    return identity, TrafficPlan(
        exposure=exposure,
        port=port,
        api_selector=api_selector(identity.selector(SERVER_COMPONENT), 2 if multinode else 1),
        served_model_name="llama",
        require_api_key=True,
        service_url=service_url(identity, port),
        backend_service=identity.names.server,
        backend_port=port,
        backend_namespace=None,
        route_host=None,
        routed=False,
        client_url=client_url(exposure, identity, port),
        network_policy=policy,
        health_check_policy=False,
        route_timeout_seconds=None,
        backend_timeout_seconds=None,
        ingress_annotations={},
        flows=resolve_flows(
            namespace=namespace,
            port=port,
            policy=policy,
            exposure=exposure,
            profile=PROFILES[profile],
            multinode=multinode,
            server_fetches_weights=server_fetches_weights,
            identity=None,
            copies_to_bucket=False,
            fill_job=True,  # the base stack's Hub download to a shared volume
            smoke_test=smoke_test,
            routing=RoutingConfig(),
            image_prepull=False,
            rollout_gate=True,
        ),
        smoke=resolve_smoke(make_config(), instance, PodSecurity(10001, 10001, 10001), ()) if smoke_test else None,
    )


LABELS = {"app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": "llama"}
SERVER = "http://monitoring-kube-prometheus-prometheus.monitoring.svc:9090"


def scaling_of(
    cfg: AutoscalingConfig,
    capacity: Capacity,
    workload: Workload,
    server_address: str = SERVER,
    version: str = "0.33.0",
    name: str = "llama",
    labels: dict[str, str] | None = None,
) -> ScalingPlan:
    """The scaling plan of a ScaledObject `name` over `workload` (its hpa_name set to KEDA's)."""
    return ScalingPlan(
        config=cfg,
        scaled_object_name=name,
        labels=dict(LABELS if labels is None else labels),
        capacity=capacity,
        thresholds=derive_thresholds(cfg, capacity),
        workload=replace(workload, hpa_name=hpa_name(name)),
        server_address=server_address,
        keda_features=keda_features(cfg),
        metrics=VERSIONS[version],
    )


def monitoring_of(
    cfg: MonitoringConfig,
    limits: AlertThresholds,
    version: str = "0.33.0",
    name: str = "llama-monitoring",
    selector_labels: dict[str, str] | None = None,
) -> MonitoringPlan:
    """The monitoring plan of a stack whose server pods carry `selector_labels`."""
    selector = dict(LABELS if selector_labels is None else selector_labels)
    wiring = prometheus_wiring(cfg, AutoscalingConfig(), selector)
    return MonitoringPlan(cfg, name, selector, wiring, limits, VERSIONS[version])


def policies_of(
    namespace: str,
    instance: str,
    port: int,
    policy: NetworkPolicyConfig,
    exposure: ExposureConfig | None = None,
    smoke_test: bool = False,
    fetches_weights: bool = False,
) -> list[dict[str, Any]]:
    """The NetworkPolicies of an instance with these settings (rendered from its flows), the server's first."""
    return render_network_policies(*traffic_of(namespace, instance, port, policy, exposure, smoke_test, fetches_weights))


def server_policy_of(
    namespace: str,
    instance: str,
    port: int,
    policy: NetworkPolicyConfig,
    exposure: ExposureConfig | None = None,
    smoke_test: bool = False,
    fetches_weights: bool = False,
) -> dict[str, Any]:
    """The server pods' NetworkPolicy of an instance with these settings."""
    return policies_of(namespace, instance, port, policy, exposure, smoke_test, fetches_weights)[0]


def model_cache_policy_of(namespace: str, instance: str, policy: NetworkPolicyConfig) -> dict[str, Any]:
    return policies_of(namespace, instance, 8000, policy)[1]
