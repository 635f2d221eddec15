"""The rendered alerting rules, field by field, and the PrometheusRule object around them."""

from __future__ import annotations

import re
from typing import Any

import pytest

from catalog.vllm_metrics import VERSIONS
from components.render.alerts import (
    duration_seconds,
    not_ready_window,
    render_prometheus_rule,
    render_rule_groups,
    scaled_object_name,
)
from config.observability import MonitoringConfig
from plan.monitoring import AlertThresholds, gpu_memory_threshold
from plan.scaling import Workload, hpa_name
from tests.factories import REPO
from tests.promtool import crd_errors

WORKLOAD = Workload(namespace="llm", model_name="llama-8b", deployment_name="llama-server", hpa_name="keda-hpa-llama")
LIMITS = AlertThresholds(queue_per_replica=26, gpu_memory_used_fraction=0.95)
SEL = '{namespace="llm",model_name="llama-8b"}'
PODS = '{namespace="llm",pod=~"llama-server-[a-z0-9]+-[a-z0-9]+"}'


def groups(version: str = "0.33.0", workload: Workload = WORKLOAD, **changes: Any) -> list[dict[str, Any]]:
    return render_rule_groups(MonitoringConfig(**changes), LIMITS, VERSIONS[version], workload)


def rules(version: str = "0.33.0", workload: Workload = WORKLOAD, **changes: Any) -> dict[str, dict[str, Any]]:
    return {rule["alert"]: rule for group in groups(version, workload, **changes) for rule in group["rules"]}


def test_rule_groups_are_named_after_the_deployment() -> None:
    assert [group["name"] for group in groups()] == [
        "llama-server-vllm-engine",
        "llama-server-vllm-latency",
        "llama-server-vllm-kubernetes",
        "llama-server-vllm-gpu",
    ]


def test_the_alerts_rendered_for_vllm_0_33() -> None:
    assert sorted(rules()) == sorted(
        [
            "VllmKvCacheNearlyFull",
            "VllmRequestsQueueing",
            "VllmPreemptions",
            "VllmMetricsAbsent",
            "VllmTimeToFirstTokenHigh",
            "VllmInterTokenLatencyHigh",
            "VllmRequestErrors",
            "VllmReplicasNotReady",
            "VllmContainerRestarting",
            "VllmContainerOOMKilled",
            "VllmAutoscalerAtMaxReplicas",
            "VllmGpuMemoryNearlyFull",
            "VllmRolloutStuck",
            "VllmNoReplicaAvailable",
            "VllmStartupFailing",
            "VllmAutoscalerScalerErrors",
            "VllmAutoscalerFallbackActive",
        ]
    )


def test_no_request_error_alert_on_vllm_0_7_2_which_has_no_http_counter_in_its_table() -> None:
    assert "VllmRequestErrors" not in rules("0.7.2")


def test_no_autoscaler_alert_without_an_hpa() -> None:
    plain = Workload(namespace="llm", model_name="llama-8b", deployment_name="llama-server")
    assert not {"VllmAutoscalerAtMaxReplicas", "VllmAutoscalerScalerErrors", "VllmAutoscalerFallbackActive"} & set(
        rules(workload=plain)
    )


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_every_alert_has_severity_summary_description_and_runbook(version: str) -> None:
    for rule in rules(version).values():
        assert rule["labels"]["severity"] in ("warning", "critical")
        assert set(rule["annotations"]) == {"summary", "description", "runbook"}
        assert all(text.strip() for text in rule["annotations"].values())


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_no_annotation_templates_the_value(version: str) -> None:
    # promtool unit tests state annotations exactly; $value would make them depend on float formatting.
    assert all("$value" not in text for rule in rules(version).values() for text in rule["annotations"].values())


def test_kv_cache_alert_compares_the_fraction_per_pod() -> None:
    rule = rules()["VllmKvCacheNearlyFull"]
    assert rule["expr"] == f"max by (namespace, model_name, pod) (vllm:kv_cache_usage_perc{SEL}) > 0.9"
    assert (rule["for"], rule["labels"]) == ("10m", {"severity": "warning"})


def test_kv_cache_alert_reads_the_v0_gauge_on_vllm_0_7_2() -> None:
    assert rules("0.7.2")["VllmKvCacheNearlyFull"]["expr"] == (
        f"max by (namespace, model_name, pod) (vllm:gpu_cache_usage_perc{SEL}) > 0.9"
    )


