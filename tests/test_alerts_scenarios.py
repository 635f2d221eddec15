"""What an operator sees, minute by minute, in the incidents a vLLM deployment has: `promtool test rules` on
prod's rendered rules (51m new-replica window: 242 s image pull + 2,360 s startup budget + 120 s, plus 5m) fed
the series kube-state-metrics, vLLM and KEDA would export. Each scenario states every alert that must fire at a
given minute and that no other critical alert does."""

from __future__ import annotations

from typing import Any

from catalog.vllm_metrics import VERSIONS
from components.render.alerts import render_rule_groups
from config.observability import MonitoringConfig
from plan.monitoring import AlertThresholds
from plan.scaling import Workload
from tests.promtool import UnitTest, expected_alert, promtool_scenario

PROD = AlertThresholds(queue_per_replica=26, gpu_memory_used_fraction=0.95, rollout_seconds=3380)
WORKLOAD = Workload(namespace="llm", model_name="llama-8b", deployment_name="llama-server", hpa_name="keda-hpa-llama")
DEPLOYMENT = {"namespace": "llm", "deployment": "llama-server"}
PODS = ("llama-server-7d9f8b6c5-x2x4k", "llama-server-7d9f8b6c5-q8w7e")
NEW_POD = "llama-server-7d9f8b6c5-n3w9p"
LONG_AGO = "-86400x200"  # created a day before the test starts
Series = list[tuple[str, str]]
Firing = dict[str, list[dict[str, str]]]


def rules(workload: Workload) -> list[dict[str, Any]]:
    groups = render_rule_groups(MonitoringConfig(), PROD, VERSIONS["0.33.0"], workload)
    return [rule for group in groups for rule in group["rules"]]


def labels(values: dict[str, str]) -> str:
    return "{" + ",".join(f'{key}="{value}"' for key, value in values.items()) + "}"


def unit_test(series: Series, expected: dict[str, Firing], workload: Workload = WORKLOAD) -> UnitTest:
    """At each eval time, exactly the `expected` alerts fire among those named, and no critical one besides."""
    rendered = rules(workload)
    by_name = {rule["alert"]: rule for rule in rendered}
    critical = [rule["alert"] for rule in rendered if rule["labels"]["severity"] == "critical"]
    checks = [
        {
            "eval_time": eval_time,
            "alertname": name,
            "exp_alerts": [expected_alert(by_name[name], found) for found in firing.get(name, [])],
        }
        for eval_time, firing in expected.items()
        for name in dict.fromkeys([*firing, *critical])
    ]
    test = {
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [{"series": name, "values": values} for name, values in series],
                "alert_rule_test": checks,
            }
        ],
    }
    return [{"name": "all", "rules": rendered}], test


def deployment(wanted: str, available: str, created: str = LONG_AGO) -> Series:
    match = labels(DEPLOYMENT)
    return [
        (f"kube_deployment_spec_replicas{match}", wanted),
        (f"kube_deployment_status_replicas_available{match}", available),
        (f"kube_deployment_created{match}", created),
    ]


def vllm(pod: str, values: str) -> tuple[str, str]:
    return (f'vllm:num_requests_running{{namespace="llm",model_name="llama-8b",engine="0",pod="{pod}"}}', values)


def container(pod: str, restarts: str, ready: str) -> Series:
    match = labels({"namespace": "llm", "pod": pod, "container": "vllm"})
    return [(f"kube_pod_container_status_restarts_total{match}", restarts), (f"kube_pod_container_status_ready{match}", ready)]


def serving_pods(minutes: int) -> Series:
    return [item for pod in PODS for item in [vllm(pod, f"3x{minutes}"), *container(pod, f"0x{minutes}", f"1x{minutes}")]]


@promtool_scenario
def test_a_total_outage_of_prod_pages_within_five_minutes() -> UnitTest:
    # Both replicas fail at minute 10; kube-state-metrics shows it from minute 11 (readiness probe, scrape).
    series = deployment("2x40", "2x10 0x30") + [vllm(pod, "3x9") for pod in PODS]
    return unit_test(series, {"13m": {}, "15m": {"VllmNoReplicaAvailable": [DEPLOYMENT]}})


