"""The KEDA ScaledObject (keda.sh/v1alpha1) for the vLLM Deployment, and thresholds derived from capacity.

KEDA facts (docs/sources.md §D): a Prometheus trigger query must return exactly one element; with
metricType AverageValue the HPA wants ceil(value / threshold) replicas, so a `sum()` over pods with a
per-replica threshold (every trigger here: see trigger_queries).
`ignoreNullValues` defaults to true, turning an empty result into 0 and a silent scale-down; "false"
makes it an error, which the `fallback` block then handles. Trigger metadata values are strings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from catalog import keda
from catalog.vllm_metrics import VersionMetrics
from components.render.promql import Workload, number, quantile
from config.observability import AutoscalingConfig

if TYPE_CHECKING:
    from preflight.report import Sizing

API_VERSION = "keda.sh/v1alpha1"
KIND = "ScaledObject"
LATENCY_QUANTILE = 0.95
LATENCY_WINDOW = "2m"  # short, so the trigger follows load; alerts use 5m
DEFAULT_FALLBACK_BEHAVIOR = "currentReplicasIfHigher"  # never scale down because Prometheus is unreachable


@dataclass(frozen=True)
class Capacity:
    """What one replica can hold, from the preflight."""

    max_num_seqs: int  # batch slots vLLM schedules at once
    kv_cache_tokens: int  # KV-cache tokens per replica
    tokens_per_request: int  # the preflight's concurrency target: prompt + output tokens per request
    gpu_memory_utilization: float

    @property
    def concurrency(self) -> int:
        """Requests one replica runs at once: batch slots, unless the KV cache fills first."""
        return max(1, min(self.max_num_seqs, self.kv_cache_tokens // max(1, self.tokens_per_request)))


def capacity_from_report(report: Sizing) -> Capacity:
    return Capacity(
        max_num_seqs=report.resolved.max_num_seqs,
        kv_cache_tokens=report.kv_cache_tokens,
        tokens_per_request=report.target_tokens_per_request,
        gpu_memory_utilization=report.resolved.gpu_memory_utilization,
    )


@dataclass(frozen=True)
class Thresholds:
    queue: float  # waiting requests per replica
    running: float  # running requests per replica
    kv_cache_usage: float  # 0..1, average over replicas
    latency_seconds: float  # p95 time to first token


def derived_queue_threshold(fraction: float, capacity: Capacity) -> int:
    """Waiting requests per replica worth another replica.

    A replica running `concurrency` requests finishes them at concurrency / duration per second, so a queue of
    fraction x concurrency waits about fraction x one request's duration. 0.1 of 256 slots: 26 waiting.
    """
    return max(1, math.ceil(fraction * capacity.concurrency))


def derived_running_threshold(headroom: float, capacity: Capacity) -> int:
    """Running requests per replica to aim for: the replica's concurrency less headroom for bursts."""
    return max(1, math.floor(headroom * capacity.concurrency))


def derive_thresholds(cfg: AutoscalingConfig, capacity: Capacity) -> Thresholds:
    """The configured thresholds, with the unset ones derived from capacity."""
    queue = cfg.queue_threshold or derived_queue_threshold(cfg.queue_fraction, capacity)
    running = cfg.running_threshold or derived_running_threshold(cfg.running_headroom, capacity)
    return Thresholds(
        queue=queue, running=running, kv_cache_usage=cfg.kv_cache_usage_threshold, latency_seconds=cfg.latency_threshold_seconds
    )


def hpa_name(scaled_object_name: str) -> str:
    """The HPA KEDA creates (and the alerts watch): KEDA's default name, set explicitly."""
    return f"keda-hpa-{scaled_object_name}"


def trigger_queries(metrics: VersionMetrics, workload: Workload) -> dict[str, tuple[str, str]]:
    """Per trigger name: (query, metricType). Each query returns exactly one series.

    Every trigger is AverageValue: KEDA before 2.18 refuses a `fallback` unless every trigger is
    (catalog/keda.py FALLBACK_WITH_VALUE_TRIGGERS). So each query is a sum over pods, and the HPA divides it
    by the replica count itself: ceil(sum / threshold) replicas.
    """
    match = workload.vllm
    latency = quantile(LATENCY_QUANTILE, "vllm:time_to_first_token_seconds", match, window=LATENCY_WINDOW)
    running = f"vllm:num_requests_running{match}"
    return {
        # Sums over every pod (and V1 engine).
        "queue": (f"sum(vllm:num_requests_waiting{match})", "AverageValue"),
        "running": (f"sum({running})", "AverageValue"),
        # Each pod's usage (0..1, averaged over its engines), summed: ceil(sum / threshold) is the
        # ceil(replicas x average / threshold) that metricType Value over the average would give.
        "kv_cache": (f"sum(avg by (pod) ({metrics.kv_cache_usage}{match}))", "AverageValue"),
        # The p95 times the pods reporting, so that AverageValue again wants ceil(pods x p95 / threshold).
        # No traffic makes every bucket rate 0 and the quantile NaN, which ignoreNullValues "false" would turn
        # into an error and the fallback; an idle server has no latency problem, so NaN reads as 0 here, but
        # only while vLLM reports at all: `or vector(0)` would also read 0 when its series are gone, the
        # silent scale-down that ignoreNullValues "false" is there to prevent.
        "latency": (f"(({latency} > 0) * on () count(count by (pod) ({running}))) or (sum({running}) * 0)", "AverageValue"),
    }


