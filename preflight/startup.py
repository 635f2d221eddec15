"""How long one vLLM replica may take to start, computed from the model instead of one constant.

vLLM binds its port but only starts listening after the model is loaded (0.7.2 api_server.py:827-891;
0.33.0 launchers/launcher.py:340-355), so /health refuses connections for the whole load. The startup
probe must therefore allow: reading the weights from the cache volume, engine start, and (unless
enforce_eager) torch.compile plus CUDA-graph capture. docs/sources.md §C; docs/sources.md §P10.2.
The fixed terms (engine start, compile + graphs) are the stack's probes.* where set, else what the fit on public
GPU start-ups predicts for its model, parallelism and batch limits (catalog/startup_phases.py,
docs/calibration.md "Start-up phases").
Pure: used by the Kubernetes probes, the Pulumi timeouts and the Docker target's health check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from catalog.startup_phases import (
    ENGINE_START_PHASES,
    FITTED,
    GRAPH_PHASES,
    PROBE_MARGIN,
    fitted_source,
    gpu_family,
    release_era,
)
from config.kubernetes import ProbesConfig
from preflight.cuda_graphs import graphs_captured
from preflight.memory import layers_per_stage
from preflight.resolve import ResolvedEngine


def fitted_phase_seconds(engine: ResolvedEngine, gpus: int, factors: Mapping[str, float]) -> dict[str, float]:
    """The fixed phases the fit predicts for this model (its layers, a multimodal encoder, routed experts),
    parallelism and batch limits on a pod of `gpus` GPUs of the engine's GPU family, under its release's era (a V1
    release), each times its measured factor (probes.phase_factors, 1 where unset)."""
    arch = engine.architecture
    layers = layers_per_stage(arch.num_hidden_layers, engine.pipeline_parallel_size)
    graphs = 0 if engine.enforce_eager else graphs_captured("V1", engine.max_num_seqs, engine.max_num_batched_tokens)
    gpu = engine.gpu
    moe, family, era = arch.num_local_experts is not None, gpu_family(gpu.name, gpu.family), release_era(engine.release.number)
    fitted = FITTED.seconds("V1", layers, graphs, gpus, arch.multimodal, moe, family, era)
    return {phase: round(seconds * factors.get(phase, 1.0), 2) for phase, seconds in fitted.items()}


def _measured(factors: Mapping[str, float], phases: tuple[str, ...]) -> str:
    """How the measured factors of a term's phases enter its `how` ("" when none is set)."""
    given = [f"{phase} x {factors[phase]:g}" for phase in phases if phase in factors]
    return f"; measured probes.phase_factors: {', '.join(given)}" if given else ""


def _sum(phases: dict[str, float], names: tuple[str, ...]) -> float:
    return sum(phases[name] for name in names)


@dataclass(frozen=True)
class FixedTerms:
    """The startup budget's fixed terms for one pod, each from probes.* where the stack sets it, else fitted.
    `fitted`: the fitted phases of the pod, which split each term into its phases (preflight/startup_phases.py).
    `cuda_graph_hit_seconds`: the compile term of a start that finds vLLM's compile cache: the fitted compile from the
    cache, the CUDA graphs captured again (they are not cached); as set, or 0, where the term is set or eager.
    The fitted phases are the fit's times the stack's measured factors (`phase_factors`)."""

    engine_start_seconds: float  # the pod's: its workers beyond the first included
    multi_gpu_seconds: float  # what the pod's GPUs beyond the first add to it (0 on one GPU)
    cuda_graph_seconds: float  # 0 with enforce_eager
    engine_start_how: str
    cuda_graph_how: str
    fitted: dict[str, float] = field(default_factory=dict)
    # What the startup probe allows for each term: its fitted parts x PROBE_MARGIN, its set parts as set.
    engine_start_allowed_seconds: float = 0.0
    cuda_graph_allowed_seconds: float = 0.0
    cuda_graph_hit_seconds: float = 0.0
    phase_factors: dict[str, float] = field(default_factory=dict)  # probes.phase_factors that scale `fitted`
    # What a start that finds vLLM's model-info cache saves of the fitted first start (0 where the start is set).
    model_info_miss_seconds: float = 0.0

    def allowance(self, added_seconds: float) -> tuple[float, str] | None:
        """What the startup probe allows for both terms (with `added_seconds`, a group's wait, on top) and why; None
        when that is their prediction (every part set)."""
        over = [
            name
            for name, allowed, predicted in (
                ("engine start", self.engine_start_allowed_seconds, self.engine_start_seconds),
                ("compile", self.cuda_graph_allowed_seconds, self.cuda_graph_seconds),
            )
            if allowed > predicted
        ]
        if not over:
            return None
        allowed = self.engine_start_allowed_seconds + self.cuda_graph_allowed_seconds + added_seconds
        return allowed, f"fitted {' and '.join(over)} x {PROBE_MARGIN:g}"


