"""The fixed phases of a vLLM start-up, fitted on public GPU start-ups: the seconds each takes, and from them the
shares by which the startup budget's terms split into phases (preflight/startup_phases.py).

Fitted by scripts/fit_startup_phases.py (the mean of each phase over the start-ups not held out) on
tests/data/startup-phases.csv: eleven public start-ups with phase timings (llm-d-planner's vLLM 0.19.0 H100 logs,
vLLM and run-ai issue threads, sources per row). How well the figures predict the held-out start-ups:
docs/calibration.md "Start-up phases" (asserted by tests/test_startup_phases.py). Mostly 7-8B models on one
H100: the probes' defaults (60 s engine start, 120 s compile and graphs) stay above these sums on purpose.
"""

from __future__ import annotations

FITTED_SECONDS: dict[str, float] = {
    "process_start": 23.33,
    "compile": 23.42,
    "cuda_graphs": 12.33,
    "kv_cache_init": 7.68,
    "api_ready": 2.6,
}
# The budget's terms and the phases they cover (preflight/delivery.py delivery_budget).
ENGINE_START_PHASES = ("process_start", "kv_cache_init", "api_ready")  # probes.engine_start_seconds (+ per GPU)
GRAPH_PHASES = ("compile", "cuda_graphs")  # probes.cuda_graph_capture_seconds


def share(phase: str, phases: tuple[str, ...]) -> float:
    """The part of a term that `phase` takes, among the `phases` the term covers."""
    return FITTED_SECONDS[phase] / sum(FITTED_SECONDS[p] for p in phases)