@promtool_scenario
def test_a_scale_up_from_two_to_four_waiting_for_gpus_pages_nothing() -> UnitTest:
    series = deployment("2x10 4x110", "2x120") + serving_pods(120)
    return unit_test(series, {"20m": {}, "60m": {}, "110m": {}})


@promtool_scenario
def test_a_scale_up_still_short_after_the_new_replica_window_is_a_warning() -> UnitTest:
    series = deployment("2x10 4x110", "2x120") + serving_pods(120)
    return unit_test(series, {"70m": {}, "80m": {"VllmReplicasNotReady": [DEPLOYMENT]}})


@promtool_scenario
def test_a_rolling_update_of_two_replicas_pages_nothing() -> UnitTest:
    # maxSurge 0, maxUnavailable 1: each replica is replaced in turn, 56 minutes each (pull + load).
    series = [
        *deployment("2x130", "2x10 1x56 2x1 1x56 2x10"),
        vllm(PODS[0], "3x10"),
        vllm(PODS[1], "3x67"),
        vllm(NEW_POD, "_x66 3x66"),
        *container(NEW_POD, "_x10 0x120", "_x10 0x56 1x66"),
    ]
    return unit_test(series, {minute: {} for minute in ("15m", "40m", "66m", "70m", "100m", "122m", "130m")})


def keda_errors(metric: str, extra: dict[str, str], values: str) -> tuple[str, str]:
    # Scraped through the KEDA chart's ServiceMonitor: the target's namespace, the ScaledObject's exported.
    return (f"{metric}{labels({'namespace': 'keda', 'exported_namespace': 'llm', 'scaledObject': 'llama', **extra})}", values)


TRIGGER = {"scaler": "prometheusScaler", "metric": "s0-prometheus", "triggerIndex": "0", "type": "scaledobject"}


def keda_outage(errors_from: int, minutes: int) -> Series:
    """KEDA's queries fail on every poll from `errors_from` (2 a minute: pollingInterval 30 s)."""
    values = f"0x{errors_from} 2+2x{minutes - errors_from}"
    return [
        keda_errors("keda_scaler_detail_errors_total", TRIGGER, values),
        keda_errors("keda_scaled_object_errors_total", {}, values),
    ]


@promtool_scenario
def test_a_keda_outage_raises_the_scaler_error_and_fallback_alerts() -> UnitTest:
    series = deployment("2x30", "2x30") + serving_pods(30) + keda_outage(10, 30)
    trigger = {"scaledObject": "llama", "scaler": "prometheusScaler", "metric": "s0-prometheus"}
    return unit_test(
        series,
        {
            "9m": {"VllmAutoscalerScalerErrors": [], "VllmAutoscalerFallbackActive": []},
            "15m": {"VllmAutoscalerScalerErrors": [trigger], "VllmAutoscalerFallbackActive": [{"scaledObject": "llama"}]},
        },
    )


@promtool_scenario
def test_keda_errors_while_no_replica_serves_leave_the_page_to_the_outage_alert() -> UnitTest:
    series = deployment("2x30", "0x30") + keda_outage(0, 30)
    return unit_test(
        series,
        {"15m": {"VllmNoReplicaAvailable": [DEPLOYMENT], "VllmAutoscalerScalerErrors": [], "VllmAutoscalerFallbackActive": []}},
    )


def keda_failing(spans: tuple[tuple[int, int], ...], minutes: int) -> Series:
    """KEDA's queries fail on every poll (2 a minute) in each span of minutes (first, last), and succeed otherwise."""
    counts, total = [], 0
    for minute in range(minutes + 1):
        total += 2 if any(first <= minute <= last for first, last in spans) else 0
        counts.append(str(total))
    values = " ".join(counts)
    return [
        keda_errors("keda_scaler_detail_errors_total", TRIGGER, values),
        keda_errors("keda_scaled_object_errors_total", {}, values),
    ]


