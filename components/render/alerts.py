"""Prometheus alerting rules for one vLLM deployment, as PrometheusRule `spec.groups` (and a rule file).

Each alert carries labels.severity and annotations summary, description and runbook (the steps, as text).
Annotations use only `{{ $labels.* }}` templates, never `{{ $value }}`, so `promtool test rules` can state
them exactly. Thresholds keep vLLM's units: cache usage as a 0..1 fraction, latency in seconds.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from catalog import keda_http
from catalog.vllm_metrics import VersionMetrics
from components.render.promql import number, quantile
from config.observability import MonitoringConfig
from plan.monitoring import AlertThresholds
from plan.scaling import KEDA_HPA_PREFIX, Workload, selector
from plan.zero import ZeroPlan

LATENCY_QUANTILE = 0.99
SLOW = "10m"  # long enough that a burst the autoscaler absorbs does not page
STARTUP_MARGIN_S = 300  # past the rollout budget before a replica that is still coming up counts as stuck
# A total outage pages within 5 minutes of the last replica failing: the readiness probe needs 30 s to mark it
# unready (3 x 10 s, config/kubernetes.py), then a kube-state-metrics scrape and a rule evaluation (30 s each in
# kube-prometheus-stack) pass before the 3 minutes start.
OUTAGE_FOR = "3m"


_DURATION_PART = re.compile(r"([0-9]+)(ms|s|m|h)")
_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}


def duration_seconds(duration: str) -> float:
    """A Prometheus duration as written in the config (15m, 1h30m) in seconds."""
    return sum(int(amount) * _SECONDS[unit] for amount, unit in _DURATION_PART.findall(duration))


def not_ready_window(configured: str, rollout_seconds: int) -> str:
    """How long pods may be unready (or silent) before paging: the configured window, or, when a new replica
    may take longer (pulling the image on a new node, then loading), the rollout budget plus a margin, so a
    normal scale-up or first install never pages. Whole minutes, as Prometheus writes them."""
    needed = math.ceil((rollout_seconds + STARTUP_MARGIN_S) / 60) if rollout_seconds else 0
    return configured if duration_seconds(configured) >= needed * 60 else f"{needed}m"


@dataclass(frozen=True)
class Alert:
    alert: str
    expr: str
    severity: str
    summary: str
    description: str
    runbook: str
    for_: str | None = SLOW
    extra_labels: dict[str, str] = field(default_factory=dict)

    def rule(self) -> dict[str, Any]:
        rule: dict[str, Any] = {"alert": self.alert, "expr": self.expr}
        if self.for_:
            rule["for"] = self.for_
        rule["labels"] = {"severity": self.severity, **self.extra_labels}
        rule["annotations"] = {"summary": self.summary, "description": self.description, "runbook": self.runbook}
        return rule


def at_zero_lately(workload: Workload, window: str) -> str:
    """Series while the workload was scaled to zero at some point in `window`: at zero by design, or starting
    from zero (kube-state-metrics' wanted replicas, docs/scale-to-zero.md)."""
    wanted, _available, _owner = workload.replica_series()
    return f"(min_over_time({wanted}[{window}]) == 0)"


def zero_window(configured: str, limits: AlertThresholds, zero: ZeroPlan | None) -> str:
    """How long pods may be unready or silent: with scale to zero, also a whole cold start from zero."""
    rollout = max(limits.rollout_seconds, zero.cold_start.budget_seconds if zero is not None and zero.at_zero else 0)
    return not_ready_window(configured, rollout)


def unless_at_zero(expr: str, workload: Workload, window: str, zero: ZeroPlan | None, on: str) -> str:
    """`expr`, quiet while the workload is at zero by design or coming up from it."""
    if zero is None or not zero.at_zero:
        return expr
    return f"({expr}) unless {on} {at_zero_lately(workload, window)}"


def engine_alerts(
    cfg: MonitoringConfig,
    limits: AlertThresholds,
    metrics: VersionMetrics,
    workload: Workload,
    silent: str,
    zero: ZeroPlan | None = None,
) -> list[Alert]:
    """Saturation of the vLLM engine, from its own gauges and counters. `silent`: how long no vLLM pod may be up
    (zero_window: while one loads, and at zero)."""
    match, by = workload.vllm, "namespace, model_name"
    kv = number(cfg.kv_cache_usage_alert_threshold)
    queue = number(limits.queue_per_replica)
    return [
        Alert(
            "VllmKvCacheNearlyFull",
            f"max by ({by}, pod) ({metrics.kv_cache_usage}{match}) > {kv}",
            "warning",
            "vLLM KV cache nearly full on {{ $labels.pod }}",
            f"KV-cache usage of {{{{ $labels.pod }}}} has been above {kv} (a 0..1 fraction) for {SLOW}; "
            "new requests queue and running ones get preempted.",
            "1. Check the queue and preemption panels. 2. If autoscaling is at max replicas, raise "
            "autoscaling.max_replica_count. 3. Otherwise lower max_model_len or max_num_seqs, use "
            "kv_cache_dtype fp8, or a GPU with more memory, and rerun the preflight.",
        ),
        Alert(
            "VllmRequestsQueueing",
            f"avg by ({by}) (sum by ({by}, pod) (vllm:num_requests_waiting{match})) > {queue}",
            "warning",
            "vLLM requests are queueing for {{ $labels.model_name }}",
            f"More than {queue} requests per replica have been waiting for {SLOW}: the replicas are saturated "
            "and scaling has not caught up.",
            "1. Check the replicas panel: is KEDA at max_replica_count, or are new pods Pending for GPUs? "
            "2. Check KV-cache usage: a full cache limits the batch. 3. Add GPU nodes or raise "
            "autoscaling.max_replica_count.",
        ),
        Alert(
            "VllmPreemptions",
            f"sum by ({by}) (rate(vllm:num_preemptions_total{match}[5m])) > {number(cfg.preemptions_per_second_threshold)}",
            "warning",
            "vLLM is preempting requests for {{ $labels.model_name }}",
            f"More than {number(cfg.preemptions_per_second_threshold)} preemptions per second for {SLOW}: the "
            "KV cache runs out mid-request and work is recomputed.",
            "1. Lower max_num_seqs so the batch fits the KV cache the preflight computed. 2. Scale out "
            "(autoscaling.kv_cache_usage_threshold lower). 3. Use kv_cache_dtype fp8 or a larger GPU.",
        ),
        Alert(
            "VllmMetricsAbsent",
            unless_at_zero(f"absent(vllm:num_requests_running{match})", workload, silent, zero, "on ()"),
            "critical",
            "No vLLM metrics for {{ $labels.model_name }}",
            f"Prometheus has had no vllm:num_requests_running series for {silent}, longer than a model "
            "load: the autoscaler is on its fallback and the dashboard is empty.",
            "1. Are the pods running? 2. Does the ServiceMonitor carry the kube-prometheus-stack release "
            "label (monitoring.release)? Check Prometheus > Status > Targets. 3. Is --disable-log-stats set "
            "(it removes every vllm: metric)? 4. Does engine.served_model_name match the model_name label?",
            for_=silent,
        ),
    ]


def latency_alerts(cfg: MonitoringConfig, metrics: VersionMetrics, workload: Workload) -> list[Alert]:
    """Latency against the SLOs, and request errors where the version has an HTTP counter."""
    match, by = workload.vllm, ("namespace", "model_name")
    ttft, itl = number(cfg.time_to_first_token_p99_slo_seconds), number(cfg.inter_token_latency_p99_slo_seconds)
    alerts = [
        Alert(
            "VllmTimeToFirstTokenHigh",
            f"{quantile(LATENCY_QUANTILE, 'vllm:time_to_first_token_seconds', match, by)} > {ttft}",
            "warning",
            "vLLM p99 time to first token above the SLO for {{ $labels.model_name }}",
            f"p99 time to first token has been above {ttft}s for {SLOW}.",
            "1. Queueing? Check waiting requests and scale out. 2. Long prompts? Check prompt tokens; "
            "raise max_num_batched_tokens for faster prefill. 3. Prefix-cache hit rate dropped?",
        ),
        Alert(
            "VllmInterTokenLatencyHigh",
            f"{quantile(LATENCY_QUANTILE, metrics.inter_token_latency, match, by)} > {itl}",
            "warning",
            "vLLM p99 inter-token latency above the SLO for {{ $labels.model_name }}",
            f"p99 time between output tokens has been above {itl}s for {SLOW}.",
            "1. Batches too large: lower max_num_seqs or scale on running requests. 2. Preemptions? "
            "3. GPU utilisation and clocks (DCGM) for a throttled GPU.",
        ),
    ]
    if metrics.http_requests:
        total = workload.pods()
        failed = total[:-1] + ',status=~"5.."}'  # "5xx" when the instrumentator groups status codes
        ratio = (
            f"sum by (namespace) (rate({metrics.http_requests}{failed}[5m])) / "
            f"sum by (namespace) (rate({metrics.http_requests}{total}[5m]))"
        )
        alerts.append(
            Alert(
                "VllmRequestErrors",
                f"{ratio} > {number(cfg.error_ratio_threshold)}",
                "critical",
                "vLLM requests failing in {{ $labels.namespace }}",
                f"More than {number(cfg.error_ratio_threshold)} of HTTP requests to the vLLM pods have answered 5xx for 5m.",
                "1. Read the pod logs for tracebacks. 2. Engine dead after a CUDA error? Restart the pod. "
                "3. Requests longer than max_model_len come back 400, not 5xx.",
                for_="5m",
            )
        )
    return alerts


def rollout_stuck_alert(workload: Workload) -> Alert:
    """The Deployment controller sets Progressing=False (reason ProgressDeadlineExceeded) once a rollout has run
    past progressDeadlineSeconds, the rollout budget (kubernetes/kube-state-metrics/docs/metrics/workload/deployment-metrics.md:
    kube_deployment_status_condition, status true|false|unknown). A LeaderWorkerSet has no such condition series."""
    deployment = selector(
        {"namespace": workload.namespace, "deployment": workload.deployment_name, "condition": "Progressing", "status": "false"}
    )
    return Alert(
        "VllmRolloutStuck",
        f"kube_deployment_status_condition{deployment} == 1",
        "critical",
        "vLLM rollout stuck in {{ $labels.namespace }}/{{ $labels.deployment }}",
        "The Deployment's rollout has run past its progress deadline (the rollout budget) without new "
        "replicas becoming available.",
        "1. kubectl rollout status and describe the new pods: Pending on GPUs, image pull, or a crash "
        "loop? 2. kubectl rollout undo if the new revision cannot start.",
        for_="1m",
    )


def no_replica_alert(unready: str, workload: Workload, zero: ZeroPlan | None = None) -> Alert:
    """A total outage: no replica available while some are wanted. A LeaderWorkerSet has no kube-state-metrics
    series of its own (custom resources need a custom-resource-state configuration), but the leader StatefulSet
    LWS creates under its name has, and a leader is ready only once its whole group has joined (docs/multinode.md).
    kube_<kind>_created (kubernetes/kube-state-metrics/docs/metrics/workload/deployment-metrics.md@06d14813 and
    statefulset-metrics.md@098e785d) keeps a first install quiet for the new-replica window: nothing served yet."""
    wanted, available, owner = workload.replica_series()
    on = f"on (namespace, {owner})"
    created = f"kube_{owner}_created{selector({'namespace': workload.namespace, owner: workload.deployment_name})}"
    age = int(duration_seconds(unready))
    expr = f"({available} == 0) and {on} ({wanted} > 0) and {on} (time() - {created} > {age})"
    return Alert(
        "VllmNoReplicaAvailable",
        unless_at_zero(expr, workload, unready, zero, on),
        "critical",
        f"No vLLM replica available in {{{{ $labels.namespace }}}}/{{{{ $labels.{owner} }}}}",
        f"Every replica has been unavailable for {OUTAGE_FOR}: requests to the model fail. With one replica a "
        "rollout is an outage too (strategy Recreate).",
        "1. kubectl get pods: CrashLoopBackOff, Pending on GPUs, or evicted? 2. kubectl logs --previous: CUDA "
        "error, OOM (VllmContainerOOMKilled), startup probe kills (VllmStartupFailing)? 3. Node or GPU lost: "
        "check node conditions and DCGM XID errors. 4. kubectl rollout undo if a new revision cannot start.",
        for_=OUTAGE_FOR,
    )


def replicas_short_alert(unready: str, workload: Workload, zero: ZeroPlan | None = None) -> Alert:
    """A capacity shortfall (a scale-up waiting for GPU nodes, one replica lost): a warning, and only once a
    new replica has had the time it may take; no replica at all is VllmNoReplicaAvailable."""
    wanted, available, owner = workload.replica_series()
    return Alert(
        "VllmReplicasNotReady",
        unless_at_zero(f"{wanted} > on (namespace, {owner}) {available}", workload, unready, zero, f"on (namespace, {owner})"),
        "warning",
        f"vLLM replicas not ready in {{{{ $labels.namespace }}}}/{{{{ $labels.{owner} }}}}",
        f"Fewer replicas are available than wanted for {unready}, longer than a new replica may take "
        "(image pull and model load, the rollout budget): the deployment serves below its capacity.",
        "1. kubectl describe pod: Pending on GPUs (node labels, taints, quota)? 2. Startup probe kills "
        "during model download or load? 3. Logs: CUDA OOM or 'KV cache needed > available' means the "
        "preflight inputs differ from the node.",
        for_=unready,
    )


def startup_failing_alert(unready: str, workload: Workload) -> Alert:
    """A container that restarts without ever becoming ready: the startup probe killed it (the model takes longer
    than the startup budget) or it crashed while loading. Such a loop restarts once per startup budget, too rarely
    for VllmContainerRestarting's 30m; the window here outlasts the budget and the restart backoff (the new-replica
    window: image pull + budget + 2m + 5m), so it holds for as long as the loop lasts. The last terminated reason
    cannot tell a probe kill (reason Error) from a crash: OOMKilled, Error, Completed or ContainerCannotRun
    (kubernetes/kube-state-metrics/docs/metrics/workload/pod-metrics.md@96a6db87)."""
    pods = workload.pods()
    return Alert(
        "VllmStartupFailing",
        f"(increase(kube_pod_container_status_restarts_total{pods}[{unready}]) > 0) unless on (namespace, pod, "
        f"container) (max_over_time(kube_pod_container_status_ready{pods}[{unready}]) == 1)",
        "warning",
        "vLLM never became ready on {{ $labels.pod }}",
        f"{{{{ $labels.pod }}}} restarted in the last {unready} without becoming ready: the startup probe "
        "killed it before the model loaded, or it crashed while loading.",
        "1. kubectl describe pod: 'Startup probe failed' events mean the load outlasts the startup budget; "
        "rerun the preflight with the node's real download and load speed. 2. kubectl logs --previous for a "
        "crash (CUDA OOM, bad engine flag). 3. Is the model cache complete (the download Job's log)?",
        for_=None,
    )


def kubernetes_alerts(
    cfg: MonitoringConfig, limits: AlertThresholds, workload: Workload, unready: str, zero: ZeroPlan | None = None
) -> list[Alert]:
    """Pod lifecycle from kube-state-metrics. `unready`: how long pods may be unready (zero_window)."""
    pods = workload.pods()
    alerts = [
        no_replica_alert(unready, workload, zero),
        replicas_short_alert(unready, workload, zero),
        startup_failing_alert(unready, workload),
        group_recreating_alert(cfg, workload) if workload.kind == "LeaderWorkerSet" else restarting_alert(cfg, workload),
        Alert(
            "VllmContainerOOMKilled",
            f"(increase(kube_pod_container_status_restarts_total{pods}[10m]) > 0) and on (namespace, pod, container) "
            f"(kube_pod_container_status_last_terminated_reason{workload.pods(reason='OOMKilled')} == 1)",
            "critical",
            "vLLM container OOM-killed: {{ $labels.pod }}",
            "{{ $labels.pod }} was killed for exceeding its memory limit (host RAM, not GPU memory).",
            "1. Raise the container memory limit: weights pass through host RAM while loading. 2. V0 "
            "(0.7.x) reserves --swap-space (4 GiB) of CPU memory per GPU. 3. Check /dev/shm sizing.",
            for_=None,
        ),
    ]
    if workload.kind == "Deployment":
        alerts.insert(2, rollout_stuck_alert(workload))
    if workload.hpa_name:
        alerts += autoscaler_alerts(workload, workload.hpa_name, cfg.interval)
    return alerts


def restarting_alert(cfg: MonitoringConfig, workload: Workload) -> Alert:
    return Alert(
        "VllmContainerRestarting",
        f"increase(kube_pod_container_status_restarts_total{workload.pods()}[30m]) >= {cfg.restarts_threshold}",
        "warning",
        "vLLM container restarting: {{ $labels.pod }}",
        f"{{{{ $labels.pod }}}} restarted at least {cfg.restarts_threshold} times in 30m.",
        "1. kubectl logs --previous. 2. Liveness probe timeouts under load? 3. See VllmContainerOOMKilled.",
        for_=None,
    )


def group_recreating_alert(cfg: MonitoringConfig, workload: Workload) -> Alert:
    """VllmContainerRestarting for a LeaderWorkerSet. LWS deletes a group's leader, and so the group, on the first
    container restart of any of its pods (kubernetes-sigs/lws pkg/controllers/pod_controller.go@a8d8c525,
    handleRestartPolicy); the new pods count restarts from 0, so no pod ever restarts twice. The leader's creation
    time (kube_pod_created, kubernetes/kube-state-metrics/docs/metrics/workload/pod-metrics.md@96a6db87) changes
    with each recreation instead; `max by` keeps one series per leader name whether or not the exporter adds the
    pod's uid."""
    created = f"max by (namespace, pod) (kube_pod_created{workload.leaders()})"
    threshold = cfg.restarts_threshold
    return Alert(
        "VllmGroupRecreating",
        f"changes(({created})[30m:1m]) >= {threshold}",
        "warning",
        "vLLM group recreated: {{ $labels.pod }}",
        f"The group led by {{{{ $labels.pod }}}} was recreated at least {threshold} times in 30m: a container of "
        "one of its ranks keeps failing, and LeaderWorkerSet restarts the whole group each time.",
        "1. kubectl logs -f on each rank of the group as it starts: a recreated pod keeps no --previous log. "
        "2. NCCL errors: multinode.nccl_env, the RDMA devices, the rank traffic in the NetworkPolicy. "
        "3. See VllmContainerOOMKilled.",
        for_=None,
    )


def scaled_object_name(hpa_name: str) -> str:
    """The ScaledObject whose HPA this is: KEDA's metrics name the ScaledObject, the HPA carries its name."""
    if not hpa_name.startswith(KEDA_HPA_PREFIX):
        raise ValueError(f"{hpa_name!r} is not a KEDA HPA name ({KEDA_HPA_PREFIX}<ScaledObject>)")
    return hpa_name.removeprefix(KEDA_HPA_PREFIX)


def keda_increase(metric: str, workload: Workload, scaled_object: str, window: str) -> str:
    """increase() of a KEDA operator counter for this ScaledObject. Its `namespace` label is the ScaledObject's;
    scraped without honorLabels (the KEDA chart's ServiceMonitor and PodMonitor set none) it becomes
    `exported_namespace`, the target's namespace taking its place, so both spellings are read."""
    return " or ".join(
        f"increase({metric}{selector({label: workload.namespace, 'scaledObject': scaled_object})}[{window}])"
        for label in ("namespace", "exported_namespace")
    )


SCALER_ERRORS_WINDOW = "10m"  # VllmAutoscalerScalerErrors: failed trigger queries within it
FALLBACK_WINDOW = "2m"  # VllmAutoscalerFallbackActive: failed queries in every such window


def first_read_lag_minutes(scrape_interval: str) -> int:
    """From a replica counted available to KEDA's first successful query of it, whole minutes up: two of vLLM's
    scrapes (the latency trigger's rate() needs two samples), then a minute for kube-state-metrics' scrape, KEDA's
    poll and the scrape of KEDA's own counters. The queries fail by design until then."""
    return math.ceil((2 * duration_seconds(scrape_interval) + 60) / 60)


def serving_throughout(workload: Workload, window: str, lag_minutes: int) -> str:
    """The guard of an alert counting KEDA's failures over `window`: some replica was available at every sample of
    the window and of the `lag_minutes` before it (first_read_lag_minutes). Availability now is not enough: the
    failures of a time with none available (by design) stay in the window's increase() after one comes back."""
    _, available, _ = workload.replica_series()
    minutes = math.ceil(duration_seconds(window) / 60) + lag_minutes
    return f"and on () (min_over_time({available}[{minutes}m]) > 0)"


def autoscaler_alerts(workload: Workload, hpa_name: str, scrape_interval: str) -> list[Alert]:
    """KEDA at its maximum, failing trigger queries, and the fallback those failures switch on.

    KEDA (>= 2.16, catalog/keda.py OLDEST_SUPPORTED) counts failed trigger queries per ScaledObject and trigger
    in keda_scaler_detail_errors_total and per ScaledObject in keda_scaled_object_errors_total
    (kedacore/keda/pkg/metricscollector/prommetrics.go@0677effe:35,80-97); keda_scaler_errors_total was
    deprecated in 2.14 and removed in 2.16 (kedacore/keda-docs/content/docs/2.14/integrations/prometheus.md@b3280b7d).
    No metric reports the fallback: KEDA counts failed reads in a row, resets the count on a success, and falls
    back past fallback.failureThreshold (pkg/fallback/fallback.go@dfe21b06:62-85), recording it only as the
    ScaledObject's Fallback condition, which kube-state-metrics does not export. Failures in every 2-minute
    window for 2 minutes stand in for it: the HPA reads every 15 s, so a query failing throughout has failed
    8 or more reads in a row, past the default threshold of 3 (an autoscaling.fallback_failure_threshold above
    8 makes the alert early; failures every other minute raise it without a fallback). Both stay quiet unless a
    replica was available throughout their window and the lag before KEDA first reads it (serving_throughout):
    while none is, ignoreNullValues "false" makes KEDA fail by design and VllmNoReplicaAvailable pages, and those
    failures stay in the window's increase() after the first replica comes back (a first install, a one-replica
    rollout, a recovery from an outage). `scrape_interval`: the ServiceMonitor's (monitoring.interval).
    """
    hpa = selector({"namespace": workload.namespace, "horizontalpodautoscaler": hpa_name})
    scaled = scaled_object_name(hpa_name)
    lag = first_read_lag_minutes(scrape_interval)
    trigger_errors = keda_increase("keda_scaler_detail_errors_total", workload, scaled, SCALER_ERRORS_WINDOW)
    object_errors = keda_increase("keda_scaled_object_errors_total", workload, scaled, FALLBACK_WINDOW)
    trigger_guard, object_guard = (serving_throughout(workload, w, lag) for w in (SCALER_ERRORS_WINDOW, FALLBACK_WINDOW))
    return [
        Alert(
            "VllmAutoscalerAtMaxReplicas",
            f"kube_horizontalpodautoscaler_status_current_replicas{hpa} >= on (namespace, horizontalpodautoscaler) "
            f"kube_horizontalpodautoscaler_spec_max_replicas{hpa}",
            "warning",
            "vLLM autoscaler at max replicas: {{ $labels.horizontalpodautoscaler }}",
            "KEDA has held the deployment at autoscaling.max_replica_count for 15m; more load will queue.",
            "1. Raise autoscaling.max_replica_count if GPUs are free. 2. Check queue and latency panels. 3. Add GPU nodes.",
            for_="15m",
        ),
        Alert(
            "VllmAutoscalerScalerErrors",
            f"sum by (scaledObject, scaler, metric) ({trigger_errors}) > 0 {trigger_guard}",
            "warning",
            "KEDA trigger {{ $labels.metric }} failing for {{ $labels.scaledObject }}",
            f"KEDA's query for this trigger failed in the last {SCALER_ERRORS_WINDOW} while vLLM served throughout: "
            "the HPA missed readings, "
            "and repeated failures switch the ScaledObject to its fallback.",
            "1. kubectl logs -n <keda namespace> deploy/keda-operator | grep prometheus. 2. Can KEDA reach "
            "Prometheus (monitoring.prometheus_service, NetworkPolicy, auth)? 3. Does the query return one "
            "sample (engine.served_model_name is the model_name label)?",
            for_=None,
        ),
        Alert(
            "VllmAutoscalerFallbackActive",
            f"sum by (scaledObject) ({object_errors}) > 0 {object_guard}",
            "warning",
            "KEDA on its fallback for {{ $labels.scaledObject }}",
            f"KEDA's trigger queries have failed continuously for {FALLBACK_WINDOW} while vLLM served: past "
            "fallback.failureThreshold, KEDA holds "
            "the replicas at autoscaling.fallback_replicas (or the current count, by fallback.behavior) and no "
            "longer follows the load.",
            "1. Fix the failing queries (VllmAutoscalerScalerErrors). 2. Under load, scale by hand: kubectl "
            "annotate scaledobject <name> autoscaling.keda.sh/paused-replicas=<n>. 3. kubectl get scaledobject "
            "<name> -o yaml: status.conditions Fallback and status.health.",
            for_="2m",
        ),
    ]


def gpu_alerts(cfg: MonitoringConfig, limits: AlertThresholds, workload: Workload) -> list[Alert]:
    """GPU memory from the GPU vendor's exporter (DCGM's FB_USED and FB_FREE in MiB, so their ratio is unitless)."""
    exporter = limits.gpu_exporter
    used_mib, free_mib = exporter.memory_used, exporter.memory_free
    pods = workload.pods(cfg.dcgm_namespace_label, cfg.dcgm_pod_label)
    used = number(limits.gpu_memory_used_fraction)
    by = f"{cfg.dcgm_namespace_label}, {cfg.dcgm_pod_label}, gpu"
    return [
        Alert(
            "VllmGpuMemoryNearlyFull",
            f"max by ({by}) ({used_mib}{pods} / ({used_mib}{pods} + {free_mib}{pods})) > {used}",
            "warning",
            "GPU memory nearly full under vLLM",
            f"A GPU used by the deployment has been above {used} of its memory for {SLOW}; vLLM only claims "
            "gpu_memory_utilization, so another process shares the GPU or allocations grew (CUDA OOM follows).",
            "1. nvidia-smi on the node: other processes on the GPU? 2. Lower engine.gpu_memory_utilization. "
            "3. Long prompts with large max_num_batched_tokens raise activation memory.",
        )
    ]


def interceptor_match(zero: ZeroPlan, **extra: str) -> str:
    """The interceptor's series for this HTTPScaledObject (catalog/keda_http.py: route_name, route_namespace)."""
    return selector({"route_name": zero.name, "route_namespace": zero.namespace, **extra})


def interceptor_alerts(zero: ZeroPlan, workload: Workload) -> list[Alert]:
    """Requests the KEDA HTTP add-on holds longer than a cold start may take, and requests it gave up on. Its
    metrics come from the interceptor's own scrape (port 2223 /metrics), which the add-on's install configures."""
    _wanted, available, owner = workload.replica_series()
    budget = zero.cold_start.budget_seconds
    held = f"sum({keda_http.CONCURRENCY}{interceptor_match(zero)})"
    codes = "|".join(keda_http.GAVE_UP_CODES)
    gave_up = f'sum(increase({keda_http.REQUEST_COUNT}{interceptor_match(zero)[:-1]},code=~"{codes}"}}[5m]))'
    return [
        Alert(
            "VllmColdStartTooLong",
            f"({held} > 0) and on () (sum({available}) == 0)",
            "critical",
            f"Requests held with no vLLM replica in {zero.namespace}/{zero.workload.deployment_name}",
            f"The KEDA HTTP add-on's interceptor has held requests with no ready replica of the {owner} for "
            f"longer than the cold start's budget ({budget} s: {zero.cold_start.explain()}).",
            "1. kubectl get pods: Pending on a GPU node (node provisioning, quota), pulling the image, or loading? "
            "2. kubectl get httpscaledobject and the ScaledObject the add-on made: Ready, Active? "
            "3. If starts are this slow, keep a replica (autoscaling.min_replica_count: 1) or deliver faster.",
            for_=f"{math.ceil(budget / 60)}m",
        ),
        Alert(
            "VllmInterceptorGaveUp",
            f"{gave_up} > 0",
            "critical",
            f"The KEDA HTTP add-on dropped requests for {zero.namespace}/{zero.name}",
            f"The interceptor answered {' or '.join(keda_http.GAVE_UP_CODES)} in the last 5m: a request outwaited "
            f"timeouts.conditionWait ({zero.condition_wait_seconds} s) or the server could not be reached.",
            "1. Was the server at zero? Compare the cold start with conditionWait (python -m preflight STACK). "
            "2. kubectl logs -n <add-on namespace> the interceptor. 3. Keep one replica, or raise the timeouts "
            "on the path (docs/scale-to-zero.md).",
            for_=None,
        ),
    ]


def render_rule_groups(
    cfg: MonitoringConfig,
    limits: AlertThresholds,
    metrics: VersionMetrics,
    workload: Workload,
    zero: ZeroPlan | None = None,
) -> list[dict[str, Any]]:
    """PrometheusRule spec.groups; also a valid Prometheus rule file as {"groups": ...}. `zero`: the KEDA HTTP
    add-on in front, whose interceptor's alerts join, and at zero by design the replica alerts stay quiet."""
    prefix, unready = workload.deployment_name, zero_window(cfg.not_ready_for, limits, zero)
    groups = [
        (f"{prefix}-vllm-engine", engine_alerts(cfg, limits, metrics, workload, unready, zero)),
        (f"{prefix}-vllm-latency", latency_alerts(cfg, metrics, workload)),
        (f"{prefix}-vllm-kubernetes", kubernetes_alerts(cfg, limits, workload, unready, zero)),
        (f"{prefix}-vllm-gpu", gpu_alerts(cfg, limits, workload)),
    ]
    if zero is not None:
        groups.append((f"{prefix}-keda-http-add-on", interceptor_alerts(zero, workload)))
    return [{"name": name, "rules": [alert.rule() for alert in alerts]} for name, alerts in groups]


def render_prometheus_rule(name: str, labels: dict[str, str], groups: list[dict[str, Any]], namespace: str) -> dict[str, Any]:
    """The monitoring.coreos.com/v1 PrometheusRule; `labels` must include what the Prometheus ruleSelector matches."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {"groups": groups},
    }
