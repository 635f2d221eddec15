"""Where this stack meets Prometheus, decided once: the labels its Prometheus must select, the address KEDA
queries, and the alert limits (queue, GPU memory, how long a new replica may take). Pure.

The monitoring objects, the ScaledObject and the cluster check (does some Prometheus select these labels, does
KEDA query that Prometheus) read the same `PrometheusWiring`.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.gpus import NVIDIA, MetricsExporter
from catalog.profiles import UserWorkloadMonitoring
from catalog.vllm_metrics import VersionMetrics, metrics_for
from config.observability import AutoscalingConfig, MonitoringConfig
from config.stack import StackConfig
from plan.delivery import DeliveryPlan
from plan.identity import Identity
from plan.names import service_host
from plan.scaling import (
    Capacity,
    ScalingPlan,
    Workload,
    derived_queue_threshold,
    resolve_scaling,
    thanos_access,
    workload_name,
)
from preflight.report import Sizing

# kube-prometheus-stack's chart name, and its fullname limit: "We truncate at ... 63-35=26"
# (prometheus-community/helm-charts charts/kube-prometheus-stack/templates/_helpers.tpl@082861ba:7-25).
CHART_NAME = "kube-prometheus-stack"
FULLNAME_MAX = 26


@dataclass(frozen=True)
class PrometheusWiring:
    monitor_kind: str  # ServiceMonitor or PodMonitor
    monitor_labels: dict[str, str]  # what serviceMonitorSelector / podMonitorSelector must match
    rule_labels: dict[str, str]  # what ruleSelector must match
    server_address: str | None  # KEDA's Prometheus trigger serverAddress; None when not derivable


@dataclass(frozen=True)
class AlertThresholds:
    """Values derived outside the config: the queue alert from capacity, GPU memory from the preflight, and
    how long a new replica may take (seconds: image pull on a new node, the startup budget and a margin;
    plan/delivery.py DeliveryPlan.new_replica_seconds), which the not-ready and metrics-absent alerts wait out."""

    queue_per_replica: float
    gpu_memory_used_fraction: float
    rollout_seconds: int = 0
    gpu_exporter: MetricsExporter = NVIDIA.exporter  # the sized GPU's vendor's per-GPU series (catalog/gpus.py)


@dataclass(frozen=True)
class MonitoringPlan:
    config: MonitoringConfig
    name: str  # <instance>-monitoring: the monitor and the PrometheusRule; the dashboard ConfigMap adds -dashboard
    selector_labels: dict[str, str]  # the server's: what the monitor selects, and the objects' own labels
    wiring: PrometheusWiring
    limits: AlertThresholds
    metrics: VersionMetrics  # the vLLM release's metric names (catalog/vllm_metrics.py)
    router_job: str | None = None  # the router's Service, the `job` of its series; None without routing
    lora: bool = False  # LoRA adapters are served: vllm:lora_requests_info exists

    @property
    def enabled(self) -> bool:
        return self.config.enabled


def kube_prometheus_stack_fullname(release: str) -> str:
    """The chart's `kube-prometheus-stack.fullname` (no fullnameOverride): the release name when it contains
    the chart name, else `<release>-kube-prometheus-stack`, cut to 26 characters less one trailing '-'."""
    name = release if CHART_NAME in release else f"{release}-{CHART_NAME}"
    return name[:FULLNAME_MAX].removesuffix("-")


def prometheus_service(cfg: MonitoringConfig) -> str | None:
    """The Prometheus Service: monitoring.prometheus_service, or the chart's `<fullname>-prometheus`
    (templates/prometheus/service.yaml). None when neither is known (config cross-check reports it)."""
    if cfg.prometheus_service:
        return cfg.prometheus_service
    return f"{kube_prometheus_stack_fullname(cfg.release)}-prometheus" if cfg.release else None


def server_address(
    autoscaling: AutoscalingConfig, monitoring: MonitoringConfig, platform: UserWorkloadMonitoring | None = None
) -> str | None:
    """autoscaling.server_address, or OpenShift's Thanos Querier (tenancy port), or the in-cluster URL of the
    Prometheus Service monitoring names; None when none is known (the config cross-check refuses that with
    autoscaling on)."""
    if autoscaling.server_address:
        return autoscaling.server_address
    if platform is not None:
        return platform.thanos_querier
    service = prometheus_service(monitoring)
    if service is None:
        return None
    return f"http://{service_host(service, monitoring.prometheus_namespace)}:{monitoring.prometheus_port}"


def selection_labels(
    cfg: MonitoringConfig, platform: UserWorkloadMonitoring | None = None
) -> tuple[dict[str, str], dict[str, str]]:
    """(monitor labels, rule labels) that Prometheus selects on, without this program's own labels. OpenShift's
    user-workload Prometheus selects every monitor and rule of a user project, so there the release label is
    added only when monitoring.release is set explicitly."""
    release = cfg.release if platform is None or "release" in cfg.model_fields_set else None
    monitor = dict(cfg.monitor_labels) if cfg.monitor_labels is not None else ({"release": release} if release else {})
    rule = dict(cfg.rule_labels) if cfg.rule_labels is not None else dict(monitor)
    return monitor, rule


def object_labels(selector_labels: dict[str, str], extra: dict[str, str]) -> dict[str, str]:
    """The workload's labels plus the selection labels; the selection labels win on a clash."""
    return {**selector_labels, **extra}


