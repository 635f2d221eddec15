"""The Monitoring component under Pulumi mocks: ServiceMonitor/PodMonitor, PrometheusRule, dashboard ConfigMap."""

from __future__ import annotations

import json

from catalog.gpus import NVIDIA
from catalog.vllm_metrics import VERSIONS
from components.monitoring import TYPE_TOKEN, Monitoring, MonitoringArgs
from components.render.alerts import render_rule_groups
from components.render.observability import render_monitor
from config.observability import AutoscalingConfig, MonitoringConfig
from plan.monitoring import AlertThresholds, MonitoringPlan, alert_limits
from plan.scaling import Capacity, Workload
from tests.harness import Registered, resolve, run_program
from tests.plan_parts import monitoring_of
from tests.promtool import crd_errors

SERVICE_MONITOR = "kubernetes:monitoring.coreos.com/v1:ServiceMonitor"
POD_MONITOR = "kubernetes:monitoring.coreos.com/v1:PodMonitor"
RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
CAPACITY = Capacity(max_num_seqs=256, kv_cache_tokens=448_224, tokens_per_request=1024, gpu_memory_utilization=0.9)
LABELS = {"app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": "llama"}


WORKLOAD = Workload(namespace="llm", model_name="llama-8b", deployment_name="llama-server", hpa_name="keda-hpa-llama")


def alert_thresholds(
    monitoring: MonitoringConfig | None = None,
    capacity: Capacity = CAPACITY,
    queue_threshold: float | None = None,
    rollout_seconds: int | None = None,
) -> AlertThresholds:
    cfg = monitoring or MonitoringConfig()
    return alert_limits(cfg, AutoscalingConfig(), capacity, queue_threshold, rollout_seconds, NVIDIA.exporter)


def plan(monitoring: MonitoringConfig | None = None) -> MonitoringPlan:
    cfg = monitoring or MonitoringConfig()
    return monitoring_of(cfg, alert_thresholds(cfg), name="llama", selector_labels=LABELS)


def args(monitoring: MonitoringConfig | None = None) -> MonitoringArgs:
    return MonitoringArgs(plan(monitoring), WORKLOAD, "llm")


def build(monitoring_args: MonitoringArgs) -> Registered:
    return run_program(lambda: Monitoring("llama", monitoring_args))


def test_registers_a_service_monitor_rules_and_a_dashboard() -> None:
    assert build(args()).types == sorted([CONFIG_MAP, SERVICE_MONITOR, RULE, TYPE_TOKEN])


def test_children_are_parented_to_the_component() -> None:
    made: list[Monitoring] = []
    run_program(lambda: made.append(Monitoring("llama", args())))
    children = (made[0].monitor, made[0].rules, made[0].dashboard)
    urns = [resolve(child.urn) for child in children]  # type: ignore[union-attr]
    assert all(f"::{TYPE_TOKEN}$" in urn for urn in urns)


def test_service_monitor_scrapes_metrics_on_the_http_port() -> None:
    spec = build(args()).one(SERVICE_MONITOR)["spec"]
    assert spec["endpoints"] == [{"port": "http", "path": "/metrics", "scheme": "http", "interval": "15s"}]


def test_service_monitor_selects_the_service_labels_in_its_namespace() -> None:
    spec = build(args()).one(SERVICE_MONITOR)["spec"]
    assert spec["selector"] == {"matchLabels": LABELS}
    assert spec["namespaceSelector"] == {"matchNames": ["llm"]}


def test_service_monitor_carries_the_kube_prometheus_stack_release_label() -> None:
    metadata = build(args()).one(SERVICE_MONITOR)["metadata"]
    assert metadata == {"name": "llama", "namespace": "llm", "labels": {**LABELS, "release": "monitoring"}}


def test_release_label_follows_the_config() -> None:
    metadata = build(args(monitoring=MonitoringConfig(release="kps"))).one(SERVICE_MONITOR)["metadata"]
    assert metadata["labels"]["release"] == "kps"


