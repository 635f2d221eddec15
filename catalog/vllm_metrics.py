"""The Prometheus metrics each supported vLLM version exports, with their types, and the exporters beside it.

One table per version, read from the released wheels (docs/sources.md §B):
0.7.2 from `vllm/engine/metrics.py` (V0 engine, the default there), 0.33.0 from `vllm/v1/metrics/loggers.py`.
Metrics that only appear behind a flag (`--collect-detailed-traces`, `--kv-cache-metrics`,
`--enable-fault-tolerance`) are left out, so nothing the program emits can depend on them.
Names are the exposed ones: counters carry `_total`; histograms expand to `_bucket`, `_sum`, `_count`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from catalog.gpus import VENDORS


class MetricType(Enum):
    GAUGE = "gauge"
    COUNTER = "counter"
    HISTOGRAM = "histogram"


G, C, H = MetricType.GAUGE, MetricType.COUNTER, MetricType.HISTOGRAM

_HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")

# vLLM 0.7.2, V0 `Metrics.__init__` (engine/metrics.py:50-262). `vllm:tokens_total` is declared but never
# set, so it is not listed. `*_cache_usage_perc` are 0..1 fractions despite the name.
VLLM_0_7_2: dict[str, MetricType] = {
    "vllm:num_requests_running": G,
    "vllm:num_requests_waiting": G,
    "vllm:num_requests_swapped": G,
    "vllm:gpu_cache_usage_perc": G,
    "vllm:cpu_cache_usage_perc": G,
    "vllm:gpu_prefix_cache_hit_rate": G,  # -1 when prefix caching is off
    "vllm:cpu_prefix_cache_hit_rate": G,
    "vllm:lora_requests_info": G,
    "vllm:spec_decode_draft_acceptance_rate": G,
    "vllm:spec_decode_efficiency": G,
    "vllm:cache_config_info": G,
    "vllm:num_preemptions_total": C,
    "vllm:prompt_tokens_total": C,
    "vllm:generation_tokens_total": C,
    "vllm:request_success_total": C,  # label finished_reason: stop, length, abort
    "vllm:spec_decode_num_accepted_tokens_total": C,
    "vllm:spec_decode_num_draft_tokens_total": C,
    "vllm:spec_decode_num_emitted_tokens_total": C,
    "vllm:iteration_tokens_total": H,  # a histogram despite `_total`
    "vllm:time_to_first_token_seconds": H,
    "vllm:time_per_output_token_seconds": H,
    "vllm:e2e_request_latency_seconds": H,
    "vllm:request_queue_time_seconds": H,
    "vllm:request_inference_time_seconds": H,
    "vllm:request_prefill_time_seconds": H,
    "vllm:request_decode_time_seconds": H,
    "vllm:time_in_queue_requests": H,
    "vllm:request_prompt_tokens": H,
    "vllm:request_generation_tokens": H,
    "vllm:request_max_num_generation_tokens": H,
    "vllm:request_params_n": H,
    "vllm:request_params_max_tokens": H,
}

# vLLM 0.33.0, V1 `PrometheusStatLogger.__init__` (v1/metrics/loggers.py:482-1110); labels model_name, engine.
# HTTP metrics from prometheus-fastapi-instrumentator (serve/instrumentator/metrics.py:64-71).
VLLM_0_33_0: dict[str, MetricType] = {
    "vllm:num_requests_running": G,
    "vllm:num_requests_waiting": G,
    "vllm:num_requests_waiting_by_reason": G,
    "vllm:engine_sleep_state": G,
    "vllm:kv_cache_usage_perc": G,
    "vllm:lora_requests_info": G,
    "vllm:prefix_cache_queries_total": C,  # in tokens
    "vllm:prefix_cache_hits_total": C,
    "vllm:external_prefix_cache_queries_total": C,
    "vllm:external_prefix_cache_hits_total": C,
    "vllm:mm_cache_queries_total": C,
    "vllm:mm_cache_hits_total": C,
    "vllm:num_preemptions_total": C,
    "vllm:prompt_tokens_total": C,
    "vllm:generation_tokens_total": C,
    "vllm:prompt_tokens_by_source_total": C,
    "vllm:prompt_tokens_cached_total": C,
    "vllm:prompt_tokens_cached_by_source_total": C,
    "vllm:request_success_total": C,
    "vllm:admission_rejections_total": C,
    "vllm:request_prompt_tokens": H,
    "vllm:request_generation_tokens": H,
    "vllm:iteration_tokens_total": H,
    "vllm:request_max_num_generation_tokens": H,
    "vllm:request_params_n": H,
    "vllm:request_params_max_tokens": H,
    "vllm:request_prefill_kv_computed_tokens": H,
    "vllm:time_to_first_token_seconds": H,
    "vllm:inter_token_latency_seconds": H,  # replaced time_per_output_token_seconds (removed, PR #32661)
    "vllm:request_time_per_output_token_seconds": H,
    "vllm:e2e_request_latency_seconds": H,
    "vllm:request_queue_time_seconds": H,
    "vllm:request_inference_time_seconds": H,
    "vllm:request_prefill_time_seconds": H,
    "vllm:request_decode_time_seconds": H,
    "vllm:request_num_preemptions": H,
    "http_requests_total": C,  # labels handler, method, status ("2xx", "4xx", "5xx")
    "http_request_duration_seconds": H,
}

# Exporters other than vLLM that the alerts and dashboard read. kube-state-metrics: docs/metrics/workload/
# {deployment,statefulset,pod,horizontalpodautoscaler}-metrics.md. The GPU vendor's exporter: catalog/gpus.py.
# KEDA operator: pkg/metricscollector/prommetrics.go@0677effe:80-97.
EXTERNAL: dict[str, MetricType] = {
    "kube_deployment_spec_replicas": G,
    "kube_deployment_status_replicas_available": G,
    "kube_deployment_status_condition": G,
    "kube_deployment_created": G,
    "kube_statefulset_replicas": G,
    "kube_statefulset_status_replicas_ready": G,
    "kube_statefulset_created": G,
    "kube_pod_container_status_restarts_total": C,
    "kube_pod_container_status_last_terminated_reason": G,
    "kube_pod_container_status_ready": G,
    "keda_scaler_detail_errors_total": C,
    "keda_scaled_object_errors_total": C,
    "kube_horizontalpodautoscaler_status_current_replicas": G,
    "kube_horizontalpodautoscaler_spec_max_replicas": G,
    **{name: G for v in VENDORS for name in (v.exporter.memory_used, v.exporter.memory_free, v.exporter.utilization)},
}


@dataclass(frozen=True)
class VersionMetrics:
    """A version's metric table and the names it uses for the signals that were renamed across versions."""

    version: str
    metrics: Mapping[str, MetricType]
    kv_cache_usage: str  # 0..1 fraction
    inter_token_latency: str  # histogram, seconds
    prefix_cache_hit_rate_gauge: str | None  # V0: a 0..1 gauge (-1 when unused)
    prefix_cache_hits: str | None  # V1: counters in tokens; hit rate = rate(hits) / rate(queries)
    prefix_cache_queries: str | None
    http_requests: str | None  # None where the wheel read for the facts does not confirm one

    def series_type(self, name: str) -> MetricType | None:
        """The type of an exposed series name (a histogram's `_bucket`/`_sum`/`_count` count as histogram)."""
        return series_type(name, self.metrics)

    def signals(self) -> dict[str, str | None]:
        """The renamed signals by field name: what each is called in this version (None: not exported)."""
        return {name: getattr(self, name) for name in SIGNALS}