def prometheus_wiring(
    monitoring: MonitoringConfig,
    autoscaling: AutoscalingConfig,
    selector_labels: dict[str, str],
    platform: UserWorkloadMonitoring | None = None,
) -> PrometheusWiring:
    """The full metadata.labels of the monitor and the rule (the server's selector labels plus the selection
    labels) and KEDA's address: what a cluster check compares with the Prometheus objects in the cluster."""
    monitor, rule = selection_labels(monitoring, platform)
    return PrometheusWiring(
        monitor_kind=monitoring.monitor_kind,
        monitor_labels=object_labels(selector_labels, monitor),
        rule_labels=object_labels(selector_labels, rule),
        server_address=server_address(autoscaling, monitoring, platform),
    )


def gpu_memory_threshold(gpu_memory_utilization: float, headroom: float) -> float:
    """vLLM allocates gpu_memory_utilization of each GPU up front, so usage is normally just below it."""
    return round(min(0.99, gpu_memory_utilization + headroom), 4)


def alert_limits(
    monitoring: MonitoringConfig,
    autoscaling: AutoscalingConfig,
    capacity: Capacity,
    queue_threshold: float | None,
    rollout_seconds: int | None,
    gpu_exporter: MetricsExporter,
) -> AlertThresholds:
    """The alert thresholds: the queue alert fires where the scaler acts (KEDA's queue threshold when it
    runs, else the stack's queue_fraction of capacity)."""
    queue = monitoring.queue_alert_threshold or queue_threshold or derived_queue_threshold(autoscaling.queue_fraction, capacity)
    gpu = gpu_memory_threshold(capacity.gpu_memory_utilization, monitoring.gpu_memory_headroom)
    return AlertThresholds(queue, gpu, rollout_seconds or 0, gpu_exporter)


def resolve_observability(
    cfg: StackConfig, identity: Identity, sizing: Sizing, delivery: DeliveryPlan
) -> tuple[ScalingPlan, MonitoringPlan]:
    """KEDA and monitoring share the workload, the metric names and the thresholds: the queue alert fires where
    the scaler acts."""
    server, metrics = identity.selector("server"), metrics_for(cfg.vllm.version)
    platform = cfg.cluster.defaults.user_workload_monitoring
    wiring = prometheus_wiring(cfg.monitoring, cfg.autoscaling, server, platform)
    workload = Workload(
        identity.namespace,
        cfg.served_model_name,
        workload_name(identity.names, cfg.engine.nnodes),
        kind=delivery.workload_kind,
    )
    thanos = thanos_access(identity) if platform is not None and not cfg.autoscaling.server_address else None
    scaling = resolve_scaling(cfg.autoscaling, identity, sizing, workload, wiring.server_address, metrics, thanos)
    queue = scaling.thresholds.queue if scaling.enabled else None
    rollout = delivery.new_replica_seconds
    exporter = sizing.resolved.gpu.vendor.exporter
    limits = alert_limits(cfg.monitoring, cfg.autoscaling, scaling.capacity, queue, rollout, exporter)
    router = identity.names.router if cfg.routing.enabled else None
    name = f"{identity.instance}-monitoring"
    monitoring = MonitoringPlan(cfg.monitoring, name, server, wiring, limits, metrics, router, cfg.lora.enabled)
    return scaling, monitoring