KEDA_QUIET: Firing = {"VllmAutoscalerScalerErrors": [], "VllmAutoscalerFallbackActive": []}
# Both replicas fail at minute 10 and serve again from minute 20; KEDA's queries fail from 10 until its first
# successful read of them, a minute after kube-state-metrics counts them available (the lag: vLLM's scrapes, KEDA's
# poll).
OUTAGE_ENDS = 20


@promtool_scenario
def test_keda_errors_left_from_an_outage_raise_no_keda_alert_once_the_replicas_serve_again() -> UnitTest:
    series = [
        *deployment("2x40", "2x9 0x9 2x20"),
        *[vllm(pod, "3x9 _x11 3x20") for pod in PODS],
        *keda_failing(((10, OUTAGE_ENDS + 1),), 40),
    ]
    # 30m: the failures of 20m-21m are still in the 10-minute increase() although a replica was available all along it.
    return unit_test(series, {minute: KEDA_QUIET for minute in ("21m", "23m", "26m", "30m", "31m", "33m", "40m")})


@promtool_scenario
def test_keda_errors_of_a_first_install_loading_its_model_raise_no_keda_alert_once_it_serves() -> UnitTest:
    # The ScaledObject and the Deployment land together (a rendered folder applied at once); the queries fail while
    # the model loads, until a minute after the replicas are available at minute 20.
    series = [
        *deployment("2x40", "0x19 2x21", created="0x40"),
        *[vllm(pod, "_x20 3x20") for pod in PODS],
        *keda_failing(((0, 21),), 40),
    ]
    return unit_test(series, {minute: KEDA_QUIET for minute in ("19m", "21m", "25m", "30m", "31m", "33m")})


@promtool_scenario
def test_keda_errors_that_begin_while_the_replicas_serve_after_a_recovery_still_raise_both_alerts() -> UnitTest:
    series = [
        *deployment("2x60", "2x9 0x9 2x40"),
        *[vllm(pod, "3x9 _x11 3x40") for pod in PODS],
        *keda_failing(((10, OUTAGE_ENDS + 1), (41, 60)), 60),
    ]
    trigger = {"scaledObject": "llama", "scaler": "prometheusScaler", "metric": "s0-prometheus"}
    firing: Firing = {"VllmAutoscalerScalerErrors": [trigger], "VllmAutoscalerFallbackActive": [{"scaledObject": "llama"}]}
    return unit_test(series, {"40m": KEDA_QUIET, "45m": firing, "55m": firing})


@promtool_scenario
def test_a_startup_probe_kill_loop_is_seen_where_the_restart_alert_is_blind() -> UnitTest:
    # A new replica killed every 40 minutes (2,360 s startup budget plus backoff), never ready.
    series = deployment("2x5 3x125", "2x130") + serving_pods(130) + container(NEW_POD, "_x5 0x40 1x40 2x40 3x5", "_x5 0x125")
    pod = {"namespace": "llm", "pod": NEW_POD, "container": "vllm"}
    loop: Firing = {"VllmStartupFailing": [pod], "VllmContainerRestarting": []}
    return unit_test(series, {"40m": {"VllmStartupFailing": []}, "50m": loop, "90m": loop, "128m": loop})


@promtool_scenario
def test_a_replica_that_crashed_once_and_reloaded_is_not_a_startup_failure() -> UnitTest:
    series = [
        *deployment("2x90", "2x30 1x30 2x30"),
        vllm(PODS[0], "3x30 _x30 3x30"),
        vllm(PODS[1], "3x90"),
        *container(PODS[0], "0x30 1x60", "1x30 0x30 1x30"),
    ]
    return unit_test(series, {"40m": {"VllmStartupFailing": []}, "80m": {"VllmStartupFailing": []}})


@promtool_scenario
def test_a_first_install_loading_its_model_pages_nothing() -> UnitTest:
    series = deployment("2x100", "0x58 2x42", created="0x100") + [vllm(pod, "_x58 3x42") for pod in PODS]
    return unit_test(series, {"30m": {}, "57m": {}, "90m": {}})


