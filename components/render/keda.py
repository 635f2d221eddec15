"""The KEDA ScaledObject (keda.sh/v1alpha1) for the vLLM workload, from the plan's scaling (plan/scaling.py).

KEDA facts (docs/sources.md §D): a Prometheus trigger query must return exactly one element; with
metricType AverageValue the HPA wants ceil(value / threshold) replicas, so a `sum()` over pods with a
per-replica threshold (every trigger here: see trigger_queries).
`ignoreNullValues` defaults to true, turning an empty result into 0 and a silent scale-down; "false"
makes it an error, which the `fallback` block then handles. Trigger metadata values are strings.
"""

from __future__ import annotations

from typing import Any

from catalog import keda, keda_http
from catalog.vllm_metrics import VersionMetrics
from components.render.promql import number, quantile
from components.render.thanos import render_thanos_access, thanos_trigger_fields
from config.observability import AutoscalingConfig
from plan.scaling import ScalingPlan, Workload, hpa_name
from plan.zero import ZeroPlan

API_VERSION = "keda.sh/v1alpha1"
KIND = "ScaledObject"
LATENCY_QUANTILE = 0.95
LATENCY_WINDOW = "2m"  # short, so the trigger follows load; alerts use 5m
DEFAULT_FALLBACK_BEHAVIOR = "currentReplicasIfHigher"  # never scale down because Prometheus is unreachable
# KEDA's fallback reports int64(threshold) x replicas for a failing trigger (docs/sources.md §D.4): a fractional
# threshold is truncated, a KV-cache usage of 0.85 to 0, and the HPA then wants no replicas while Prometheus is
# down. So the fractional triggers count in thousandths: the query times 1000, the threshold a whole number.
TRIGGER_SCALE = {"queue": 1, "running": 1, "kv_cache": 1000, "latency": 1000}


def trigger_queries(metrics: VersionMetrics, workload: Workload) -> dict[str, tuple[str, str]]:
    """Per trigger name: (query, metricType). Each query returns exactly one series.

    Every trigger is AverageValue: KEDA before 2.18 refuses a `fallback` unless every trigger is
    (catalog/keda.py FALLBACK_WITH_VALUE_TRIGGERS). So each query is a sum over pods, and the HPA divides it
    by the replica count itself: ceil(sum / threshold) replicas.
    """
    match = workload.vllm
    latency = quantile(LATENCY_QUANTILE, "vllm:time_to_first_token_seconds", match, window=LATENCY_WINDOW)
    running = f"vllm:num_requests_running{match}"
    queries = _unscaled_queries(metrics, match, latency, running)
    return {name: (_scaled(query, TRIGGER_SCALE[name]), kind) for name, (query, kind) in queries.items()}


def _unscaled_queries(metrics: VersionMetrics, match: str, latency: str, running: str) -> dict[str, tuple[str, str]]:
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


def _scaled(query: str, scale: int) -> str:
    return query if scale == 1 else f"({query}) * {scale}"


def scaled_threshold(name: str, value: float) -> int | float:
    """The trigger's threshold in its query's unit (TRIGGER_SCALE), a whole number for the scaled ones (at least 1,
    so that no stack's threshold renders as 0)."""
    scale = TRIGGER_SCALE[name]
    return value if scale == 1 else max(1, round(value * scale))


def render_triggers(scaling: ScalingPlan) -> list[dict[str, Any]]:
    thresholds = scaling.thresholds
    values = {
        "queue": thresholds.queue,
        "running": thresholds.running,
        "kv_cache": thresholds.kv_cache_usage,
        "latency": thresholds.latency_seconds,
    }
    queries = trigger_queries(scaling.metrics, scaling.workload)
    auth, extra = thanos_trigger_fields(scaling.thanos) if scaling.thanos is not None else ({}, {})
    return [
        {
            "type": "prometheus",
            "name": name,
            "metricType": queries[name][1],
            "metadata": {
                "serverAddress": scaling.server_address,
                "query": queries[name][0],
                "threshold": number(scaled_threshold(name, values[name])),
                "ignoreNullValues": "false",
                **auth,
            },
            **extra,
        }
        for name in scaling.config.triggers
    ]


def render_fallback(cfg: AutoscalingConfig, features: frozenset[str]) -> dict[str, Any]:
    """fallback.behavior only where the KEDA release has it (2.17, plan/scaling.py keda_features); older
    webhooks reject unknown fields."""
    fallback: dict[str, Any] = {
        "failureThreshold": cfg.fallback_failure_threshold,
        "replicas": cfg.fallback_replicas or cfg.min_replica_count,
    }
    if keda.Feature.FALLBACK_BEHAVIOR in features:
        fallback["behavior"] = cfg.fallback_behavior or DEFAULT_FALLBACK_BEHAVIOR
    return fallback


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


