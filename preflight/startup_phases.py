"""The phases of one vLLM start-up, read from its log (and the pod's events), beside the startup budget's terms.

Each phase is what a release logs (quoted from tests/data/startup-logs/phases, sources in its README):
- process start: from the first timestamped line to `Starting to load model` (imports, the API server, the
  engine core and its workers, distributed init).
- weight load: `Loading weights took X seconds` (the read alone), or with `--load-format runai_streamer` the
  streamer's `[RunAI Streamer] Overall time to stream S of all files to D: Xs` (the read alone; printed with
  RUNAI_STREAMER_LOG_TO_STDERR=1, which object_storage renders; tests/e2e/test_object_storage.py reads it on
  vLLM's CPU build, whose runner prints neither `took` line), else `Model loading took X GiB and Y seconds`
  (0.19.0 adds `memory`; it also counts a download when the cache was empty).
- compile: `torch.compile takes|took X s in total`, or 0.21's `init engine ... took T s (compilation: X s)`. A start
  that finds vLLM's compile cache logs `Directly load the compiled graph(s) for ... from the cache` first and the
  same total line (tests/data/startup-phases/R58-0.10.0.log, R63-0.11-tp8.log): its compile is set beside the
  budget's start from the cache (preflight/startup.py `cuda_graph_hit_seconds`), and it measures no compile term
  for a first start, which compiles anew.
- CUDA graphs: `Graph capturing finished in X secs`.
- KV cache init: `init engine (profile, create kv cache, warmup model) took T seconds` less compile and graphs
  (memory profiling, the KV cache allocation, the warm-up).
- API ready: from the `init engine` line to `Starting vLLM (API) server on`.
- image pull: the kubelet's `Successfully pulled image "..." in 1m2.5s` event (0 when `already present`).
The budget's terms (preflight/delivery.py) cover them: load; engine start = process start + KV cache init + API
ready; compile + graphs = compile + CUDA graphs. A term is split between its phases in proportion to the seconds
fitted on public start-ups predict for the stack (catalog/startup_phases.py: compile by the layers, CUDA graphs by
the graphs captured and the layers), so the phases of a term add up to it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from catalog.startup_phases import ENGINE_START_PHASES, FITTED, FIXED_PHASES, GRAPH_PHASES, PHASE_FACTOR_BOUNDS
from preflight.delivery import COMPILE, ENGINE_START, IMAGE_PULL, LOAD, DeliveryBudget
from preflight.startup_log import AnchoredPattern, literal_start
from reading.numbers import NumberError, go_duration_seconds
from reading.numbers import figure as parse_figure

TOLERANCE = 0.30  # a phase further than this from its share of the budget is reported
_NUMBER = r"([0-9][0-9,]*(?:\.[0-9]+)?)"
# vLLM's logger: "INFO 04-22 01:47:08 [..." (month-day, no year); the first stamped line starts the process.
_STAMP = re.compile(r"(?:DEBUG|INFO|WARNING|ERROR) ([01][0-9])-([0-3][0-9]) ([0-2][0-9]):([0-5][0-9]):([0-5][0-9])", re.ASCII)
PHASE_PATTERNS: dict[str, tuple[str, ...]] = {
    "load_start": (r"Starting to load model",),
    "weights_read_s": (
        rf"Loading weights took {_NUMBER} seconds",
        rf"\[RunAI Streamer\] Overall time to stream [^\n:]{{1,80}}: {_NUMBER}s",
    ),
    "model_load_s": (rf"Model loading took [0-9.]+ ?GiB(?: memory)? and {_NUMBER} s",),
    "compile_s": (
        rf"torch\.compile (?:takes|took) {_NUMBER} s in total",
        rf"init engine \(profile, create kv cache, warmup model\) took [0-9.]+ s \(compilation: {_NUMBER} s\)",
    ),
    "compile_cache_hit": (r"Directly load the compiled graph\(s\) for [^\n]{1,80} from the cache",),
    "graphs_s": (rf"Graph capturing finished in {_NUMBER} secs",),
    "init_engine_s": (rf"init engine \(profile, create kv cache, warmup model\) took {_NUMBER} s",),
    "api_ready": (r"Starting vLLM (?:API )?server on",),
}
_MATCHERS = {
    name: tuple(AnchoredPattern(literal_start(p), re.compile(p, re.ASCII)) for p in patterns)
    for name, patterns in PHASE_PATTERNS.items()
}
# `describe pod` quotes the image, `get events -o json` escapes the quotes: anything up to 300 characters.
_PULLED = re.compile(r"Successfully pulled image [^\n]{1,300}? in ((?:[0-9.]+(?:h|ms|m|s))+)", re.ASCII)
_PRESENT = "already present on machine"


@dataclass(frozen=True)
class LoggedPhases:
    """Seconds per phase as the log shows them (None: the release or the excerpt does not print it)."""

    image_pull: float | None = None
    process_start: float | None = None
    weight_load: float | None = None
    compile: float | None = None
    cuda_graphs: float | None = None
    kv_cache_init: float | None = None
    api_ready: float | None = None
    total: float | None = None  # first line to the server's start (the image pull not included)
    load_includes_download: bool = False  # the figure is `Model loading took`, which counts a download
    compile_cache_hit: bool = False  # torch.compile loaded its graphs from vLLM's compile cache

    @property
    def found(self) -> bool:
        return any(getattr(self, name) is not None for name in PHASES)


# (phase field, label, budget term it falls under)
PHASE_ROWS: tuple[tuple[str, str, str], ...] = (
    ("image_pull", "image pull", IMAGE_PULL),
    ("process_start", "process start to engine start", ENGINE_START),
    ("weight_load", "weight load", LOAD),
    ("compile", "compile (torch.compile)", COMPILE),
    ("cuda_graphs", "CUDA graphs", COMPILE),
    ("kv_cache_init", "KV cache initialisation", ENGINE_START),
    ("api_ready", "API ready", ENGINE_START),
)
PHASES = tuple(name for name, _, _ in PHASE_ROWS)


def _stamp_seconds(match: re.Match[str]) -> float | None:
    month, day, hour, minute, second = (int(g) for g in match.groups())
    try:  # a leap year, so that 02-29 parses; only differences are used
        return datetime(2024, month, day, hour, minute, second).timestamp()
    except ValueError:
        return None


def _stamp_before(text: str, position: int) -> float | None:
    """The timestamp of the line holding `position`."""
    start = text.rfind("\n", 0, position) + 1
    match = _STAMP.search(text, start, position)
    return _stamp_seconds(match) if match else None


def _first(text: str, name: str) -> re.Match[str] | None:
    hits = [match for m in _MATCHERS[name] if (match := m.first(text))]
    return min(hits, key=lambda match: match.start()) if hits else None


def _value(match: re.Match[str] | None) -> float | None:
    if match is None or not match.groups():
        return None
    try:
        return parse_figure(match.group(1))
    except NumberError:
        return None


def image_pull_seconds(events: str) -> float | None:
    """The pull the kubelet reported in the pod's events (`kubectl describe pod` or `get events -o json`)."""
    pulled = _PULLED.search(events)
    if pulled:
        seconds = go_duration_seconds(pulled.group(1))
        return None if seconds is None else round(seconds, 3)
    return 0.0 if _PRESENT in events else None


