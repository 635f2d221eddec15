"""`autoscaling` (KEDA) and `monitoring` (Prometheus Operator, Grafana).

Thresholds left unset are derived from the preflight's capacity (plan/scaling.py); the
docs/autoscaling-and-monitoring.md explains each formula.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveFloat, field_validator

from catalog import keda_http
from catalog.keda import OLDEST_SUPPORTED
from config.base import ConfigGroup
from config.syntax import MAX_REPLICAS, DnsLabel, DnsSubdomain, Labels, NonNegativeInt, PositiveInt, Replicas

Trigger = Literal["queue", "running", "kv_cache", "latency"]
FallbackBehavior = Literal["static", "currentReplicas", "currentReplicasIfHigher", "currentReplicasIfLower"]
DURATION = r"^([0-9]+(ms|s|m|h))+$"  # Prometheus duration, e.g. 15s, 1h30m

# Release name of kube-prometheus-stack; its Prometheus Service is `<fullname>-prometheus` on port 9090
# (plan/monitoring.py; chart templates/_helpers.tpl:14-25, docs/sources.md §E).
DEFAULT_RELEASE = "monitoring"
DEFAULT_PROMETHEUS_NAMESPACE = "monitoring"  # where `helm install monitoring ... -n monitoring` puts it
DEFAULT_PROMETHEUS_PORT = 9090  # kube-prometheus-stack values.yaml prometheus.service.port


def _fraction(value: float, key: str, example: float) -> float:
    """vLLM reports cache usage as 0..1 (docs/sources.md §B.1: "1 means 100 percent"); catch thresholds typed as percent."""
    if value > 1:
        raise ValueError(
            f"{value} is above 1, but {key} is a 0..1 fraction (vLLM reports 1 = 100 %). "
            f"Fix: write {example}, not {round(example * 100)}."
        )
    return value


def _whole_requests(value: float | None, key: str) -> float | None:
    """KEDA's fallback truncates a trigger's threshold to an integer (docs/sources.md §D.4): 2.5 waiting requests
    per replica would make the fallback ask for 80 % of fallback_replicas while Prometheus is down."""
    if value is not None and not value.is_integer():
        raise ValueError(
            f"{value:g} is not a whole number of requests: KEDA's fallback truncates {key} to "
            f"{int(value)}, so while Prometheus is unreachable the HPA would want fewer than "
            f"autoscaling.fallback_replicas. Fix: write {int(value)} or {int(value) + 1}."
        )
    return value


class HttpAddOnConfig(ConfigGroup):
    """The KEDA HTTP add-on, installed in the cluster: its interceptor holds requests while the server scales from
    zero (docs/scale-to-zero.md). Setting this group is what allows autoscaling.min_replica_count: 0."""

    version: str = Field(
        keda_http.RELEASE,
        pattern=r"^v?[0-9]+\.[0-9]+(\.[0-9]+)?$",
        description=f"The installed add-on release ({keda_http.OLDEST_SUPPORTED} or newer: the interceptor's metrics and "
        "timeouts this program reads).",
    )
    resource: Literal["HTTPScaledObject", "InterceptorRoute"] = Field(
        "HTTPScaledObject",
        description="HTTPScaledObject (v1alpha1: the add-on creates the ScaledObject) or InterceptorRoute (v1beta1, "
        f"{keda_http.OLDEST_SUPPORTED} on, which upstream moves to: the stack renders the ScaledObject with the add-on's "
        "external scaler).",
    )
    namespace: DnsLabel = Field(keda_http.NAMESPACE, description="Namespace the add-on is installed in.")
    interceptor_service: DnsSubdomain = Field(
        keda_http.INTERCEPTOR_SERVICE, description="The interceptor's proxy Service (the chart's <chart>-interceptor-proxy)."
    )
    interceptor_port: int = Field(
        keda_http.INTERCEPTOR_PORT, gt=0, le=65535, description="Port of the proxy Service (interceptor.proxy.port)."
    )
    external_scaler_service: DnsSubdomain = Field(
        keda_http.EXTERNAL_SCALER_SERVICE,
        description="The add-on's external scaler Service, which an InterceptorRoute's ScaledObject names (port 9090).",
    )
    interceptor_pod_selector: Labels = Field(
        default_factory=lambda: dict(keda_http.INTERCEPTOR_POD_LABELS),
        description="Labels of the interceptor pods, which the server's NetworkPolicy admits.",
    )
    request_timeout_seconds: PositiveInt | None = Field(
        None,
        description="The install's KEDA_HTTP_REQUEST_TIMEOUT in seconds (a total deadline per request); null: "
        "none, the add-on's default.",
    )
    scaledown_period_seconds: PositiveInt = Field(
        900, le=86400, description="HTTPScaledObject scaledownPeriod: idle seconds before the last replica goes."
    )
    client_timeout_seconds: PositiveInt = Field(
        600,
        le=86400,
        description="The longest a client waits for an answer (its HTTP timeout): the cold start from zero must fit in it.",
    )
    node_provisioning_seconds: NonNegativeInt = Field(
        120,
        le=3600,
        description="Seconds from a pending pod to a Ready GPU node when the node was scaled away too (e.g. "
        "Karpenter's launch to Ready); an assumption, not a measured figure: 0 when GPU nodes stay up.",
    )
    target_concurrency: PositiveInt | None = Field(
        None,
        description="HTTPScaledObject scalingMetric.concurrency.targetValue: in-flight requests per replica; the "
        "derived running threshold (autoscaling.running_headroom x capacity) when unset.",
    )


class AutoscalingConfig(ConfigGroup):
    """KEDA ScaledObject on vLLM's Prometheus metrics. Field names follow KEDA's, in snake_case."""

    enabled: bool = Field(False, description="Create a KEDA ScaledObject; KEDA then owns the replica count.")
    min_replica_count: int = Field(
        1,
        ge=0,
        le=MAX_REPLICAS,
        description="KEDA minReplicaCount. 0 needs autoscaling.http_add_on (vLLM's metrics vanish at zero pods, "
        "so only a request buffer outside them can scale back up; docs/scale-to-zero.md).",
    )
    http_add_on: HttpAddOnConfig | None = Field(
        None,
        description="The KEDA HTTP add-on in front of the server: an HTTPScaledObject replaces the ScaledObject "
        "and the route goes through its interceptor (docs/scale-to-zero.md).",
    )
    max_replica_count: Replicas = Field(4, description="KEDA maxReplicaCount.")
    polling_interval: PositiveInt = Field(30, description="KEDA pollingInterval: seconds between trigger queries.")
    cooldown_period: NonNegativeInt = Field(
        300, description="KEDA cooldownPeriod (seconds); only applies to scaling to zero, kept for completeness."
    )
    server_address: str | None = Field(
        None,
        pattern=r"^https?://",
        description="Prometheus trigger serverAddress; when unset, the Prometheus Service that monitoring names: "
        "http://<monitoring.prometheus_service>.<monitoring.prometheus_namespace>.svc:<prometheus_port>.",
    )
    keda_version: str = Field(
        OLDEST_SUPPORTED,
        pattern=r"^v?[0-9]+\.[0-9]+(\.[0-9]+)?$",
        description="The installed KEDA release (e.g. 2.17.1); fields only newer releases accept "
        "(catalog/keda.py) are rendered only from their release on. Default: the oldest supported.",
    )
    triggers: tuple[Trigger, ...] = Field(
        ("queue", "running", "kv_cache"),
        min_length=1,
        description="Which Prometheus triggers to create: queue, running, kv_cache, latency (p95 time to first token).",
    )
    queue_threshold: PositiveFloat | None = Field(
        None, description="Waiting requests per replica (AverageValue, a whole number); derived from capacity when unset."
    )
    queue_fraction: float = Field(
        0.1, gt=0, le=1, description="Derived queue threshold = ceil(queue_fraction x per-replica concurrency)."
    )
    running_threshold: PositiveFloat | None = Field(
        None, description="Running requests per replica (AverageValue, a whole number); derived from capacity when unset."
    )
    running_headroom: float = Field(
        0.8, gt=0, le=1, description="Derived running threshold = floor(running_headroom x per-replica concurrency)."
    )
    kv_cache_usage_threshold: float = Field(
        0.85,
        gt=0,
        description="Average KV-cache usage per replica (0..1 fraction) to scale on; the trigger counts it in "
        "thousandths (0.85 renders as 850).",
    )
    latency_threshold_seconds: PositiveFloat = Field(
        2.0,
        description="p95 time to first token (seconds) for the latency trigger; the trigger counts it in "
        "milliseconds (2 renders as 2000).",
    )
    fallback_failure_threshold: PositiveInt = Field(
        3, description="KEDA fallback.failureThreshold: failed queries before the fallback applies."
    )
    fallback_replicas: Replicas | None = Field(
        None, description="KEDA fallback.replicas while Prometheus is unreachable; defaults to min_replica_count."
    )
    fallback_behavior: FallbackBehavior | None = Field(
        None,
        description="KEDA fallback.behavior (KEDA >= 2.17); unset: currentReplicasIfHigher, which never "
        "scales down on an outage, where keda_version has it, else KEDA's static fallback.",
    )
    scale_up_stabilization_window_seconds: int = Field(
        0, ge=0, le=3600, description="HPA behavior.scaleUp.stabilizationWindowSeconds."
    )
    scale_up_pods: PositiveInt = Field(2, description="HPA scaleUp policy: add at most this many pods per period.")
    scale_up_period_seconds: int = Field(60, gt=0, le=1800, description="HPA scaleUp policy periodSeconds.")
    scale_down_stabilization_window_seconds: int = Field(
        600, ge=0, le=3600, description="HPA behavior.scaleDown.stabilizationWindowSeconds (slow: GPU pods start slowly)."
    )
    scale_down_pods: PositiveInt = Field(1, description="HPA scaleDown policy: remove at most this many pods per period.")
    scale_down_period_seconds: int = Field(300, gt=0, le=1800, description="HPA scaleDown policy periodSeconds.")

    @field_validator("queue_threshold")
    @classmethod
    def _queue_is_whole(cls, value: float | None) -> float | None:
        return _whole_requests(value, "autoscaling.queue_threshold")

    @field_validator("running_threshold")
    @classmethod
    def _running_is_whole(cls, value: float | None) -> float | None:
        return _whole_requests(value, "autoscaling.running_threshold")

    @field_validator("kv_cache_usage_threshold")
    @classmethod
    def _kv_is_fraction(cls, value: float) -> float:
        return _fraction(value, "autoscaling.kv_cache_usage_threshold", 0.85)

    @field_validator("triggers")
    @classmethod
    def _unique(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(value)) != len(value):
            raise ValueError(f"{list(value)} names a trigger twice. Fix: list each trigger once.")
        return value


class MonitoringConfig(ConfigGroup):
    """ServiceMonitor (or PodMonitor), PrometheusRule and Grafana dashboard."""

    enabled: bool = Field(True, description="Create the monitoring objects.")
    release: str | None = Field(
        DEFAULT_RELEASE,
        description="kube-prometheus-stack Helm release: the `release` label its Prometheus selects "
        "monitors and rules by, and the base of its Service name; null when Prometheus "
        "selects them all.",
    )
    monitor_labels: Labels | None = Field(
        None,
        description="Labels on the ServiceMonitor/PodMonitor that the Prometheus serviceMonitorSelector "
        "(podMonitorSelector) matches; default {release: <release>}, {} with no release.",
    )
    rule_labels: Labels | None = Field(
        None, description="Labels on the PrometheusRule that the Prometheus ruleSelector matches; default monitor_labels."
    )
    prometheus_namespace: DnsLabel = Field(
        DEFAULT_PROMETHEUS_NAMESPACE, description="Namespace of the Prometheus Service KEDA queries."
    )
    prometheus_service: DnsSubdomain | None = Field(
        None,
        description="Name of the Prometheus Service KEDA queries; default kube-prometheus-stack's "
        "<fullname>-prometheus for the release (monitoring-kube-prometheus-prometheus).",
    )
    prometheus_port: int = Field(DEFAULT_PROMETHEUS_PORT, gt=0, le=65535, description="Port of that Service.")
    monitor_kind: Literal["ServiceMonitor", "PodMonitor"] = Field(
        "ServiceMonitor", description="Scrape through the Service (port `http`) or the pods (container port `http`)."
    )
    interval: str = Field("15s", pattern=DURATION, description="Scrape interval.")
    dashboard: bool = Field(True, description="Create the Grafana dashboard ConfigMap.")
    dashboard_namespace: DnsLabel | None = Field(
        None, description="Namespace for the dashboard ConfigMap; the deployment's namespace when unset."
    )
    alerts: bool = Field(True, description="Create the PrometheusRule.")
    kv_cache_usage_alert_threshold: float = Field(
        0.9, gt=0, description="Alert when a pod's KV-cache usage (0..1) stays above this."
    )
    queue_alert_threshold: PositiveFloat | None = Field(
        None, description="Alert when waiting requests per replica stay above this; the derived queue threshold when unset."
    )
    time_to_first_token_p99_slo_seconds: PositiveFloat = Field(2.0, description="SLO for p99 time to first token.")
    inter_token_latency_p99_slo_seconds: PositiveFloat = Field(0.2, description="SLO for p99 inter-token latency.")
    error_ratio_threshold: float = Field(
        0.05, gt=0, le=1, description="Alert when this share of HTTP requests fail with 5xx (vLLM >= 0.33 only)."
    )
    preemptions_per_second_threshold: PositiveFloat = Field(
        0.05, description="Alert when preemptions (KV cache exhausted mid-request) exceed this rate."
    )
    restarts_threshold: PositiveInt = Field(
        2, description="Alert when a container restarts (a LeaderWorkerSet group is recreated) this often within 30m."
    )
    gpu_memory_headroom: float = Field(
        0.05, gt=0, lt=1, description="Alert when GPU memory used exceeds gpu_memory_utilization plus this share."
    )
    not_ready_for: str = Field(
        "15m",
        pattern=DURATION,
        description="How long replicas may be unavailable (or vLLM's metrics absent) before paging; raised to "
        "the rollout budget (image pull + startup budget + 2m, the Deployment's progressDeadlineSeconds) "
        "plus 5m when a new replica may take longer.",
    )
    dcgm_namespace_label: str = Field(
        "exported_namespace",
        description="Label carrying the pod's namespace on DCGM series "
        "(exported_namespace when the exporter is scraped without honorLabels).",
    )
    dcgm_pod_label: str = Field("exported_pod", description="Label carrying the pod name on DCGM series.")

    @field_validator("kv_cache_usage_alert_threshold")
    @classmethod
    def _kv_is_fraction(cls, value: float) -> float:
        return _fraction(value, "monitoring.kv_cache_usage_alert_threshold", 0.9)