def render_scaled_object_spec(scaling: ScalingPlan) -> dict[str, Any]:
    cfg, workload = scaling.config, scaling.workload
    return {
        "scaleTargetRef": workload.scale_target,
        "pollingInterval": cfg.polling_interval,
        "cooldownPeriod": cfg.cooldown_period,
        "minReplicaCount": cfg.min_replica_count,
        "maxReplicaCount": cfg.max_replica_count,
        "fallback": render_fallback(cfg, scaling.keda_features),
        "advanced": {
            "horizontalPodAutoscalerConfig": {"name": hpa_name(scaling.scaled_object_name), "behavior": render_behavior(cfg)},
        },
        "triggers": render_triggers(scaling),
    }


def keda_objects(scaling: ScalingPlan) -> list[dict[str, Any]]:
    """The ScaledObject, after what its triggers authenticate with on OpenShift (components/render/thanos.py)."""
    access = render_thanos_access(scaling.thanos) if scaling.thanos is not None else []
    return [*access, render_scaled_object(scaling)]


def render_scaled_object(scaling: ScalingPlan) -> dict[str, Any]:
    """The whole object, as the API server receives it (the plan's thresholds, workload and Prometheus)."""
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": scaling.scaled_object_name,
            "namespace": scaling.workload.namespace,
            "labels": dict(scaling.labels),
        },
        "spec": render_scaled_object_spec(scaling),
    }


def render_http_scaled_object(zero: ZeroPlan) -> dict[str, Any]:
    """The KEDA HTTP add-on's HTTPScaledObject (http.keda.sh/v1alpha1, plan/zero.py): the interceptor routes the
    one host to the server's Service and holds a request until it has a ready endpoint; the add-on creates the
    ScaledObject, named after it (docs/sources.md §S10: so its HPA is keda-hpa-<name>), that scales on the
    interceptor's in-flight requests, to zero after scaledownPeriod idle seconds."""
    cfg = zero.config
    return {
        "apiVersion": keda_http.HTTP_SCALED_OBJECT_API,
        "kind": keda_http.HTTP_SCALED_OBJECT,
        "metadata": {"name": zero.name, "namespace": zero.namespace, "labels": dict(zero.labels)},
        "spec": {
            "hosts": [zero.route_host],
            "pathPrefixes": ["/"],
            "scaleTargetRef": {**zero.workload.scale_target, "service": zero.service, "port": zero.port},
            "replicas": {"min": zero.min_replicas, "max": zero.max_replicas},
            "scaledownPeriod": cfg.scaledown_period_seconds,
            "scalingMetric": {"concurrency": {"targetValue": zero.target_concurrency}},
            "timeouts": {
                "conditionWait": f"{zero.condition_wait_seconds}s",
                "responseHeader": f"{zero.response_header_seconds}s",
            },
        },
    }


def render_interceptor_route(zero: ZeroPlan) -> dict[str, Any]:
    """The add-on's InterceptorRoute (http.keda.sh/v1beta1): routing, the scaling metric and the timeouts only
    (readiness is HTTPScaledObject's conditionWait; responseHeader excludes the cold-start wait)."""
    timeouts = {"readiness": f"{zero.condition_wait_seconds}s", "responseHeader": f"{zero.response_header_seconds}s"}
    return {
        "apiVersion": keda_http.INTERCEPTOR_ROUTE_API,
        "kind": keda_http.INTERCEPTOR_ROUTE,
        "metadata": {"name": zero.name, "namespace": zero.namespace, "labels": dict(zero.labels)},
        "spec": {
            "target": {"service": zero.service, "port": zero.port},
            "rules": [{"hosts": [zero.route_host]}],
            "scalingMetric": {"concurrency": {"targetValue": zero.target_concurrency}},
            "timeouts": timeouts,
        },
    }


def render_push_scaled_object(scaling: ScalingPlan, zero: ZeroPlan) -> dict[str, Any]:
    """The ScaledObject of an InterceptorRoute: the add-on's external scaler as its one trigger, the idle period
    as cooldownPeriod, the stack's HPA behavior; no fallback (no Prometheus to lose)."""
    cfg = scaling.config
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": scaling.scaled_object_name, "namespace": zero.namespace, "labels": dict(scaling.labels)},
        "spec": {
            "scaleTargetRef": zero.workload.scale_target,
            "pollingInterval": cfg.polling_interval,
            "cooldownPeriod": zero.config.scaledown_period_seconds,
            "minReplicaCount": zero.min_replicas,
            "maxReplicaCount": zero.max_replicas,
            "advanced": {
                "horizontalPodAutoscalerConfig": {
                    "name": hpa_name(scaling.scaled_object_name),
                    "behavior": render_behavior(cfg),
                },
            },
            "triggers": [
                {"type": "external-push", "metadata": {"interceptorRoute": zero.name, "scalerAddress": zero.scaler_address}}
            ],
        },
    }


def render_autoscaler(scaling: ScalingPlan, zero: ZeroPlan | None) -> list[dict[str, Any]]:
    """The ScaledObject; with the KEDA HTTP add-on its HTTPScaledObject (the add-on then creates the ScaledObject
    itself, and two on one target would fight), or its InterceptorRoute and the ScaledObject that reads it."""
    if zero is None:
        return keda_objects(scaling)
    if zero.config.resource == keda_http.INTERCEPTOR_ROUTE:
        return [render_interceptor_route(zero), render_push_scaled_object(scaling, zero)]
    return [render_http_scaled_object(zero)]
