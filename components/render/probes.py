"""Probes on /health and the startup budget behind them. Pure.

/health answers 200, or 500/503 when the engine is dead (0.7.2 api_server.py:326-330; 0.33.0
serve/instrumentator/health.py); during the load the port refuses connections (docs/sources.md §C).
"""

from __future__ import annotations

from typing import Any

from config.stack import StackConfig
from plan.names import PORT_NAME
from preflight.delivery import DeliveryBudget, delivery_budget
from preflight.startup import StartupBudget

# Annotations on the server workload: the budget the probe and the timeouts were computed from, term by term.
BUDGET_ANNOTATION = "vllm-serving.io/startup-budget"
THROUGHPUT_ANNOTATION = "vllm-serving.io/load-throughput"


def server_startup_budget(cfg: StackConfig, weights_on_disk_gib: float) -> StartupBudget:
    """The startup probe's budget. Every checkpoint the server reads counts: the model and any draft model,
    read at the delivery mode's throughput (config/delivery.py read_throughput)."""
    return delivery_budget(cfg, weights_on_disk_gib).probe


def budget_annotations(budget: DeliveryBudget) -> dict[str, str]:
    return {
        BUDGET_ANNOTATION: budget.explain(),
        THROUGHPUT_ANNOTATION: f"{budget.mode}: {budget.throughput.mib_per_s:g} MiB/s ({budget.throughput.source})",
    }


def _http_get() -> dict[str, Any]:
    return {"httpGet": {"path": "/health", "port": PORT_NAME, "scheme": "HTTP"}}


def render_probes(cfg: StackConfig, budget: StartupBudget) -> dict[str, dict[str, Any]]:
    """startupProbe holds the others off until the model is loaded; readiness and liveness then use
    timeouts of 5-15 s so a saturated server is not marked dead (llm-d-benchmark#1734: 1 s timeouts did)."""
    probes = cfg.probes
    return {
        "startupProbe": {
            **_http_get(),
            "periodSeconds": budget.period_seconds,
            "failureThreshold": budget.failure_threshold,
            "timeoutSeconds": 5,
            "successThreshold": 1,
        },
        "readinessProbe": {
            **_http_get(),
            "periodSeconds": probes.readiness_period_seconds,
            "timeoutSeconds": probes.readiness_timeout_seconds,
            "failureThreshold": probes.readiness_failure_threshold,
            "successThreshold": 1,
        },
        "livenessProbe": {
            **_http_get(),
            "periodSeconds": probes.liveness_period_seconds,
            "timeoutSeconds": probes.liveness_timeout_seconds,
            "failureThreshold": probes.liveness_failure_threshold,
            "successThreshold": 1,
        },
    }


def rollout_timeout_seconds(cfg: StackConfig, budget: DeliveryBudget) -> int:
    """How long one new pod may take to become ready: the first start's sum (image pull, download, startup
    budget) plus a margin. progressDeadlineSeconds (default 600 s would fail a large model's rollout); the
    download counts because the server waits for it (the Job is not awaited, components/model_cache.py)."""
    return budget.first_start_seconds + 120


def new_replica_seconds(cfg: StackConfig, budget: DeliveryBudget) -> int:
    """How long a replica added after the first start may take to become ready: image pull on a new node, then
    the startup budget (the weights are already on the volume). The not-ready alerts wait this out."""
    return cfg.server.image_pull_seconds + budget.probe.total_seconds + 120


def pulumi_timeout_seconds(cfg: StackConfig, budget: DeliveryBudget) -> int:
    """Pulumi waits for the whole rollout: with maxSurge 0 pods are replaced one after another."""
    most = cfg.autoscaling.max_replica_count if cfg.autoscaling.enabled else cfg.replicas
    return rollout_timeout_seconds(cfg, budget) * max(1, most)