def test_no_release_label_when_release_is_null() -> None:
    metadata = build(args(monitoring=MonitoringConfig(release=None))).one(SERVICE_MONITOR)["metadata"]
    assert "release" not in metadata["labels"]


def test_pod_monitor_replaces_the_service_monitor_when_asked() -> None:
    registered = build(args(monitoring=MonitoringConfig(monitor_kind="PodMonitor")))
    assert registered.of_type(SERVICE_MONITOR) == []
    assert registered.one(POD_MONITOR)["spec"]["podMetricsEndpoints"] == [
        {"port": "http", "path": "/metrics", "scheme": "http", "interval": "15s"}
    ]


def test_service_monitor_matches_the_crd_schema() -> None:
    assert crd_errors(build(args()).one(SERVICE_MONITOR), "monitoring.coreos.com_servicemonitors.yaml") == []


def test_pod_monitor_matches_the_crd_schema() -> None:
    manifest = render_monitor(plan(MonitoringConfig(monitor_kind="PodMonitor")), "llm")
    assert crd_errors(manifest, "monitoring.coreos.com_podmonitors.yaml") == []


def test_registered_rules_are_exactly_the_rendered_groups_promtool_tests() -> None:
    spec = build(args()).one(RULE)["spec"]
    assert spec["groups"] == render_rule_groups(MonitoringConfig(), alert_thresholds(), VERSIONS["0.33.0"], WORKLOAD)


def test_prometheus_rule_carries_the_release_label() -> None:
    assert build(args()).one(RULE)["metadata"]["labels"] == {**LABELS, "release": "monitoring"}


def test_registered_prometheus_rule_matches_the_crd_schema() -> None:
    assert crd_errors(build(args()).one(RULE), "monitoring.coreos.com_prometheusrules.yaml") == []


def test_queue_alert_uses_the_autoscalers_threshold_when_given() -> None:
    assert alert_thresholds(queue_threshold=7).queue_per_replica == 7


def test_queue_alert_threshold_is_derived_from_capacity_without_autoscaling() -> None:
    assert alert_thresholds().queue_per_replica == 26


def test_configured_queue_alert_threshold_wins() -> None:
    cfg = MonitoringConfig(queue_alert_threshold=3)
    assert alert_thresholds(cfg, queue_threshold=7).queue_per_replica == 3


def test_gpu_memory_alert_threshold_follows_gpu_memory_utilization() -> None:
    capacity = Capacity(256, 448_224, 1024, gpu_memory_utilization=0.92)
    assert alert_thresholds(capacity=capacity).gpu_memory_used_fraction == 0.97


def test_the_rollout_budget_reaches_the_alert_thresholds() -> None:
    assert alert_thresholds(rollout_seconds=1800).rollout_seconds == 1800


def test_without_a_rollout_budget_the_configured_not_ready_window_applies() -> None:
    assert alert_thresholds().rollout_seconds == 0


def test_no_prometheus_rule_when_alerts_are_off() -> None:
    assert build(args(monitoring=MonitoringConfig(alerts=False))).of_type(RULE) == []


def test_no_dashboard_when_the_dashboard_is_off() -> None:
    assert build(args(monitoring=MonitoringConfig(dashboard=False))).of_type(CONFIG_MAP) == []


def test_dashboard_config_map_is_labelled_for_the_grafana_sidecar() -> None:
    metadata = build(args()).one(CONFIG_MAP)["metadata"]
    assert metadata == {"name": "llama-dashboard", "namespace": "llm", "labels": {**LABELS, "grafana_dashboard": "1"}}


def test_dashboard_namespace_can_differ() -> None:
    metadata = build(args(monitoring=MonitoringConfig(dashboard_namespace="monitoring"))).one(CONFIG_MAP)["metadata"]
    assert metadata["namespace"] == "monitoring"


def test_dashboard_config_map_holds_one_json_file() -> None:
    data = build(args()).one(CONFIG_MAP)["data"]
    assert list(data) == ["llama-server-vllm.json"]
    assert json.loads(data["llama-server-vllm.json"])["uid"] == "vllm-llm-llama-server"