def _between(text: str, start: re.Match[str] | None, end: re.Match[str] | None, first: float | None) -> float | None:
    begin = first if start is None else _stamp_before(text, start.start())
    finish = None if end is None else _stamp_before(text, end.start())
    return None if begin is None or finish is None else max(0.0, finish - begin)


def parse_phases(text: str, events: str | None = None) -> LoggedPhases:
    """The phases a log shows; `events`: the pod's events, for the image pull."""
    stamp = _STAMP.search(text)
    first = _stamp_seconds(stamp) if stamp else None
    found = {name: _first(text, name) for name in PHASE_PATTERNS}
    read, model = _value(found["weights_read_s"]), _value(found["model_load_s"])
    compile_s, graphs, init = _value(found["compile_s"]), _value(found["graphs_s"]), _value(found["init_engine_s"])
    kv = None if init is None or compile_s is None or graphs is None else round(max(0.0, init - compile_s - graphs), 2)
    started = found["load_start"] is not None  # an excerpt without it does not show the process start
    return LoggedPhases(
        image_pull=None if events is None else image_pull_seconds(events),
        process_start=_between(text, None, found["load_start"], first) if started else None,
        weight_load=read if read is not None else model,
        compile=compile_s,
        cuda_graphs=graphs,
        kv_cache_init=kv,
        api_ready=_between(text, found["init_engine_s"], found["api_ready"], first) if found["init_engine_s"] else None,
        total=_between(text, None, found["api_ready"], first) if started else None,
        load_includes_download=read is None and model is not None,
        compile_cache_hit=found["compile_cache_hit"] is not None,
    )