# The fields of VersionMetrics that name one signal under a version's own name.
SIGNALS = (
    "kv_cache_usage",
    "inter_token_latency",
    "prefix_cache_hit_rate_gauge",
    "prefix_cache_hits",
    "prefix_cache_queries",
    "http_requests",
)
# A V0 gauge that V1 replaced by a pair of counters (the dashboard divides their rates).
_SUCCESSORS = {"prefix_cache_hit_rate_gauge": ("prefix_cache_hits", "prefix_cache_queries")}


def renamed_signal(name: str, old: VersionMetrics, new: VersionMetrics) -> str | None:
    """The new version's series for the signal `name` carries in the old one (histogram suffix kept), or None."""
    old_signals, new_signals = old.signals(), new.signals()
    for suffix in ("", *(s for s in _HISTOGRAM_SUFFIXES if name.endswith(s))):
        signal = next((key for key, spelled in old_signals.items() if spelled == name.removesuffix(suffix)), None)
        successors = [new_signals[key] for key in _SUCCESSORS.get(signal, (signal,))] if signal else []
        if successors and all(successors):
            return " / ".join(f"{successor}{suffix}" for successor in successors)
    return None


def series_type(name: str, table: Mapping[str, MetricType]) -> MetricType | None:
    merged = {**table, **EXTERNAL}
    if name in merged:
        # A histogram is only exposed through its _bucket/_sum/_count series, never under its bare name.
        return None if merged[name] is MetricType.HISTOGRAM else merged[name]
    for suffix in _HISTOGRAM_SUFFIXES:
        base = name.removesuffix(suffix)
        if base != name and merged.get(base) is MetricType.HISTOGRAM:
            return MetricType.HISTOGRAM
    return None


