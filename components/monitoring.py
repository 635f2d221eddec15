"""Monitoring: the ServiceMonitor (or PodMonitor), PrometheusRule and Grafana dashboard of one vLLM deployment.

kube-prometheus-stack's Prometheus selects monitors and rules by the label `release: <helm release>`
(`*SelectorNilUsesHelmValues: true`, docs/sources.md §E), so the monitor and rule carry
monitoring.monitor_labels / rule_labels (plan/monitoring.py; by default `release: <monitoring.release>`).
The Service's port is named `http` and serves /metrics (plan/names.py PORT_NAME).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi

from components.kube import register
from components.render.observability import monitoring_objects
from plan.monitoring import MonitoringPlan
from plan.scaling import Workload
from plan.zero import ZeroPlan

TYPE_TOKEN = "vllm-serving:index:Monitoring"


@dataclass(frozen=True)
class MonitoringArgs:
    monitoring: MonitoringPlan  # wiring and alert limits, decided in the plan
    workload: Workload  # plan.scaling.workload: the alerts' and dashboard's queries; hpa_name when KEDA is on
    namespace: pulumi.Input[str]  # where the workload and Service run (ServingStack.namespace)
    wait_for: Sequence[pulumi.Resource] = field(default_factory=tuple)  # the rollout of the workload they watch
    zero: ZeroPlan | None = None  # the KEDA HTTP add-on in front: its alerts and panel, quiet replica alerts at zero


class Monitoring(pulumi.ComponentResource):
    """Scrape config, alerts and dashboard; each part can be switched off in MonitoringConfig.

    Attributes:
        monitor: the ServiceMonitor or PodMonitor.
        rules: the PrometheusRule, or None when monitoring.alerts is false.
        dashboard: the dashboard ConfigMap, or None when monitoring.dashboard is false.
    """

    def __init__(self, name: str, args: MonitoringArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=list(args.wait_for))
        cfg = args.monitoring.config
        # The same list `python -m components.render` writes: the monitor, then the rule and the dashboard.
        objects = monitoring_objects(args.monitoring, args.workload, args.zero)
        self.monitor = register(f"{name}-{cfg.monitor_kind.lower()}", objects[0], child, namespace=args.namespace)
        self.rules = register(f"{name}-rules", objects[1], child, namespace=args.namespace) if cfg.alerts else None
        # The dashboard lives in monitoring.dashboard_namespace when set, so its namespace stays as rendered.
        dashboard_namespace = None if cfg.dashboard_namespace else args.namespace
        self.dashboard = (
            register(f"{name}-dashboard", objects[-1], child, namespace=dashboard_namespace) if cfg.dashboard else None
        )
        self.register_outputs({"monitorName": name, "alerts": cfg.alerts, "dashboard": cfg.dashboard})