@dataclass(frozen=True)
class PhaseCheck:
    phase: str  # LoggedPhases field
    label: str
    term: str  # the budget term it falls under
    logged: float | None
    budget: float  # its share of the term

    @property
    def error_percent(self) -> float | None:
        if self.logged is None or self.budget == 0:
            return None
        return (self.logged - self.budget) / self.budget * 100

    @property
    def off(self) -> bool:
        error = self.error_percent
        return error is not None and abs(error) > TOLERANCE * 100


def _share(fitted: dict[str, float], phase: str, phases: tuple[str, ...]) -> float:
    """The part of a term that `phase` takes, among the `phases` the term covers."""
    total = sum(fitted[p] for p in phases)
    return fitted[phase] / total if total else 1 / len(phases)


def _budget_of(phase: str, budget: DeliveryBudget, compile_cache_hit: bool) -> float:
    probe, fixed = budget.probe, budget.fixed
    if phase == "image_pull":
        return float(budget.image_pull_seconds)
    if phase == "weight_load":
        return probe.load_seconds
    if phase in ENGINE_START_PHASES:
        share = probe.engine_start_seconds * _share(fixed.fitted, phase, ENGINE_START_PHASES)
        # A start from the compile cache found the model-info cache beside it (the same VLLM_CACHE_ROOT).
        return share - _model_info_saved(phase, budget, compile_cache_hit)
    if compile_cache_hit:  # the term of a start from the cache, split by the fitted hit and the graphs captured again
        on_hit = fixed.fitted | {"compile": FITTED.compile_hit(fixed.fitted["compile"])}
        return fixed.cuda_graph_hit_seconds * _share(on_hit, phase, GRAPH_PHASES)
    return probe.cuda_graph_seconds * _share(fixed.fitted, phase, GRAPH_PHASES)


def _model_info_saved(phase: str, budget: DeliveryBudget, compile_cache_hit: bool) -> float:
    """What a start that found vLLM's caches saves of a phase's first-start figure: the model-info inspection of the
    process start (0 for other phases, a first start, or a set engine start)."""
    return budget.fixed.model_info_miss_seconds if compile_cache_hit and phase == "process_start" else 0.0


def _label(phase: str, label: str, compile_cache_hit: bool) -> str:
    return "compile (from the cache)" if compile_cache_hit and phase == "compile" else label


def check_phases(budget: DeliveryBudget, logged: LoggedPhases) -> list[PhaseCheck]:
    """Each phase beside its part of the budget's term (the stack's fitted phases split each term); a start that
    compiled from vLLM's compile cache beside the term of such a start."""
    hit = logged.compile_cache_hit
    return [
        PhaseCheck(phase, _label(phase, label, hit), term, getattr(logged, phase), round(_budget_of(phase, budget, hit), 2))
        for phase, label, term in PHASE_ROWS
    ]


def achieved_gib_per_s(budget: DeliveryBudget, logged: LoggedPhases) -> float | None:
    """The checkpoint's GiB over the logged load: the throughput to put into probes.load_throughput_gib_per_s."""
    if not logged.weight_load:
        return None
    return math.floor(budget.weights_gib / logged.weight_load * 100) / 100


def _sum(logged: LoggedPhases, phases: tuple[str, ...]) -> float | None:
    values = [getattr(logged, phase) for phase in phases]
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def measured_settings(budget: DeliveryBudget, logged: LoggedPhases) -> dict[str, float]:
    """The stack keys the log measures: the throughput, the engine start (less the per-GPU term the budget adds
    for the pod's extra GPUs) and the compile + graphs term (not from a compile-cache hit). Only what the log shows
    completely."""
    fixed = budget.fixed
    settings: dict[str, float] = {}
    throughput = achieved_gib_per_s(budget, logged)
    if throughput and not logged.load_includes_download:
        settings["probes.load_throughput_gib_per_s"] = throughput
    engine = _sum(logged, ENGINE_START_PHASES)
    if engine is not None:  # a first start's: the model-info inspection a start from the caches skipped added back
        first_start = engine + _model_info_saved("process_start", budget, logged.compile_cache_hit)
        settings["probes.engine_start_seconds"] = max(1, math.ceil(first_start - fixed.multi_gpu_seconds))
    graphs = _sum(logged, GRAPH_PHASES)
    # A compile from the cache says nothing of a first start's, which the term must cover.
    if graphs is not None and budget.probe.cuda_graph_seconds and not logged.compile_cache_hit:
        settings["probes.cuda_graph_capture_seconds"] = math.ceil(graphs)
    return settings