def render_triggers(
    cfg: AutoscalingConfig, thresholds: Thresholds, metrics: VersionMetrics, workload: Workload, server_address: str
) -> list[dict[str, Any]]:
    values = {
        "queue": thresholds.queue,
        "running": thresholds.running,
        "kv_cache": thresholds.kv_cache_usage,
        "latency": thresholds.latency_seconds,
    }
    queries = trigger_queries(metrics, workload)
    return [
        {
            "type": "prometheus",
            "name": name,
            "metricType": queries[name][1],
            "metadata": {
                "serverAddress": server_address,
                "query": queries[name][0],
                "threshold": number(values[name]),
                "ignoreNullValues": "false",
            },
        }
        for name in cfg.triggers
    ]


def render_fallback(cfg: AutoscalingConfig) -> dict[str, Any]:
    """fallback.behavior only where the KEDA release has it (2.17); older webhooks reject unknown fields."""
    fallback: dict[str, Any] = {
        "failureThreshold": cfg.fallback_failure_threshold,
        "replicas": cfg.fallback_replicas or cfg.min_replica_count,
    }
    if keda.supports(cfg.keda_version, keda.Feature.FALLBACK_BEHAVIOR):
        fallback["behavior"] = cfg.fallback_behavior or DEFAULT_FALLBACK_BEHAVIOR
    return fallback


def rendered_features(cfg: AutoscalingConfig) -> list[keda.Feature]:
    """The version-gated KEDA features the ScaledObject uses, for a cluster check against the installed KEDA."""
    return [keda.Feature.FALLBACK_BEHAVIOR] if keda.supports(cfg.keda_version, keda.Feature.FALLBACK_BEHAVIOR) else []


def render_behavior(cfg: AutoscalingConfig) -> dict[str, Any]:
    """HPA behavior: quick to add GPU pods, slow to remove them (a model reload costs minutes)."""
    return {
        "scaleUp": {
            "stabilizationWindowSeconds": cfg.scale_up_stabilization_window_seconds,
            "selectPolicy": "Max",
            "policies": [{"type": "Pods", "value": cfg.scale_up_pods, "periodSeconds": cfg.scale_up_period_seconds}],
        },
        "scaleDown": {
            "stabilizationWindowSeconds": cfg.scale_down_stabilization_window_seconds,
            "selectPolicy": "Min",
            "policies": [{"type": "Pods", "value": cfg.scale_down_pods, "periodSeconds": cfg.scale_down_period_seconds}],
        },
    }


def render_scaled_object_spec(
    scaled_object_name: str,
    cfg: AutoscalingConfig,
    thresholds: Thresholds,
    metrics: VersionMetrics,
    workload: Workload,
    server_address: str,
) -> dict[str, Any]:
    return {
        "scaleTargetRef": workload.scale_target,
        "pollingInterval": cfg.polling_interval,
        "cooldownPeriod": cfg.cooldown_period,
        "minReplicaCount": cfg.min_replica_count,
        "maxReplicaCount": cfg.max_replica_count,
        "fallback": render_fallback(cfg),
        "advanced": {
            "horizontalPodAutoscalerConfig": {"name": hpa_name(scaled_object_name), "behavior": render_behavior(cfg)},
        },
        "triggers": render_triggers(cfg, thresholds, metrics, workload, server_address),
    }


def render_scaled_object(
    scaled_object_name: str,
    labels: dict[str, str],
    cfg: AutoscalingConfig,
    thresholds: Thresholds,
    metrics: VersionMetrics,
    workload: Workload,
    server_address: str,
) -> dict[str, Any]:
    """The whole object, as the API server receives it; `server_address` from components/render/prometheus.py."""
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": scaled_object_name, "namespace": workload.namespace, "labels": dict(labels)},
        "spec": render_scaled_object_spec(scaled_object_name, cfg, thresholds, metrics, workload, server_address),
    }