def _allowed(seconds: float, fitted: bool) -> float:
    return seconds * PROBE_MARGIN if fitted else seconds


def _multi_gpu(probes: ProbesConfig, pod: float, one_gpu: float, extra: int) -> tuple[float, str]:
    """What the GPUs beyond the first add: probes.per_gpu_start_seconds for each, else the fit's pod less its one-GPU
    start (a step for having workers at all, and a part per worker)."""
    if probes.per_gpu_start_seconds is None:
        return round(pod - one_gpu, 2), "fitted"
    return float(probes.per_gpu_start_seconds * extra), f"probes.per_gpu_start_seconds x {extra}"


def _engine_start(
    probes: ProbesConfig, fitted: dict[str, float], one_gpu: float, extra: int, source: str
) -> tuple[float, float, float, str]:
    """The pod's engine start, its multi-GPU part, what the probe allows for it, and how: the one-GPU start (set or
    fitted) plus the multi-GPU part (set or fitted); with neither set, the fitted start of the pod."""
    multi, multi_how = _multi_gpu(probes, _sum(fitted, ENGINE_START_PHASES), one_gpu, extra)
    base = one_gpu if probes.engine_start_seconds is None else float(probes.engine_start_seconds)
    how = f"{base:g} s fitted ({source})" if probes.engine_start_seconds is None else "probes.engine_start_seconds"
    if extra:
        how += f" + {multi:g} s for {extra} more GPU{'s' * (extra > 1)} ({multi_how})"
    allowed = _allowed(base, probes.engine_start_seconds is None) + _allowed(multi, probes.per_gpu_start_seconds is None)
    return round(base + multi, 2), multi, round(allowed, 2), how


def fixed_terms(probes: ProbesConfig, engine: ResolvedEngine) -> FixedTerms:
    """The fixed terms of a pod of this engine (its GPUs on one node)."""
    gpus, factors = engine.gpus_per_node, probes.phase_factors.given()
    fitted = fitted_phase_seconds(engine, gpus, factors)
    one_gpu = _sum(fitted_phase_seconds(engine, 1, factors), ENGINE_START_PHASES)
    source = fitted_source(engine.gpu.name, engine.gpu.family, ENGINE_START_PHASES) + _measured(factors, ENGINE_START_PHASES)
    start, multi, start_allowed, start_how = _engine_start(probes, fitted, one_gpu, gpus - 1, source)
    if engine.enforce_eager:
        graphs, graphs_how, hit = 0.0, "0 with enforce_eager", 0.0
    elif probes.cuda_graph_capture_seconds is None:
        graphs_source = fitted_source(engine.gpu.name, engine.gpu.family, GRAPH_PHASES) + _measured(factors, GRAPH_PHASES)
        graphs, graphs_how = _sum(fitted, GRAPH_PHASES), f"compile and CUDA graphs fitted ({graphs_source})"
        hit = FITTED.compile_hit(fitted["compile"]) + fitted["cuda_graphs"]
    else:
        graphs = hit = float(probes.cuda_graph_capture_seconds)
        graphs_how = "probes.cuda_graph_capture_seconds"
    graphs_allowed = round(_allowed(graphs, probes.cuda_graph_capture_seconds is None), 2)
    model_info = 0.0 if probes.engine_start_seconds is not None else _model_info_miss(factors)
    return FixedTerms(
        start,
        multi,
        round(graphs, 2),
        start_how,
        graphs_how,
        fitted,
        start_allowed,
        graphs_allowed,
        round(hit, 2),
        factors,
        model_info,
    )