def measured_phase_factors(budget: DeliveryBudget, logged: LoggedPhases) -> dict[str, float]:
    """Each fixed phase the log shows over what the fit predicts for it (before the stack's own factors): the
    probes.phase_factors of these nodes, for any model's stack on them. Not the compile of a start from the cache
    (a share of a miss, not one), nor a ratio outside PHASE_FACTOR_BOUNDS (an excerpt, not a start)."""
    fixed, low, high = budget.fixed, *PHASE_FACTOR_BOUNDS
    factors = {}
    for phase in FIXED_PHASES:
        logged_seconds = getattr(logged, phase)
        predicted = fixed.fitted.get(phase, 0.0) - _model_info_saved(phase, budget, logged.compile_cache_hit)
        if logged_seconds is None or not predicted or (phase == "compile" and logged.compile_cache_hit):
            continue
        factor = round(logged_seconds / predicted * fixed.phase_factors.get(phase, 1.0), 2)
        if low <= factor <= high:
            factors[phase] = factor
    return factors


def factors_setting(factors: dict[str, float]) -> str:
    """The factors as the stack file's flow mapping under probes."""
    return "probes.phase_factors: {" + ", ".join(f"{phase}: {factor:g}" for phase, factor in factors.items()) + "}"


def _row(check: PhaseCheck) -> str:
    logged = "-" if check.logged is None else f"{check.logged:,.1f}"
    error = check.error_percent
    flag = "  << beyond 30 %" if check.off else ""
    return (
        f"  {check.label:<30} {logged:>9} {check.budget:>9,.1f}  {'' if error is None else f'{error:+.0f} %':>7}"
        f"  {check.term}{flag}"
    )


def phase_warnings(checks: list[PhaseCheck]) -> list[str]:
    warnings = []
    for check in checks:
        if not check.off or check.logged is None:
            continue
        way = "over" if check.logged > check.budget else "under"
        warnings.append(
            f"{check.label}: {check.logged:.1f} s logged, {way} its {check.budget:.1f} s share of the budget's "
            f"{check.term} term by more than {TOLERANCE:.0%}"
        )
    return warnings


def render_phase_check(budget: DeliveryBudget, logged: LoggedPhases) -> str:
    checks = check_phases(budget, logged)
    lines = [
        "Start-up phases against the startup budget (seconds; a term split as the fit predicts for the stack):",
        f"  {'phase':<30} {'logged':>9} {'budget':>9}  {'error':>7}  term",
        *(_row(check) for check in checks),
    ]
    total = "-" if logged.total is None else f"{logged.total:,.0f} s"
    lines.append(f"  whole start (log): {total}; startup probe allows {budget.probe.total_seconds} s")
    if logged.compile_cache_hit:
        lines.append(
            "  compiled from vLLM's compile cache (`Directly load the compiled graph(s)`): compile and CUDA graphs are "
            f"set beside a start from the cache ({budget.fixed.cuda_graph_hit_seconds:g} s); a first start compiles anew"
        )
    throughput = achieved_gib_per_s(budget, logged)
    if throughput is not None:
        how = " (counts a download: the log has no `Loading weights took`)" if logged.load_includes_download else ""
        lines.append(
            f"  achieved load: {budget.weights_gib:.1f} GiB / {logged.weight_load:.1f} s = {throughput:g} GiB/s"
            f"{how}; the budget assumes {budget.throughput.gib_per_s:.3g} GiB/s ({budget.throughput.source})"
        )
    lines += [f"  warning: {warning}" for warning in phase_warnings(checks)]
    settings = measured_settings(budget, logged)
    if settings:
        lines.append("  measured, to put into the stack: " + ", ".join(f"{k}: {v:g}" for k, v in settings.items()))
    factors = measured_phase_factors(budget, logged)
    if factors:
        lines.append(f"  measured on these nodes, for the stack of any model on them: {factors_setting(factors)}")
    return "\n".join(lines)


def phase_check_dict(budget: DeliveryBudget, logged: LoggedPhases) -> dict[str, Any]:
    """The phase check as the JSON report's `startup_phases` section."""
    checks = check_phases(budget, logged)
    return {
        "phases": [
            {"phase": c.phase, "term": c.term, "logged_seconds": c.logged, "budget_seconds": c.budget}
            | {"error_percent": c.error_percent, "beyond_tolerance": c.off}
            for c in checks
        ],
        "tolerance_percent": TOLERANCE * 100,
        "whole_start_seconds": logged.total,
        "startup_probe_seconds": budget.probe.total_seconds,
        "achieved_gib_per_s": achieved_gib_per_s(budget, logged),
        "load_includes_download": logged.load_includes_download,
        "compile_cache_hit": logged.compile_cache_hit,
        "warnings": phase_warnings(checks),
        "measured_settings": measured_settings(budget, logged),
        "measured_phase_factors": measured_phase_factors(budget, logged),
    }
