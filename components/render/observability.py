"""KEDA's ScaledObject and the monitoring objects (ServiceMonitor or PodMonitor, PrometheusRule, dashboard
ConfigMap) of one stack, as plain manifests. Pure; components/autoscaling.py and components/monitoring.py
register these same renderings."""

from __future__ import annotations

from typing import Any

from catalog.vllm_metrics import metrics_for
from components.render import prometheus
from components.render.alerts import AlertThresholds, gpu_memory_threshold, render_prometheus_rule, render_rule_groups
from components.render.dashboard import SIDECAR_LABEL, render_dashboard, render_dashboard_data
from components.render.keda import (
    Capacity,
    Thresholds,
    derive_thresholds,
    derived_queue_threshold,
    hpa_name,
    render_scaled_object,
)
from components.render.promql import Workload
from config.observability import AutoscalingConfig, MonitoringConfig
from plan.names import PORT_NAME

MONITORING_API = "monitoring.coreos.com/v1"


def object_labels(selector_labels: dict[str, str], cfg: MonitoringConfig) -> dict[str, str]:
    """The ServiceMonitor/PodMonitor labels (components/render/prometheus.py, shared with the cluster check)."""
    return prometheus.object_labels(selector_labels, prometheus.selection_labels(cfg)[0])


def rule_labels(selector_labels: dict[str, str], cfg: MonitoringConfig) -> dict[str, str]:
    """The PrometheusRule labels: what the Prometheus ruleSelector matches."""
    return prometheus.object_labels(selector_labels, prometheus.selection_labels(cfg)[1])


def render_monitor(name: str, namespace: str, selector_labels: dict[str, str], cfg: MonitoringConfig) -> dict[str, Any]:
    """A ServiceMonitor on the Service port named `http`, or a PodMonitor on the container port of that name."""
    endpoint = {"port": PORT_NAME, "path": "/metrics", "scheme": "http", "interval": cfg.interval}
    spec: dict[str, Any] = {
        "selector": {"matchLabels": dict(selector_labels)},
        "namespaceSelector": {"matchNames": [namespace]},
    }
    spec["endpoints" if cfg.monitor_kind == "ServiceMonitor" else "podMetricsEndpoints"] = [endpoint]
    return {
        "apiVersion": MONITORING_API,
        "kind": cfg.monitor_kind,
        "metadata": {"name": name, "namespace": namespace, "labels": object_labels(selector_labels, cfg)},
        "spec": spec,
    }


def alert_limits(
    monitoring: MonitoringConfig,
    autoscaling: AutoscalingConfig,
    capacity: Capacity,
    queue_threshold: float | None,
    rollout_seconds: int | None,
) -> AlertThresholds:
    """The alert thresholds: the queue alert fires where the scaler acts (the stack's queue_fraction)."""
    queue = monitoring.queue_alert_threshold or queue_threshold or derived_queue_threshold(autoscaling.queue_fraction, capacity)
    gpu = gpu_memory_threshold(capacity.gpu_memory_utilization, monitoring.gpu_memory_headroom)
    return AlertThresholds(queue_per_replica=queue, gpu_memory_used_fraction=gpu, rollout_seconds=rollout_seconds or 0)


def scaled_object(
    name: str,
    labels: dict[str, str],
    autoscaling: AutoscalingConfig,
    thresholds: Thresholds,
    vllm_version: str,
    workload: Workload,
    server_address: str,
) -> dict[str, Any]:
    return render_scaled_object(name, labels, autoscaling, thresholds, metrics_for(vllm_version), workload, server_address)


def monitoring_objects(
    name: str,
    monitoring: MonitoringConfig,
    limits: AlertThresholds,
    vllm_version: str,
    selector_labels: dict[str, str],
    workload: Workload,
) -> list[dict[str, Any]]:
    """Monitor, then the PrometheusRule and the dashboard ConfigMap when switched on."""
    metrics = metrics_for(vllm_version)
    objects = [render_monitor(name, workload.namespace, selector_labels, monitoring)]
    if monitoring.alerts:
        groups = render_rule_groups(monitoring, limits, metrics, workload)
        objects.append(render_prometheus_rule(name, rule_labels(selector_labels, monitoring), groups, workload.namespace))
    if monitoring.dashboard:
        board = render_dashboard(monitoring, metrics, workload)
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": f"{name}-dashboard",
                    "namespace": monitoring.dashboard_namespace or workload.namespace,
                    "labels": {**selector_labels, **SIDECAR_LABEL},
                },
                "data": render_dashboard_data(board, workload.deployment_name),
            }
        )
    return objects


__all__ = [
    "MONITORING_API",
    "alert_limits",
    "derive_thresholds",
    "hpa_name",
    "monitoring_objects",
    "object_labels",
    "render_monitor",
    "scaled_object",
]