def _model_info_miss(factors: Mapping[str, float]) -> float:
    """The fitted first start's model-info inspection (its process start's step), as the stack's factor scales it."""
    return round(FITTED.process_start_model_info_miss * factors.get("process_start", 1.0), 2)


@dataclass(frozen=True)
class StartupBudget:
    load_seconds: float  # weights on disk / read throughput
    engine_start_seconds: float  # the pod's predicted engine start (a group's wait included)
    cuda_graph_seconds: float  # predicted compile and CUDA graphs; 0 with enforce_eager
    safety_factor: float
    total_seconds: int  # (load + the fixed terms' allowance) x safety factor, rounded up to whole periods
    period_seconds: int
    failure_threshold: int  # startupProbe failureThreshold: total_seconds / period_seconds
    overridden: bool = False  # probes.startup_seconds replaced the estimate
    fixed_allowance_seconds: float = 0.0  # what the probe allows for engine start and compile (>= their prediction)
    fixed_allowance_how: str = ""  # why it exceeds the prediction ("" when it does not)

    def explain(self) -> str:
        if self.overridden:
            return f"{self.total_seconds} s set by probes.startup_seconds ({self.failure_threshold} x {self.period_seconds} s)"
        fixed = f"{self.engine_start_seconds:.0f} s engine start + {self.cuda_graph_seconds:.0f} s compile/CUDA graphs"
        if self.fixed_allowance_how:
            fixed = f"{self.fixed_allowance_seconds:.0f} s allowed for {fixed}: {self.fixed_allowance_how}"
        return (
            f"({self.load_seconds:.0f} s load + {fixed}) x {self.safety_factor:g} = "
            f"{self.total_seconds} s ({self.failure_threshold} x {self.period_seconds} s)"
        )


def startup_budget(
    weights_on_disk_gib: float,
    load_throughput_gib_per_s: float,
    *,
    engine_start_seconds: float,
    cuda_graph_seconds: float,
    safety_factor: float,
    period_seconds: int,
    override_seconds: int | None = None,
    allowance: tuple[float, str] | None = None,
) -> StartupBudget:
    """The startup budget of one replica: `engine_start_seconds` and `cuda_graph_seconds` are the pod's predicted terms
    (FixedTerms, a group's wait added); `allowance`: what the probe allows for them instead, and why (a fitted term's
    margin); `override_seconds` replaces the computed total."""
    if load_throughput_gib_per_s <= 0 or period_seconds <= 0:
        raise ValueError("throughput and period must be positive")
    load = weights_on_disk_gib / load_throughput_gib_per_s
    allowed, how = allowance if allowance is not None else (engine_start_seconds + cuda_graph_seconds, "")
    raw = override_seconds if override_seconds is not None else (load + allowed) * safety_factor
    threshold = max(1, math.ceil(raw / period_seconds))
    return StartupBudget(
        load_seconds=load,
        engine_start_seconds=engine_start_seconds,
        cuda_graph_seconds=cuda_graph_seconds,
        safety_factor=1.0 if override_seconds is not None else safety_factor,
        total_seconds=threshold * period_seconds,
        period_seconds=period_seconds,
        failure_threshold=threshold,
        overridden=override_seconds is not None,
        fixed_allowance_seconds=round(allowed, 2),
        fixed_allowance_how=how,
    )
