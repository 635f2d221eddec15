"""The monitoring objects (ServiceMonitor or PodMonitor, PrometheusRule, dashboard ConfigMap) of one stack, as
plain manifests, from the plan's monitoring and workload (plan/monitoring.py, plan/scaling.py). Pure;
components/monitoring.py registers these same renderings."""

from __future__ import annotations

from typing import Any

from components.render.alerts import render_prometheus_rule, render_rule_groups
from components.render.dashboard import SIDECAR_LABEL, render_dashboard, render_dashboard_data
from plan.monitoring import MonitoringPlan
from plan.names import PORT_NAME
from plan.scaling import Workload
from plan.zero import ZeroPlan

MONITORING_API = "monitoring.coreos.com/v1"


def render_monitor(monitoring: MonitoringPlan, namespace: str) -> dict[str, Any]:
    """A ServiceMonitor on the Service port named `http`, or a PodMonitor on the container port of that name."""
    cfg = monitoring.config
    endpoint = {"port": PORT_NAME, "path": "/metrics", "scheme": "http", "interval": cfg.interval}
    spec: dict[str, Any] = {
        "selector": {"matchLabels": dict(monitoring.selector_labels)},
        "namespaceSelector": {"matchNames": [namespace]},
    }
    spec["endpoints" if cfg.monitor_kind == "ServiceMonitor" else "podMetricsEndpoints"] = [endpoint]
    return {
        "apiVersion": MONITORING_API,
        "kind": cfg.monitor_kind,
        "metadata": {"name": monitoring.name, "namespace": namespace, "labels": dict(monitoring.wiring.monitor_labels)},
        "spec": spec,
    }


def render_dashboard_configmap(monitoring: MonitoringPlan, workload: Workload, zero: ZeroPlan | None = None) -> dict[str, Any]:
    """The dashboard for Grafana's sidecar, in monitoring.dashboard_namespace or the stack's."""
    board = render_dashboard(monitoring, workload, zero)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"{monitoring.name}-dashboard",
            "namespace": monitoring.config.dashboard_namespace or workload.namespace,
            "labels": {**monitoring.selector_labels, **SIDECAR_LABEL},
        },
        "data": render_dashboard_data(board, workload.deployment_name),
    }


def monitoring_objects(monitoring: MonitoringPlan, workload: Workload, zero: ZeroPlan | None = None) -> list[dict[str, Any]]:
    """Monitor, then the PrometheusRule and the dashboard ConfigMap when switched on; `zero`: the KEDA HTTP add-on."""
    cfg = monitoring.config
    objects = [render_monitor(monitoring, workload.namespace)]
    if cfg.alerts:
        groups = render_rule_groups(cfg, monitoring.limits, monitoring.metrics, workload, zero)
        objects.append(render_prometheus_rule(monitoring.name, monitoring.wiring.rule_labels, groups, workload.namespace))
    if cfg.dashboard:
        objects.append(render_dashboard_configmap(monitoring, workload, zero))
    return objects