VERSIONS: dict[str, VersionMetrics] = {
    "0.7.2": VersionMetrics(
        version="0.7.2",
        metrics=VLLM_0_7_2,
        kv_cache_usage="vllm:gpu_cache_usage_perc",
        inter_token_latency="vllm:time_per_output_token_seconds",
        prefix_cache_hit_rate_gauge="vllm:gpu_prefix_cache_hit_rate",
        prefix_cache_hits=None,
        prefix_cache_queries=None,
        http_requests=None,
    ),
    "0.33.0": VersionMetrics(
        version="0.33.0",
        metrics=VLLM_0_33_0,
        kv_cache_usage="vllm:kv_cache_usage_perc",
        inter_token_latency="vllm:inter_token_latency_seconds",
        prefix_cache_hit_rate_gauge=None,
        prefix_cache_hits="vllm:prefix_cache_hits_total",
        prefix_cache_queries="vllm:prefix_cache_queries_total",
        http_requests="http_requests_total",
    ),
}


def metrics_for(version: str) -> VersionMetrics:
    """The metric table of a vLLM release: hand-checked for 0.7.2 and 0.33.0, else the generated table
    (catalog/data/vllm/<version>.json, read from the wheel's metric modules). Raises KeyError otherwise."""
    if version in VERSIONS:
        return VERSIONS[version]
    from catalog.vllm_releases import available_versions, release_table

    if version not in available_versions():
        raise KeyError(f"no metric table for vLLM {version!r}; have {', '.join(available_versions())}")
    return generated_metrics(version, {name: MetricType(kind) for name, kind in release_table(version).metrics.items()})


def generated_metrics(version: str, metrics: Mapping[str, MetricType]) -> VersionMetrics:
    """Pick each renamed signal by which name the release exports (V0 and V1 spellings)."""

    def first(*names: str) -> str | None:
        return next((name for name in names if name in metrics), None)

    return VersionMetrics(
        version=version,
        metrics=metrics,
        kv_cache_usage=first("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc") or "vllm:kv_cache_usage_perc",
        inter_token_latency=first("vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds")
        or "vllm:inter_token_latency_seconds",
        prefix_cache_hit_rate_gauge=first("vllm:gpu_prefix_cache_hit_rate"),
        prefix_cache_hits=first("vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"),
        prefix_cache_queries=first("vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"),
        http_requests=None,  # the HTTP instrumentator is not in the wheel's metric modules; not confirmed
    )
