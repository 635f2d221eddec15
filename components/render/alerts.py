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

from catalog.gpus import NVIDIA
from catalog.vllm_metrics import VersionMetrics
from components.render.promql import number, quantile
from config.observability import MonitoringConfig
from plan.monitoring import AlertThresholds
from plan.scaling import Workload, selector

LATENCY_QUANTILE = 0.99
SLOW = "10m"  # long enough that a burst the autoscaler absorbs does not page
STARTUP_MARGIN_S = 300  # past the rollout budget before a replica that is still coming up counts as stuck


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


def engine_alerts(cfg: MonitoringConfig, limits: AlertThresholds, metrics: VersionMetrics, workload: Workload) -> list[Alert]:
    """Saturation of the vLLM engine, from its own gauges and counters."""
    match, by = workload.vllm, "namespace, model_name"
    kv = number(cfg.kv_cache_usage_alert_threshold)
    queue = number(limits.queue_per_replica)
    silent = not_ready_window(cfg.not_ready_for, limits.rollout_seconds)  # no vLLM pod is up while it loads
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
            f"absent(vllm:num_requests_running{match})",
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


def kubernetes_alerts(cfg: MonitoringConfig, limits: AlertThresholds, workload: Workload) -> list[Alert]:
    """Pod lifecycle from kube-state-metrics."""
    wanted, available, owner = workload.replica_series()
    pods = workload.pods()
    unready = not_ready_window(cfg.not_ready_for, limits.rollout_seconds)
    alerts = [
        Alert(
            "VllmReplicasNotReady",
            f"{wanted} > on (namespace, {owner}) {available}",
            "critical",
            f"vLLM replicas not ready in {{{{ $labels.namespace }}}}/{{{{ $labels.{owner} }}}}",
            f"Fewer replicas are available than wanted for {unready}, longer than a new replica may take "
            "(image pull and model load, the rollout budget).",
            "1. kubectl describe pod: Pending on GPUs (node labels, taints, quota)? 2. Startup probe kills "
            "during model download or load? 3. Logs: CUDA OOM or 'KV cache needed > available' means the "
            "preflight inputs differ from the node.",
            for_=unready,
        ),
        Alert(
            "VllmContainerRestarting",
            f"increase(kube_pod_container_status_restarts_total{pods}[30m]) >= {cfg.restarts_threshold}",
            "warning",
            "vLLM container restarting: {{ $labels.pod }}",
            f"{{{{ $labels.pod }}}} restarted at least {cfg.restarts_threshold} times in 30m.",
            "1. kubectl logs --previous. 2. Liveness probe timeouts under load? 3. See VllmContainerOOMKilled.",
            for_=None,
        ),
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
        alerts.insert(1, rollout_stuck_alert(workload))
    if workload.hpa_name:
        hpa = selector({"namespace": workload.namespace, "horizontalpodautoscaler": workload.hpa_name})
        alerts.append(
            Alert(
                "VllmAutoscalerAtMaxReplicas",
                f"kube_horizontalpodautoscaler_status_current_replicas{hpa} >= on (namespace, horizontalpodautoscaler) "
                f"kube_horizontalpodautoscaler_spec_max_replicas{hpa}",
                "warning",
                "vLLM autoscaler at max replicas: {{ $labels.horizontalpodautoscaler }}",
                "KEDA has held the deployment at autoscaling.max_replica_count for 15m; more load will queue.",
                "1. Raise autoscaling.max_replica_count if GPUs are free. 2. Check queue and latency panels. 3. Add GPU nodes.",
                for_="15m",
            )
        )
    return alerts


FB_USED, FB_FREE = NVIDIA.exporter.memory_used, NVIDIA.exporter.memory_free  # the GPU vendor's exporter (catalog)


def gpu_alerts(cfg: MonitoringConfig, limits: AlertThresholds, workload: Workload) -> list[Alert]:
    """GPU memory from the DCGM exporter (FB_USED and FB_FREE in MiB, so their ratio is unitless)."""
    pods = workload.pods(cfg.dcgm_namespace_label, cfg.dcgm_pod_label)
    used = number(limits.gpu_memory_used_fraction)
    by = f"{cfg.dcgm_namespace_label}, {cfg.dcgm_pod_label}, gpu"
    return [
        Alert(
            "VllmGpuMemoryNearlyFull",
            f"max by ({by}) ({FB_USED}{pods} / ({FB_USED}{pods} + {FB_FREE}{pods})) > {used}",
            "warning",
            "GPU memory nearly full under vLLM",
            f"A GPU used by the deployment has been above {used} of its memory for {SLOW}; vLLM only claims "
            "gpu_memory_utilization, so another process shares the GPU or allocations grew (CUDA OOM follows).",
            "1. nvidia-smi on the node: other processes on the GPU? 2. Lower engine.gpu_memory_utilization. "
            "3. Long prompts with large max_num_batched_tokens raise activation memory.",
        )
    ]


def render_rule_groups(
    cfg: MonitoringConfig, limits: AlertThresholds, metrics: VersionMetrics, workload: Workload
) -> list[dict[str, Any]]:
    """PrometheusRule spec.groups; also a valid Prometheus rule file as {"groups": ...}."""
    prefix = workload.deployment_name
    groups = [
        (f"{prefix}-vllm-engine", engine_alerts(cfg, limits, metrics, workload)),
        (f"{prefix}-vllm-latency", latency_alerts(cfg, metrics, workload)),
        (f"{prefix}-vllm-kubernetes", kubernetes_alerts(cfg, limits, workload)),
        (f"{prefix}-vllm-gpu", gpu_alerts(cfg, limits, workload)),
    ]
    return [{"name": name, "rules": [alert.rule() for alert in alerts]} for name, alerts in groups]


def render_prometheus_rule(name: str, labels: dict[str, str], groups: list[dict[str, Any]], namespace: str) -> dict[str, Any]:
    """The monitoring.coreos.com/v1 PrometheusRule; `labels` must include what the Prometheus ruleSelector matches."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {"groups": groups},
    }
