"""`promtool check rules` and `promtool test rules` on the rules the program renders, with synthetic series.

The rule file is written at test time from render_rule_groups, the function the Monitoring component
registers; expected labels and annotations of a firing alert are read from the rendered rule itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from catalog.vllm_metrics import VERSIONS
from components.render.alerts import render_rule_groups
from config.observability import MonitoringConfig
from plan.monitoring import AlertThresholds
from plan.scaling import Workload
from tests.promtool import UnitTest, check_rules, expected_alert, promtool_scenario, write_yaml

WORKLOAD = Workload(namespace="llm", model_name="llama-8b", deployment_name="llama-server", hpa_name="keda-hpa-llama")
LIMITS = AlertThresholds(queue_per_replica=26, gpu_memory_used_fraction=0.95)
POD, OTHER_POD = "llama-server-7d9f8b6c5-x2x4k", "llama-server-7d9f8b6c5-q8w7e"
VLLM = 'namespace="llm",model_name="llama-8b",engine="0"'
MODEL = {"namespace": "llm", "model_name": "llama-8b"}
Series = list[tuple[str, str]]


def rendered_rules(version: str, limits: AlertThresholds = LIMITS) -> list[dict[str, Any]]:
    return render_rule_groups(MonitoringConfig(), limits, VERSIONS[version], WORKLOAD)


def rule_named(version: str, alert: str, limits: AlertThresholds = LIMITS) -> dict[str, Any]:
    return next(r for g in rendered_rules(version, limits) for r in g["rules"] if r.get("alert") == alert)


def unit_test(
    series: Series,
    alert: str,
    fired: list[dict[str, str]],
    version: str = "0.33.0",
    eval_time: str = "20m",
    limits: AlertThresholds = LIMITS,
) -> UnitTest:
    """Feed `series` (one sample a minute) and expect exactly the `fired` alerts at `eval_time`."""
    rule = rule_named(version, alert, limits)
    test = {
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [{"series": name, "values": values} for name, values in series],
                "alert_rule_test": [
                    {
                        "eval_time": eval_time,
                        "alertname": alert,
                        "exp_alerts": [expected_alert(rule, labels) for labels in fired],
                    }
                ],
            }
        ],
    }
    return rendered_rules(version, limits), test


def histogram(metric: str, bounds: tuple[str, ...], filled_from: str) -> Series:
    """Ten observations a minute, all in the bucket ending at `filled_from`."""
    start = bounds.index(filled_from)
    return [(f'{metric}_bucket{{{VLLM},le="{le}"}}', "0+10x30" if i >= start else "0x30") for i, le in enumerate(bounds)]


def kv(version: str, pod: str, values: str, model: str = "llama-8b") -> tuple[str, str]:
    return (f'{VERSIONS[version].kv_cache_usage}{{namespace="llm",model_name="{model}",pod="{pod}"}}', values)


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_rendered_rules_pass_promtool_check(tmp_path: Path, version: str) -> None:
    result = check_rules(write_yaml(tmp_path / "rules.yaml", {"groups": rendered_rules(version)}))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("version", sorted(VERSIONS))
@promtool_scenario
def test_kv_cache_alert_fires_on_a_full_cache(version: str) -> UnitTest:
    return unit_test([kv(version, POD, "0.95x30")], "VllmKvCacheNearlyFull", [{**MODEL, "pod": POD}], version)


@promtool_scenario
def test_kv_cache_alert_stays_quiet_at_80_percent() -> UnitTest:
    return unit_test([kv("0.33.0", POD, "0.8x30")], "VllmKvCacheNearlyFull", [])


@promtool_scenario
def test_kv_cache_alert_waits_ten_minutes() -> UnitTest:
    return unit_test([kv("0.33.0", POD, "0.95x30")], "VllmKvCacheNearlyFull", [], eval_time="9m")


@promtool_scenario
def test_kv_cache_alert_ignores_another_models_series() -> UnitTest:
    return unit_test([kv("0.33.0", POD, "0.99x30", model="other")], "VllmKvCacheNearlyFull", [])


@promtool_scenario
def test_queue_alert_fires_when_waiting_per_replica_exceeds_the_threshold() -> UnitTest:
    series = [
        (f'vllm:num_requests_waiting{{{VLLM},pod="{POD}"}}', "30x30"),
        (f'vllm:num_requests_waiting{{{VLLM},pod="{OTHER_POD}"}}', "40x30"),
    ]
    return unit_test(series, "VllmRequestsQueueing", [MODEL])


@promtool_scenario
def test_queue_alert_stays_quiet_below_the_threshold() -> UnitTest:
    series = [
        (f'vllm:num_requests_waiting{{{VLLM},pod="{POD}"}}', "20x30"),
        (f'vllm:num_requests_waiting{{{VLLM},pod="{OTHER_POD}"}}', "20x30"),
    ]
    return unit_test(series, "VllmRequestsQueueing", [])


TTFT_BOUNDS = ("0.5", "1", "2.5", "5", "+Inf")
ITL_BOUNDS = ("0.1", "0.25", "0.5", "+Inf")


@promtool_scenario
def test_ttft_alert_fires_when_p99_is_above_the_slo() -> UnitTest:
    series = histogram("vllm:time_to_first_token_seconds", TTFT_BOUNDS, "5")
    return unit_test(series, "VllmTimeToFirstTokenHigh", [MODEL])


@promtool_scenario
def test_ttft_alert_stays_quiet_when_p99_is_under_the_slo() -> UnitTest:
    series = histogram("vllm:time_to_first_token_seconds", TTFT_BOUNDS, "0.5")
    return unit_test(series, "VllmTimeToFirstTokenHigh", [])


@pytest.mark.parametrize("version", sorted(VERSIONS))
@promtool_scenario
def test_inter_token_alert_fires_on_slow_decoding(version: str) -> UnitTest:
    series = histogram(VERSIONS[version].inter_token_latency, ITL_BOUNDS, "0.5")
    return unit_test(series, "VllmInterTokenLatencyHigh", [MODEL], version)


@promtool_scenario
def test_inter_token_alert_stays_quiet_on_fast_decoding() -> UnitTest:
    series = histogram(VERSIONS["0.33.0"].inter_token_latency, ITL_BOUNDS, "0.1")
    return unit_test(series, "VllmInterTokenLatencyHigh", [])


def http(status: str, per_minute: int) -> tuple[str, str]:
    return (
        f'http_requests_total{{namespace="llm",pod="{POD}",handler="/v1/chat/completions",method="POST",status="{status}"}}',
        f"0+{per_minute}x30",
    )


@promtool_scenario
def test_error_alert_fires_at_ten_percent_5xx() -> UnitTest:
    return unit_test([http("2xx", 90), http("5xx", 10)], "VllmRequestErrors", [{"namespace": "llm"}])


@promtool_scenario
def test_error_alert_stays_quiet_at_one_percent_5xx() -> UnitTest:
    return unit_test([http("2xx", 99), http("5xx", 1)], "VllmRequestErrors", [])


@promtool_scenario
def test_preemption_alert_fires_at_one_per_second() -> UnitTest:
    series = [(f'vllm:num_preemptions_total{{{VLLM},pod="{POD}"}}', "0+60x30")]
    return unit_test(series, "VllmPreemptions", [MODEL])


@promtool_scenario
def test_preemption_alert_stays_quiet_without_preemptions() -> UnitTest:
    series = [(f'vllm:num_preemptions_total{{{VLLM},pod="{POD}"}}', "0x30")]
    return unit_test(series, "VllmPreemptions", [])


@promtool_scenario
def test_metrics_absent_fires_when_vllm_series_are_missing() -> UnitTest:
    series = [('kube_deployment_spec_replicas{namespace="llm",deployment="llama-server"}', "1x30")]
    return unit_test(series, "VllmMetricsAbsent", [MODEL])


@promtool_scenario
def test_metrics_absent_stays_quiet_while_vllm_reports() -> UnitTest:
    series = [(f'vllm:num_requests_running{{{VLLM},pod="{POD}"}}', "3x30")]
    return unit_test(series, "VllmMetricsAbsent", [])


def replicas(wanted: int, available: int) -> Series:
    labels = '{namespace="llm",deployment="llama-server"}'
    return [
        (f"kube_deployment_spec_replicas{labels}", f"{wanted}x30"),
        (f"kube_deployment_status_replicas_available{labels}", f"{available}x30"),
    ]


@promtool_scenario
def test_replicas_not_ready_fires_after_fifteen_minutes_short() -> UnitTest:
    return unit_test(replicas(2, 1), "VllmReplicasNotReady", [{"namespace": "llm", "deployment": "llama-server"}])


@promtool_scenario
def test_replicas_not_ready_stays_quiet_while_a_slow_model_is_within_its_rollout_budget() -> UnitTest:
    slow = AlertThresholds(queue_per_replica=26, gpu_memory_used_fraction=0.95, rollout_seconds=1500)  # 30m window
    return unit_test(replicas(2, 1), "VllmReplicasNotReady", [], eval_time="25m", limits=slow)


PROD = AlertThresholds(queue_per_replica=26, gpu_memory_used_fraction=0.95, rollout_seconds=1760)  # 35m window


def scale_up(minutes: int) -> Series:
    """2 replicas, scaled to 4 at minute 5; the two new ones wait for GPU nodes for the whole run."""
    labels = '{namespace="llm",deployment="llama-server"}'
    return [
        (f"kube_deployment_spec_replicas{labels}", f"2x5 4x{minutes}"),
        (f"kube_deployment_status_replicas_available{labels}", f"2x{minutes + 5}"),
    ]


@promtool_scenario
def test_a_scale_up_waiting_for_gpu_nodes_within_the_rollout_budget_does_not_page() -> UnitTest:
    # 30 minutes after the scale-up: past the old 18m window, inside prod's 1,760 s rollout budget + 5m.
    return unit_test(scale_up(60), "VllmReplicasNotReady", [], eval_time="35m", limits=PROD)


@promtool_scenario
def test_a_scale_up_still_short_past_the_rollout_budget_pages() -> UnitTest:
    return unit_test(
        scale_up(60),
        "VllmReplicasNotReady",
        [{"namespace": "llm", "deployment": "llama-server"}],
        eval_time="45m",
        limits=PROD,
    )


def progressing(status: str) -> Series:
    labels = '{namespace="llm",deployment="llama-server",condition="Progressing"'
    reason = "ProgressDeadlineExceeded" if status == "false" else "ReplicaSetUpdated"
    return [(f'kube_deployment_status_condition{labels},status="{status}",reason="{reason}"}}', "1x30")]


@promtool_scenario
def test_rollout_stuck_fires_once_the_progress_deadline_has_passed() -> UnitTest:
    return unit_test(
        progressing("false"),
        "VllmRolloutStuck",
        [
            {
                "namespace": "llm",
                "deployment": "llama-server",
                "condition": "Progressing",
                "status": "false",
                "reason": "ProgressDeadlineExceeded",
            }
        ],
        eval_time="5m",
    )


@promtool_scenario
def test_rollout_stuck_stays_quiet_while_the_rollout_progresses() -> UnitTest:
    return unit_test(progressing("true"), "VllmRolloutStuck", [], eval_time="5m")


@promtool_scenario
def test_metrics_absent_stays_quiet_during_a_normal_model_load() -> UnitTest:
    series = [('kube_deployment_spec_replicas{namespace="llm",deployment="llama-server"}', "1x30")]
    return unit_test(series, "VllmMetricsAbsent", [], eval_time="12m")


@promtool_scenario
def test_replicas_not_ready_stays_quiet_when_all_are_available() -> UnitTest:
    return unit_test(replicas(2, 2), "VllmReplicasNotReady", [])


def restarts(pod: str, values: str) -> tuple[str, str]:
    return (f'kube_pod_container_status_restarts_total{{namespace="llm",pod="{pod}",container="vllm"}}', values)


@promtool_scenario
def test_restart_alert_fires_on_a_restart_loop() -> UnitTest:
    return unit_test(
        [restarts(POD, "0+1x30")], "VllmContainerRestarting", [{"namespace": "llm", "pod": POD, "container": "vllm"}]
    )


@promtool_scenario
def test_restart_alert_ignores_pods_of_other_deployments() -> UnitTest:
    return unit_test([restarts("other-server-7d9f8b6c5-x2x4k", "0+1x30")], "VllmContainerRestarting", [])


def terminated(reason: str) -> tuple[str, str]:
    return (
        f'kube_pod_container_status_last_terminated_reason{{namespace="llm",pod="{POD}",container="vllm",reason="{reason}"}}',
        "1x30",
    )


@promtool_scenario
def test_oom_alert_fires_when_the_last_restart_was_an_oom_kill() -> UnitTest:
    return unit_test(
        [restarts(POD, "0+1x30"), terminated("OOMKilled")],
        "VllmContainerOOMKilled",
        [{"namespace": "llm", "pod": POD, "container": "vllm"}],
    )


@promtool_scenario
def test_oom_alert_stays_quiet_for_other_termination_reasons() -> UnitTest:
    return unit_test([restarts(POD, "0+1x30"), terminated("Error")], "VllmContainerOOMKilled", [])


def gpu(used_mib: int, free_mib: int) -> Series:
    labels = f'{{exported_namespace="llm",exported_pod="{POD}",gpu="0",Hostname="node-1"}}'
    return [(f"DCGM_FI_DEV_FB_USED{labels}", f"{used_mib}x30"), (f"DCGM_FI_DEV_FB_FREE{labels}", f"{free_mib}x30")]


@promtool_scenario
def test_gpu_memory_alert_fires_above_what_vllm_claims() -> UnitTest:
    return unit_test(
        gpu(80_000, 1_000),
        "VllmGpuMemoryNearlyFull",
        [{"exported_namespace": "llm", "exported_pod": POD, "gpu": "0"}],
    )


@promtool_scenario
def test_gpu_memory_alert_stays_quiet_at_vllms_normal_ninety_percent() -> UnitTest:
    return unit_test(gpu(73_000, 8_000), "VllmGpuMemoryNearlyFull", [])


def hpa(current: int, maximum: int) -> Series:
    labels = '{namespace="llm",horizontalpodautoscaler="keda-hpa-llama"}'
    return [
        (f"kube_horizontalpodautoscaler_status_current_replicas{labels}", f"{current}x30"),
        (f"kube_horizontalpodautoscaler_spec_max_replicas{labels}", f"{maximum}x30"),
    ]


@promtool_scenario
def test_autoscaler_alert_fires_at_max_replicas() -> UnitTest:
    return unit_test(
        hpa(4, 4), "VllmAutoscalerAtMaxReplicas", [{"namespace": "llm", "horizontalpodautoscaler": "keda-hpa-llama"}]
    )


@promtool_scenario
def test_autoscaler_alert_stays_quiet_below_max() -> UnitTest:
    return unit_test(hpa(2, 4), "VllmAutoscalerAtMaxReplicas", [])