def test_queue_alert_averages_waiting_requests_per_pod_against_the_derived_threshold() -> None:
    assert rules()["VllmRequestsQueueing"]["expr"] == (
        f"avg by (namespace, model_name) (sum by (namespace, model_name, pod) (vllm:num_requests_waiting{SEL})) > 26"
    )


def test_ttft_alert_compares_p99_with_the_slo_in_seconds() -> None:
    assert rules(time_to_first_token_p99_slo_seconds=1.5)["VllmTimeToFirstTokenHigh"]["expr"] == (
        "histogram_quantile(0.99, sum by (namespace, model_name, le) "
        f"(rate(vllm:time_to_first_token_seconds_bucket{SEL}[5m]))) > 1.5"
    )


def test_inter_token_alert_uses_each_versions_histogram() -> None:
    assert "vllm:inter_token_latency_seconds_bucket" in rules()["VllmInterTokenLatencyHigh"]["expr"]
    assert "vllm:time_per_output_token_seconds_bucket" in rules("0.7.2")["VllmInterTokenLatencyHigh"]["expr"]


def test_error_alert_is_the_share_of_5xx_responses() -> None:
    rule = rules()["VllmRequestErrors"]
    failed = PODS[:-1] + ',status=~"5.."}'
    assert rule["expr"] == (
        f"sum by (namespace) (rate(http_requests_total{failed}[5m])) / "
        f"sum by (namespace) (rate(http_requests_total{PODS}[5m])) > 0.05"
    )
    assert (rule["for"], rule["labels"]["severity"]) == ("5m", "critical")


def test_preemption_alert_is_a_rate_per_second() -> None:
    assert rules()["VllmPreemptions"]["expr"] == (
        f"sum by (namespace, model_name) (rate(vllm:num_preemptions_total{SEL}[5m])) > 0.05"
    )


def test_replicas_not_ready_waits_longer_than_a_model_load() -> None:
    assert rules(not_ready_for="30m")["VllmReplicasNotReady"]["for"] == "30m"


def test_a_capacity_shortfall_is_a_warning() -> None:
    assert rules()["VllmReplicasNotReady"]["labels"]["severity"] == "warning"


def test_no_replica_available_pages_after_three_minutes() -> None:
    rule = rules()["VllmNoReplicaAvailable"]
    assert (rule["for"], rule["labels"]["severity"]) == ("3m", "critical")


def test_no_replica_available_reads_available_wanted_and_age_of_the_deployment() -> None:
    deployment = '{namespace="llm",deployment="llama-server"}'
    assert rules()["VllmNoReplicaAvailable"]["expr"] == (
        f"(kube_deployment_status_replicas_available{deployment} == 0) and on (namespace, deployment) "
        f"(kube_deployment_spec_replicas{deployment} > 0) and on (namespace, deployment) "
        f"(time() - kube_deployment_created{deployment} > 900)"
    )


@pytest.mark.parametrize("kind", ["StatefulSet", "LeaderWorkerSet"])
def test_no_replica_available_reads_the_statefulset_of_a_statefulset_or_leaderworkerset(kind: str) -> None:
    workload = Workload(namespace="llm", model_name="llama-8b", deployment_name="llama-group", kind=kind)
    statefulset = '{namespace="llm",statefulset="llama-group"}'
    assert rules(workload=workload)["VllmNoReplicaAvailable"]["expr"] == (
        f"(kube_statefulset_status_replicas_ready{statefulset} == 0) and on (namespace, statefulset) "
        f"(kube_statefulset_replicas{statefulset} > 0) and on (namespace, statefulset) "
        f"(time() - kube_statefulset_created{statefulset} > 900)"
    )


def test_a_new_workload_is_spared_the_outage_page_for_the_new_replica_window() -> None:
    slow = AlertThresholds(queue_per_replica=26, gpu_memory_used_fraction=0.95, rollout_seconds=3380)
    found = {
        r["alert"]: r for g in render_rule_groups(MonitoringConfig(), slow, VERSIONS["0.33.0"], WORKLOAD) for r in g["rules"]
    }
    assert found["VllmNoReplicaAvailable"]["expr"].endswith("> 3720)")  # 62m: prod's new-replica window


