"""Monitoring: the ServiceMonitor (or PodMonitor), PrometheusRule and Grafana dashboard of one vLLM deployment.

kube-prometheus-stack's Prometheus selects monitors and rules by the label `release: <helm release>`
(`*SelectorNilUsesHelmValues: true`, facts §E), so every object here carries it unless monitoring.release
is null; monitoring.monitor_labels and rule_labels replace it for another Prometheus's selectors.
The Service's port is named `http` and serves /metrics (components/render/names.py PORT_NAME).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from catalog.vllm_metrics import metrics_for
from components.render import prometheus
from components.render.alerts import AlertThresholds, gpu_memory_threshold, render_prometheus_rule, render_rule_groups
from components.render.dashboard import SIDECAR_LABEL, render_dashboard, render_dashboard_data
from components.render.keda import Capacity, derived_queue_threshold
from components.render.names import PORT_NAME
from components.render.promql import Workload
from config.observability import AutoscalingConfig, MonitoringConfig

TOKEN = "vllm-serving:index:Monitoring"
MONITORING_API = "monitoring.coreos.com/v1"


@dataclass(frozen=True)
class MonitoringArgs:
    namespace: pulumi.Input[str]  # where the Deployment and Service run
    deployment_name: pulumi.Input[str]  # kube-state-metrics `deployment` label; pods are <name>-<hash>-<id>
    selector_labels: dict[str, str]  # labels of the Service (ServiceMonitor) or pods (PodMonitor)
    served_model_name: str  # vLLM's model_name label
    vllm_version: str  # picks the metric names (catalog/vllm_metrics.py)
    monitoring: MonitoringConfig
    capacity: Capacity  # from the preflight: the queue and GPU-memory alert thresholds
    queue_threshold: float | None = None  # the KEDA queue threshold, so alert and scaler agree; derived when unset
    hpa_name: str | None = None  # KedaAutoscaler.hpa_name when autoscaling is on: adds the at-max alert
    # The server's rollout budget (components/render/probes.py rollout_timeout_seconds): the not-ready and
    # metrics-absent alerts wait at least this long plus a margin, so a normal scale-up never pages.
    rollout_seconds: int | None = None
    workload_kind: str = "Deployment"  # StatefulSet or LeaderWorkerSet: replica series, pod names


def object_labels(selector_labels: dict[str, str], cfg: MonitoringConfig) -> dict[str, str]:
    """The ServiceMonitor/PodMonitor labels (components/render/prometheus.py, shared with the cluster check)."""
    return prometheus.object_labels(selector_labels, prometheus.selection_labels(cfg)[0])


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


def alert_thresholds(args: MonitoringArgs) -> AlertThresholds:
    queue = (args.monitoring.queue_alert_threshold or args.queue_threshold
             or derived_queue_threshold(AutoscalingConfig().queue_fraction, args.capacity))
    gpu = gpu_memory_threshold(args.capacity.gpu_memory_utilization, args.monitoring.gpu_memory_headroom)
    return AlertThresholds(queue_per_replica=queue, gpu_memory_used_fraction=gpu,
                           rollout_seconds=args.rollout_seconds or 0)


class Monitoring(pulumi.ComponentResource):
    """Scrape config, alerts and dashboard; each part can be switched off in MonitoringConfig.

    Attributes:
        monitor: the ServiceMonitor or PodMonitor.
        rules: the PrometheusRule, or None when monitoring.alerts is false.
        dashboard: the dashboard ConfigMap, or None when monitoring.dashboard is false.
    """

    def __init__(self, name: str, args: MonitoringArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TOKEN, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        cfg = args.monitoring
        workload = pulumi.Output.all(args.namespace, args.deployment_name).apply(lambda values: Workload(
            namespace=values[0], model_name=args.served_model_name, deployment_name=values[1],
            hpa_name=args.hpa_name, kind=args.workload_kind))
        monitor = workload.apply(lambda w: render_monitor(name, w.namespace, args.selector_labels, cfg))
        self.monitor = self._custom(f"{name}-{cfg.monitor_kind.lower()}", cfg.monitor_kind, monitor, child)
        self.rules = self._rules(name, args, workload, child) if cfg.alerts else None
        self.dashboard = self._dashboard(name, args, workload, child) if cfg.dashboard else None
        self.register_outputs({"monitorName": name, "alerts": cfg.alerts, "dashboard": cfg.dashboard})

    @staticmethod
    def _custom(resource_name: str, kind: str, manifest: pulumi.Output[dict[str, Any]],
                opts: pulumi.ResourceOptions) -> k8s.apiextensions.CustomResource:
        return k8s.apiextensions.CustomResource(
            resource_name, api_version=MONITORING_API, kind=kind,
            metadata=manifest.apply(lambda m: m["metadata"]), spec=manifest.apply(lambda m: m["spec"]), opts=opts)

    def _rules(self, name: str, args: MonitoringArgs, workload: pulumi.Output[Workload],
               opts: pulumi.ResourceOptions) -> k8s.apiextensions.CustomResource:
        limits, metrics = alert_thresholds(args), metrics_for(args.vllm_version)
        labels = prometheus.object_labels(args.selector_labels, prometheus.selection_labels(args.monitoring)[1])
        manifest = workload.apply(lambda w: render_prometheus_rule(
            name, labels, render_rule_groups(args.monitoring, limits, metrics, w), w.namespace))
        return self._custom(f"{name}-rules", "PrometheusRule", manifest, opts)

    def _dashboard(self, name: str, args: MonitoringArgs, workload: pulumi.Output[Workload],
                   opts: pulumi.ResourceOptions) -> k8s.core.v1.ConfigMap:
        metrics = metrics_for(args.vllm_version)
        board = workload.apply(lambda w: render_dashboard(args.monitoring, metrics, w))
        data = pulumi.Output.all(board, args.deployment_name).apply(lambda v: render_dashboard_data(v[0], v[1]))
        namespace = args.monitoring.dashboard_namespace or args.namespace
        metadata = {"name": f"{name}-dashboard", "namespace": namespace,
                    "labels": {**args.selector_labels, **SIDECAR_LABEL}}
        return k8s.core.v1.ConfigMap(f"{name}-dashboard", metadata=metadata, data=data, opts=opts)
