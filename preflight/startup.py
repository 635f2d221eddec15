"""How long one vLLM replica may take to start, computed from the model instead of one constant.

vLLM binds its port but only starts listening after the model is loaded (0.7.2 api_server.py:827-891;
0.33.0 launchers/launcher.py:340-355), so /health refuses connections for the whole load. The startup
probe must therefore allow: reading the weights from the cache volume, engine start, and (unless
enforce_eager) torch.compile plus CUDA-graph capture. docs/sources.md §C; docs/sources.md §P10.2.
Pure: used by the Kubernetes probes, the Pulumi timeouts and the Docker target's health check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class StartupBudget:
    load_seconds: float  # weights on disk / read throughput
    engine_start_seconds: float  # process start plus one worker per extra GPU
    cuda_graph_seconds: float  # 0 with enforce_eager
    safety_factor: float
    total_seconds: int  # (load + start + graph) x safety factor, rounded up to whole periods
    period_seconds: int
    failure_threshold: int  # startupProbe failureThreshold: total_seconds / period_seconds
    overridden: bool = False  # probes.startup_seconds replaced the estimate

    def explain(self) -> str:
        if self.overridden:
            return f"{self.total_seconds} s set by probes.startup_seconds ({self.failure_threshold} x {self.period_seconds} s)"
        return (
            f"({self.load_seconds:.0f} s load + {self.engine_start_seconds:.0f} s engine start + "
            f"{self.cuda_graph_seconds:.0f} s compile/CUDA graphs) x {self.safety_factor:g} = "
            f"{self.total_seconds} s ({self.failure_threshold} x {self.period_seconds} s)"
        )


def startup_budget(
    weights_on_disk_gib: float,
    load_throughput_gib_per_s: float,
    gpus_per_replica: int,
    enforce_eager: bool,
    *,
    engine_start_seconds: float,
    per_gpu_start_seconds: float,
    cuda_graph_capture_seconds: float,
    safety_factor: float,
    period_seconds: int,
    override_seconds: int | None = None,
) -> StartupBudget:
    """The startup budget of one replica. `override_seconds` replaces the computed total. The terms have no
    defaults here: ProbesConfig holds them (plan/delivery.py resolve_delivery passes them)."""
    if load_throughput_gib_per_s <= 0 or period_seconds <= 0 or gpus_per_replica < 1:
        raise ValueError("throughput and period must be positive and gpus_per_replica at least 1")
    load = weights_on_disk_gib / load_throughput_gib_per_s
    start = engine_start_seconds + per_gpu_start_seconds * (gpus_per_replica - 1)
    graphs = 0.0 if enforce_eager else float(cuda_graph_capture_seconds)
    raw = override_seconds if override_seconds is not None else (load + start + graphs) * safety_factor
    threshold = max(1, math.ceil(raw / period_seconds))
    return StartupBudget(
        load_seconds=load,
        engine_start_seconds=start,
        cuda_graph_seconds=graphs,
        safety_factor=1.0 if override_seconds is not None else safety_factor,
        total_seconds=threshold * period_seconds,
        period_seconds=period_seconds,
        failure_threshold=threshold,
        overridden=override_seconds is not None,
    )