def test_startup_failing_looks_back_over_the_new_replica_window() -> None:
    slow = AlertThresholds(queue_per_replica=26, gpu_memory_used_fraction=0.95, rollout_seconds=3380)
    found = {
        r["alert"]: r for g in render_rule_groups(MonitoringConfig(), slow, VERSIONS["0.33.0"], WORKLOAD) for r in g["rules"]
    }
    assert found["VllmStartupFailing"]["expr"] == (
        f"(increase(kube_pod_container_status_restarts_total{PODS}[62m]) > 0) unless on (namespace, pod, container) "
        f"(max_over_time(kube_pod_container_status_ready{PODS}[62m]) == 1)"
    )


def test_scaler_errors_read_both_spellings_of_the_scaled_objects_namespace() -> None:
    expr = rules()["VllmAutoscalerScalerErrors"]["expr"]
    assert (
        'increase(keda_scaler_detail_errors_total{namespace="llm",scaledObject="llama"}[10m]) or '
        'increase(keda_scaler_detail_errors_total{exported_namespace="llm",scaledObject="llama"}[10m])'
    ) in expr


AVAILABLE = 'kube_deployment_status_replicas_available{namespace="llm",deployment="llama-server"}'


def test_keda_alerts_wait_for_a_replica_available_throughout_their_window_and_the_lag_to_keda_s_first_read() -> None:
    # 10m and 2m windows, plus 2m at the default 15 s scrape: two vLLM scrapes and a minute for KEDA's poll.
    found = {name: rules()[name]["expr"] for name in ("VllmAutoscalerScalerErrors", "VllmAutoscalerFallbackActive")}
    assert {name: expr.rsplit(" and on () ", 1)[1] for name, expr in found.items()} == {
        "VllmAutoscalerScalerErrors": f"(min_over_time({AVAILABLE}[12m]) > 0)",
        "VllmAutoscalerFallbackActive": f"(min_over_time({AVAILABLE}[4m]) > 0)",
    }


def test_a_slower_scrape_lengthens_the_keda_alerts_availability_guard() -> None:
    expr = rules(interval="60s")["VllmAutoscalerScalerErrors"]["expr"]
    assert expr.endswith(f"(min_over_time({AVAILABLE}[13m]) > 0)")


def test_the_scaled_object_is_named_by_its_hpa() -> None:
    assert scaled_object_name(hpa_name("vllm-prod")) == "vllm-prod"


def test_an_hpa_keda_did_not_name_is_refused() -> None:
    with pytest.raises(ValueError, match="'my-hpa' is not a KEDA HPA name"):
        scaled_object_name("my-hpa")


def test_metrics_absent_waits_the_not_ready_window_not_ten_minutes() -> None:
    # A 70B model takes ~12 minutes to load (stacks/Pulumi.prod.yaml); no vLLM series exist meanwhile.
    assert rules()["VllmMetricsAbsent"]["for"] == "15m"


def test_metrics_absent_is_critical() -> None:
    assert rules()["VllmMetricsAbsent"]["labels"]["severity"] == "critical"


def test_not_ready_window_grows_to_the_rollout_budget_plus_five_minutes() -> None:
    assert not_ready_window("15m", 1500) == "30m"


def test_not_ready_window_keeps_the_configured_duration_when_a_replica_comes_up_faster() -> None:
    assert not_ready_window("15m", 600) == "15m"


def test_not_ready_window_rounds_the_rollout_budget_up_to_whole_minutes() -> None:
    assert not_ready_window("15m", 740 + 300) == "23m"


def test_prod_not_ready_window_outlasts_its_1760_second_rollout_budget() -> None:
    # stacks/Pulumi.prod.yaml: 900 s image pull + 740 s startup budget + 120 s = 1,760 s (issue 9).
    assert duration_seconds(not_ready_window("15m", 1760)) >= 1760 + 300


def test_rollout_stuck_alerts_on_progressing_false() -> None:
    rule = rules()["VllmRolloutStuck"]
    assert rule["expr"] == (
        'kube_deployment_status_condition{namespace="llm",deployment="llama-server",'
        'condition="Progressing",status="false"} == 1'
    )
    assert (rule["for"], rule["labels"]["severity"]) == ("1m", "critical")


def test_duration_seconds_reads_compound_prometheus_durations() -> None:
    assert duration_seconds("1h30m15s") == 5415


