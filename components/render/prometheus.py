"""Where this program meets Prometheus: the labels its Prometheus must select, and the address KEDA queries.

One function, `prometheus_wiring`, answers both, so the monitoring objects, the ScaledObject and a cluster
check (does some Prometheus select these labels, does KEDA query that Prometheus) read the same values. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from config.observability import MonitoringConfig
from config.stack import StackConfig
from plan.names import selector_labels

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


def server_address(cfg: StackConfig) -> str | None:
    """autoscaling.server_address, or the in-cluster URL of the Prometheus Service monitoring names; None when
    neither is known (the config cross-check refuses that with autoscaling on)."""
    if cfg.autoscaling.server_address:
        return cfg.autoscaling.server_address
    service = prometheus_service(cfg.monitoring)
    if service is None:
        return None
    return f"http://{service}.{cfg.monitoring.prometheus_namespace}.svc:{cfg.monitoring.prometheus_port}"


def selection_labels(cfg: MonitoringConfig) -> tuple[dict[str, str], dict[str, str]]:
    """(monitor labels, rule labels) that Prometheus selects on, without this program's own labels."""
    monitor = dict(cfg.monitor_labels) if cfg.monitor_labels is not None else ({"release": cfg.release} if cfg.release else {})
    rule = dict(cfg.rule_labels) if cfg.rule_labels is not None else dict(monitor)
    return monitor, rule


def object_labels(selector_labels: dict[str, str], extra: dict[str, str]) -> dict[str, str]:
    """The workload's labels plus the selection labels; the selection labels win on a clash."""
    return {**selector_labels, **extra}


def prometheus_wiring(cfg: StackConfig, instance: str) -> PrometheusWiring:
    """Everything a cluster check needs to compare with the Prometheus objects in the cluster: the full
    metadata.labels of the monitor and the rule (the server's selector labels plus the selection labels, as
    components/monitoring.py registers them), and KEDA's address. `instance` is `vllm-<stack>`."""
    monitor, rule = selection_labels(cfg.monitoring)
    server = selector_labels(instance, "server")
    return PrometheusWiring(
        monitor_kind=cfg.monitoring.monitor_kind,
        monitor_labels=object_labels(server, monitor),
        rule_labels=object_labels(server, rule),
        server_address=server_address(cfg),
    )
