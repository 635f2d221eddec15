"""Monitoring: the ServiceMonitor (or PodMonitor), PrometheusRule and Grafana dashboard of one vLLM deployment.

kube-prometheus-stack's Prometheus selects monitors and rules by the label `release: <helm release>`
(`*SelectorNilUsesHelmValues: true`, docs/sources.md §E), so the monitor and rule carry
monitoring.monitor_labels / rule_labels (components/render/prometheus.py; by default
`release: <monitoring.release>`). The Service's port is named `http` and serves /metrics
(plan/names.py PORT_NAME).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.render.alerts import AlertThresholds
from components.render.keda import Capacity
from components.render.observability import MONITORING_API, alert_limits, monitoring_objects, object_labels, render_monitor
from components.render.promql import Workload
from config.observability import AutoscalingConfig, MonitoringConfig

TYPE_TOKEN = "vllm-serving:index:Monitoring"
__all__ = [
    "MONITORING_API",
    "TYPE_TOKEN",
    "Monitoring",
    "MonitoringArgs",
    "alert_thresholds",
    "object_labels",
    "render_monitor",
]


@dataclass(frozen=True)
class MonitoringArgs:
    namespace: pulumi.Input[str]  # where the Deployment and Service run
    deployment_name: pulumi.Input[str]  # the workload's name: kube-state-metrics label, pod name prefix
    selector_labels: dict[str, str]  # labels of the Service (ServiceMonitor) or pods (PodMonitor)
    served_model_name: str  # vLLM's model_name label
    vllm_version: str  # picks the metric names (catalog/vllm_metrics.py)
    monitoring: MonitoringConfig
    capacity: Capacity  # from the preflight: the queue and GPU-memory alert thresholds
    autoscaling: AutoscalingConfig  # the stack's: its queue_fraction derives the queue alert when KEDA is off
    queue_threshold: float | None = None  # the KEDA queue threshold, so alert and scaler agree; derived when unset
    hpa_name: str | None = None  # KedaAutoscaler.hpa_name when autoscaling is on: adds the at-max alert
    # How long a new replica may take (plan/delivery.py DeliveryPlan.new_replica_seconds): the not-ready and
    # metrics-absent alerts wait at least this long plus a margin, so a normal scale-up never pages.
    rollout_seconds: int | None = None
    workload_kind: str = "Deployment"  # StatefulSet or LeaderWorkerSet: replica series, pod names


def alert_thresholds(args: MonitoringArgs) -> AlertThresholds:
    return alert_limits(args.monitoring, args.autoscaling, args.capacity, args.queue_threshold, args.rollout_seconds)


class Monitoring(pulumi.ComponentResource):
    """Scrape config, alerts and dashboard; each part can be switched off in MonitoringConfig.

    Attributes:
        monitor: the ServiceMonitor or PodMonitor.
        rules: the PrometheusRule, or None when monitoring.alerts is false.
        dashboard: the dashboard ConfigMap, or None when monitoring.dashboard is false.
    """

    def __init__(self, name: str, args: MonitoringArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        cfg, limits = args.monitoring, alert_thresholds(args)
        workload = pulumi.Output.all(args.namespace, args.deployment_name).apply(
            lambda values: Workload(
                namespace=values[0],
                model_name=args.served_model_name,
                deployment_name=values[1],
                hpa_name=args.hpa_name,
                kind=args.workload_kind,
            )
        )
        # The same list `python -m components.render` writes; which objects it holds is known from cfg alone.
        objects = workload.apply(lambda w: monitoring_objects(name, cfg, limits, args.vllm_version, args.selector_labels, w))
        self.monitor = self._custom(
            f"{name}-{cfg.monitor_kind.lower()}", cfg.monitor_kind, objects.apply(lambda o: o[0]), child
        )
        self.rules = (
            self._custom(f"{name}-rules", "PrometheusRule", objects.apply(lambda o: o[1]), child) if cfg.alerts else None
        )
        self.dashboard = (
            k8s.core.v1.ConfigMap(
                f"{name}-dashboard",
                metadata=objects.apply(lambda o: o[-1]["metadata"]),
                data=objects.apply(lambda o: o[-1]["data"]),
                opts=child,
            )
            if cfg.dashboard
            else None
        )
        self.register_outputs({"monitorName": name, "alerts": cfg.alerts, "dashboard": cfg.dashboard})

    @staticmethod
    def _custom(
        resource_name: str, kind: str, manifest: pulumi.Output[dict[str, Any]], opts: pulumi.ResourceOptions
    ) -> k8s.apiextensions.CustomResource:
        return k8s.apiextensions.CustomResource(
            resource_name,
            api_version=MONITORING_API,
            kind=kind,
            metadata=manifest.apply(lambda m: m["metadata"]),
            spec=manifest.apply(lambda m: m["spec"]),
            opts=opts,
        )