def test_a_long_rollout_budget_delays_both_not_ready_and_metrics_absent() -> None:
    slow = AlertThresholds(queue_per_replica=26, gpu_memory_used_fraction=0.95, rollout_seconds=2400)
    found = {
        r["alert"]: r for g in render_rule_groups(MonitoringConfig(), slow, VERSIONS["0.33.0"], WORKLOAD) for r in g["rules"]
    }
    assert (found["VllmReplicasNotReady"]["for"], found["VllmMetricsAbsent"]["for"]) == ("45m", "45m")


def test_oom_alert_joins_restarts_with_the_oomkilled_reason() -> None:
    expr = rules()["VllmContainerOOMKilled"]["expr"]
    assert expr == (
        f"(increase(kube_pod_container_status_restarts_total{PODS}[10m]) > 0) and on (namespace, pod, "
        f'container) (kube_pod_container_status_last_terminated_reason{PODS[:-1]},reason="OOMKilled"}} == 1)'
    )


def test_restart_alert_fires_without_waiting() -> None:
    assert "for" not in rules()["VllmContainerRestarting"]


def test_gpu_memory_alert_uses_dcgm_framebuffer_share_and_exported_labels() -> None:
    dcgm = '{exported_namespace="llm",exported_pod=~"llama-server-[a-z0-9]+-[a-z0-9]+"}'
    assert rules()["VllmGpuMemoryNearlyFull"]["expr"] == (
        f"max by (exported_namespace, exported_pod, gpu) (DCGM_FI_DEV_FB_USED{dcgm} / "
        f"(DCGM_FI_DEV_FB_USED{dcgm} + DCGM_FI_DEV_FB_FREE{dcgm})) > 0.95"
    )


def test_gpu_memory_threshold_sits_above_what_vllm_claims() -> None:
    assert gpu_memory_threshold(0.92, 0.05) == 0.97


def test_gpu_memory_threshold_never_exceeds_99_percent() -> None:
    assert gpu_memory_threshold(0.98, 0.05) == 0.99


def test_autoscaler_alert_compares_current_with_max_on_kedas_hpa() -> None:
    hpa = '{namespace="llm",horizontalpodautoscaler="keda-hpa-llama"}'
    assert rules()["VllmAutoscalerAtMaxReplicas"]["expr"] == (
        f"kube_horizontalpodautoscaler_status_current_replicas{hpa} >= on (namespace, horizontalpodautoscaler) "
        f"kube_horizontalpodautoscaler_spec_max_replicas{hpa}"
    )


def test_prometheus_rule_carries_the_release_label_and_the_groups() -> None:
    rule = render_prometheus_rule("llama", {"release": "monitoring"}, groups(), "llm")
    assert rule["metadata"] == {"name": "llama", "namespace": "llm", "labels": {"release": "monitoring"}}
    assert rule["spec"] == {"groups": groups()}


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_prometheus_rule_matches_the_crd_schema(version: str) -> None:
    rule = render_prometheus_rule("llama", {"release": "monitoring"}, groups(version), "llm")
    assert crd_errors(rule, "monitoring.coreos.com_prometheusrules.yaml") == []


ALERT_ROW = re.compile(r"^\| `(Vllm\w+)` \| (warning|critical) \|", re.MULTILINE)


def test_the_docs_alert_table_lists_every_rendered_alert_with_its_severity() -> None:
    # A Deployment with autoscaling on vLLM 0.33.0 renders every alert there is.
    table = (REPO / "docs" / "autoscaling-and-monitoring.md").read_text(encoding="utf-8")
    documented = dict(ALERT_ROW.findall(table))
    assert documented == {name: rule["labels"]["severity"] for name, rule in rules().items()}


def test_a_leaderworkerset_counts_group_recreations_instead_of_container_restarts() -> None:
    # LWS deletes a group on its first container restart (pod_controller.go@a8d8c525, handleRestartPolicy): no pod
    # lives to restart twice, so VllmContainerRestarting could never fire.
    lws = Workload(namespace="llm", model_name="llama-8b", deployment_name="llama-group", kind="LeaderWorkerSet")
    rendered = rules(workload=lws)
    assert "VllmContainerRestarting" not in rendered
    assert rendered["VllmGroupRecreating"]["expr"] == (
        'changes((max by (namespace, pod) (kube_pod_created{namespace="llm",pod=~"llama-group-[0-9]+"}))[30m:1m]) >= 2'
    )