@promtool_scenario
def test_a_first_install_that_never_comes_up_pages_after_the_new_replica_window() -> UnitTest:
    series = deployment("2x100", "0x100", created="0x100")
    model = {"namespace": "llm", "model_name": "llama-8b"}
    return unit_test(
        series,
        {"61m": {}, "70m": {"VllmNoReplicaAvailable": [DEPLOYMENT], "VllmMetricsAbsent": [model]}},
    )


@promtool_scenario
def test_a_leaderworkerset_with_no_ready_group_pages_within_five_minutes() -> UnitTest:
    lws = Workload(namespace="llm", model_name="llama-8b", deployment_name="llama-group", kind="LeaderWorkerSet")
    leader = {"namespace": "llm", "statefulset": "llama-group"}
    match = labels(leader)
    series = [
        (f"kube_statefulset_replicas{match}", "2x40"),
        (f"kube_statefulset_status_replicas_ready{match}", "2x10 0x30"),
        (f"kube_statefulset_created{match}", LONG_AGO),
    ]
    return unit_test(series, {"15m": {"VllmNoReplicaAvailable": [leader]}}, workload=lws)


LWS = Workload(namespace="llm", model_name="llama-8b", deployment_name="llama-group", kind="LeaderWorkerSet")
LEADERS = labels({"namespace": "llm", "statefulset": "llama-group"})


def incarnation(k: int, minutes: int, values: str) -> str:
    """A pod's series in its k-th life: absent before minute k*minutes, then `values`."""
    return f"_x{k * minutes} {values}" if k else values


def recreated_group(lives: int, minutes: int) -> Series:
    """Group 1 of a LeaderWorkerSet whose worker's container fails `minutes` after each start: the kubelet
    restarts it once, and LWS deletes the leader and so the group, which comes back as new pods with new UIDs
    and restart counts from 0 (kubernetes-sigs/lws pkg/controllers/pod_controller.go@a8d8c525,
    handleRestartPolicy). Group 0 keeps serving."""
    series: Series = [
        (f"kube_statefulset_replicas{LEADERS}", "2x40"),
        (f"kube_statefulset_status_replicas_ready{LEADERS}", "1x40"),
        (f"kube_statefulset_created{LEADERS}", LONG_AGO),
        (labels_of("kube_pod_created", "llama-group-0", "a0"), "0x40"),
    ]
    for k in range(lives):
        uid, created = f"u{k}", str(k * minutes * 60)
        series.append(
            (labels_of("kube_pod_created", "llama-group-1", uid), incarnation(k, minutes, f"{created}x{minutes - 1}"))
        )
        worker = labels({"namespace": "llm", "pod": "llama-group-1-1", "container": "vllm", "uid": uid})
        restarts, ready = incarnation(k, minutes, f"0x{minutes - 2} 1"), incarnation(k, minutes, f"1x{minutes - 2} 0")
        series.append((f"kube_pod_container_status_restarts_total{worker}", restarts))
        series.append((f"kube_pod_container_status_ready{worker}", ready))  # no readiness probe: ready once started
    return series


def labels_of(metric: str, pod: str, uid: str) -> str:
    return metric + labels({"namespace": "llm", "pod": pod, "uid": uid})


@promtool_scenario
def test_a_group_recreated_by_a_failing_rank_raises_the_group_alert() -> UnitTest:
    # Each pod restarts once before LWS deletes it, so no pod reaches restarts_threshold (2 in 30m), and the worker
    # is ready while it runs, so VllmStartupFailing stays quiet too: only the leader's re-creations show the loop.
    series = recreated_group(lives=5, minutes=8)
    recreating: Firing = {"VllmGroupRecreating": [{"namespace": "llm", "pod": "llama-group-1"}], "VllmStartupFailing": []}
    return unit_test(series, {"10m": {"VllmGroupRecreating": []}, "20m": recreating, "35m": recreating}, workload=LWS)


@promtool_scenario
def test_a_group_rolled_once_by_an_update_raises_no_group_alert() -> UnitTest:
    return unit_test(recreated_group(lives=2, minutes=20), {"25m": {"VllmGroupRecreating": []}}, workload=LWS)
