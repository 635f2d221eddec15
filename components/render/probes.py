"""Probes on /health and the startup budget behind them. Pure.

/health answers 200, or 500/503 when the engine is dead (0.7.2 api_server.py:326-330; 0.33.0
serve/instrumentator/health.py); during the load the port refuses connections (shared reference §C).
"""

from __future__ import annotations

from typing import Any

from components.render.cache import draft_weights_on_disk_gib
from components.render.names import PORT_NAME
from config.stack import StackConfig
from preflight.startup import StartupBudget, startup_budget


def server_startup_budget(cfg: StackConfig, weights_on_disk_gib: float) -> StartupBudget:
    """Every checkpoint the server reads from the cache counts: the model and any draft model."""
    probes = cfg.probes
    weights = weights_on_disk_gib + draft_weights_on_disk_gib(cfg)
    # Ranks on different nodes spawn and load in parallel; a group then waits for every rank and NCCL init.
    group_init = cfg.multinode.group_init_seconds if cfg.engine.nnodes > 1 else 0
    return startup_budget(
        weights, probes.load_throughput_gib_per_s, cfg.engine.gpus_per_node, cfg.engine.enforce_eager,
        engine_start_seconds=probes.engine_start_seconds + group_init, per_gpu_start_seconds=probes.per_gpu_start_seconds,
        cuda_graph_capture_seconds=probes.cuda_graph_capture_seconds, safety_factor=probes.safety_factor,
        period_seconds=probes.startup_period_seconds, override_seconds=probes.startup_seconds,
    )


def _http_get() -> dict[str, Any]:
    return {"httpGet": {"path": "/health", "port": PORT_NAME, "scheme": "HTTP"}}


def render_probes(cfg: StackConfig, budget: StartupBudget) -> dict[str, dict[str, Any]]:
    """startupProbe holds the others off until the model is loaded; readiness and liveness then use
    timeouts of 5-15 s so a saturated server is not marked dead (llm-d-benchmark#1734: 1 s timeouts did)."""
    probes = cfg.probes
    return {
        "startupProbe": {**_http_get(), "periodSeconds": budget.period_seconds,
                         "failureThreshold": budget.failure_threshold, "timeoutSeconds": 5, "successThreshold": 1},
        "readinessProbe": {**_http_get(), "periodSeconds": probes.readiness_period_seconds,
                           "timeoutSeconds": probes.readiness_timeout_seconds,
                           "failureThreshold": probes.readiness_failure_threshold, "successThreshold": 1},
        "livenessProbe": {**_http_get(), "periodSeconds": probes.liveness_period_seconds,
                          "timeoutSeconds": probes.liveness_timeout_seconds,
                          "failureThreshold": probes.liveness_failure_threshold, "successThreshold": 1},
    }


def rollout_timeout_seconds(cfg: StackConfig, budget: StartupBudget) -> int:
    """How long one new pod may take to become ready: image pull, then the startup budget, plus a margin.
    Used for progressDeadlineSeconds (default 600 s would fail a large model's rollout)."""
    return cfg.server.image_pull_seconds + budget.total_seconds + 120


def pulumi_timeout_seconds(cfg: StackConfig, budget: StartupBudget) -> int:
    """Pulumi waits for the whole rollout: with maxSurge 0 pods are replaced one after another."""
    most = cfg.autoscaling.max_replica_count if cfg.autoscaling.enabled else cfg.replicas
    return rollout_timeout_seconds(cfg, budget) * max(1, most)
