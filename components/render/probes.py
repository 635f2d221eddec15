"""Probes on /health and the startup budget behind them. Pure.

/health answers 200, or 500/503 when the engine is dead (0.7.2 api_server.py:326-330; 0.33.0
serve/instrumentator/health.py); during the load the port refuses connections (docs/sources.md §C).
"""

from __future__ import annotations

from typing import Any

from config.kubernetes import ProbesConfig
from plan.names import PORT_NAME
from preflight.delivery import DeliveryBudget
from preflight.startup import StartupBudget

# Annotations on the server workload: the budget the probe and the timeouts were computed from, term by term.
BUDGET_ANNOTATION = "vllm-serving.io/startup-budget"
THROUGHPUT_ANNOTATION = "vllm-serving.io/load-throughput"


def budget_annotations(budget: DeliveryBudget) -> dict[str, str]:
    return {
        BUDGET_ANNOTATION: budget.explain(),
        THROUGHPUT_ANNOTATION: f"{budget.mode}: {budget.throughput.mib_per_s:g} MiB/s ({budget.throughput.source})",
    }


def _http_get() -> dict[str, Any]:
    return {"httpGet": {"path": "/health", "port": PORT_NAME, "scheme": "HTTP"}}


def render_probes(probes: ProbesConfig, budget: StartupBudget) -> dict[str, dict[str, Any]]:
    """startupProbe holds the others off until the model is loaded; readiness and liveness then use
    timeouts of 5-15 s so a saturated server is not marked dead (llm-d-benchmark#1734: 1 s timeouts did)."""
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
