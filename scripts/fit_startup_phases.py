"""Fit the fixed start-up phases on public GPU start-ups and print how well they predict the held-out ones.

Usage: venv/bin/python scripts/fit_startup_phases.py
Reads tests/data/startup-phases.csv (one row per public start-up, its sources; the held-out rule in
tests/data/startup-phases/README.md). Over the rows not held out, by least squares: process start = a base + a step
once the pod has several GPUs + a part per extra GPU + a step for a multimodal checkpoint + a step for a start that
finds no model-info cache; compile = a base + a
part per layer and pass (passes = 1 + the compile ranges, two on a pod of several GPUs; V1 dense rows that state their
layers and missed the compile cache); a
compile that hits the cache = a fraction of the same start-up's miss (through the origin, the rows that log both);
CUDA graphs = a coefficient per engine generation x graphs captured x layers (through the origin; V1 one for dense
rows, one for mixture-of-experts rows); no coefficient below 0 (a term fitted negative is held at 0); KV
cache init a constant per engine generation + a part per GPU beyond the first + a step for a multimodal checkpoint; API ready
a base + a step for several GPUs + a step for a multimodal checkpoint (catalog/startup_phases.py says why, and holds
the result). Then the factors (FACTORS, in order, each through the origin against the figures before it): per release
era before 0.11 and per GPU family (A100, L40S), for the phases that depend on them; the base figures are fitted on the
rows neither of whose era and family has a factor for the phase. Each held-out row is then predicted phase by phase
(a cache hit as the fraction of its logged miss, and its CUDA graphs), and its whole start as the predicted fixed
phases plus its logged weight load. A phase is within when it is within 30 % or within the 1 s resolution of the
logs' whole-second stamps and `finished in X secs` (the same allowance for every row and phase). Then the same
held-out rows after starts on the same host: each phase times the median ratio (logged over fitted) of the fitted
starts of the row's host, as a stack that sets the probes.phase_factors those starts measured predicts it.
"""

from __future__ import annotations

import csv
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import mean, median

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make the project's packages importable
    sys.path.insert(0, str(ROOT))

from catalog.gpus import GPUS  # noqa: E402
from catalog.startup_phases import (  # noqa: E402
    FACTOR_FAMILIES,
    FIXED_PHASES,
    FittedPhases,
    compile_passes,
    factor_name,
    gpu_family,
    release_era,
)
from preflight.cuda_graphs import graphs_captured  # noqa: E402

DATA = ROOT / "tests" / "data" / "startup-phases.csv"
FIXED = FIXED_PHASES
TOLERANCE_PERCENT = 30  # a held-out phase's target (issue 23)
WHOLE_START_TOLERANCE_PERCENT = 20
STAMP_RESOLUTION_S = 1.0  # the logs stamp whole seconds; graph capture prints whole seconds
Row = dict[str, str]


@dataclass(frozen=True)
class Miss:
    row: str
    phase: str  # a FIXED phase or "whole_start"
    logged: float
    predicted: float

    @property
    def error_percent(self) -> float:
        return (self.predicted - self.logged) / self.logged * 100

    @property
    def within(self) -> bool:
        """Within 30 % (20 % for the whole start) or within the 1 s resolution of the stamps."""
        limit = WHOLE_START_TOLERANCE_PERCENT if self.phase == "whole_start" else TOLERANCE_PERCENT
        return abs(self.error_percent) <= limit or abs(self.predicted - self.logged) <= STAMP_RESOLUTION_S


def load_rows(path: Path = DATA) -> list[Row]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _number(row: Row, key: str) -> float | None:
    return float(row[key]) if row[key] else None


def layers(row: Row) -> int | None:
    return int(row["layers"]) if row["layers"] else None


def graphs(row: Row) -> int | None:
    """The graphs the log prints, else those max_num_seqs and max_num_batched_tokens give."""
    if row["graphs_logged"]:
        return int(row["graphs_logged"])
    seqs = row["max_num_seqs"]
    return graphs_captured(row["engine"], int(seqs), int(row["max_num_batched_tokens"] or 0)) if seqs else None


def gpus(row: Row) -> int:
    return int(row["tensor_parallel"] or 1)


def multimodal(row: Row) -> bool:
    """The checkpoint has a vision or audio encoder (the row's `multimodal` column)."""
    return row["multimodal"] == "yes"


# The architecture of a row's GPU that catalog/gpus.py does not list (nvidia.com/gpu.family's spelling), so that the
# row takes the figures the program gives that GPU (catalog/startup_phases.py ARCHITECTURE_FAMILIES): the RTX 3090 Ti
# and the RTX A5000 are GA102s, Ampere parts (NVIDIA's Ampere GA102 architecture whitepaper).
ROW_ARCHITECTURES = {"RTX 3090 Ti": "ampere", "RTX A5000": "ampere"}


def gpu_name(row: Row) -> str:
    """The row's GPU without its count (`2x L40S ...` is an L40S ...)."""
    return re.sub(r"^\d+x ", "", row["gpu"])


def family(row: Row) -> str | None:
    """The GPU family whose figures the row takes, as catalog/startup_phases.py `gpu_family` gives it: with the
    architecture catalog/gpus.py lists for the GPU (nvidia.com/gpu.family, as preflight/startup.py passes it; the A40's
    "ampere"), else ROW_ARCHITECTURES'."""
    name = gpu_name(row)
    product = GPUS.get(name)
    return gpu_family(name, product.family if product else ROW_ARCHITECTURES.get(name))


def era(row: Row) -> str | None:
    """The release era of a V1 row before 0.11 (`0.10.1.1`, `~0.9 (2025-06)`), else None."""
    version = re.search(r"(\d+)\.(\d+)", row["release"])
    if row["engine"] != "V1" or version is None:
        return None
    return release_era((int(version[1]), int(version[2])))


def base(row: Row, phase: str) -> bool:
    """A row of the base figures of a phase: neither its release era nor its GPU family has a factor for the phase."""
    return not any(key and factor_name(phase, key) in FACTORS for key in (era(row), family(row)))


def model_info_miss(row: Row) -> bool:
    """The start found no model-info cache (the row's `model_info_cache` column, round 10)."""
    return row["model_info_cache"] == "miss"


def predicted(row: Row, fitted: FittedPhases) -> dict[str, float]:
    return fitted.seconds(
        row["engine"],
        layers(row),
        graphs(row),
        gpus(row),
        multimodal(row),
        bool(row["experts"]),
        family(row),
        era(row),
        model_info_miss(row),
    )


def hit(row: Row) -> bool:
    """The start-up compiled from vLLM's compile cache (`Directly load the compiled graph(s) ... from the cache`)."""
    return row["compile_cache"] == "hit"


def _fitted(rows: list[Row], phase: str, engine: str | None = None, dense: bool = False) -> list[Row]:
    """The rows not held out that log `phase`; a compile only where it missed the cache."""
    return [
        r
        for r in rows
        if r["held_out"] == "no"
        and r[phase]
        and base(r, phase)
        and (engine is None or r["engine"] == engine)
        and not (dense and r["experts"])
        and not (phase == "compile" and hit(r))
    ]


def _least_squares(design: list[list[float]], ys: list[float]) -> list[float]:
    """The coefficients b minimising |X b - y| (the normal equations, by Gauss-Jordan elimination)."""
    n = len(design[0])
    xty = [sum(x[i] * y for x, y in zip(design, ys, strict=True)) for i in range(n)]
    a = [[sum(x[i] * x[j] for x in design) for j in range(n)] + [xty[i]] for i in range(n)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda k: abs(a[k][col]))
        a[col], a[pivot] = a[pivot], a[col]
        for k in (k for k in range(n) if k != col):
            factor = a[k][col] / a[col][col]
            a[k] = [v - factor * w for v, w in zip(a[k], a[col], strict=True)]
    return [a[i][n] / a[i][i] for i in range(n)]


def _non_negative(design: list[list[float]], ys: list[float]) -> list[float]:
    """Least squares with no coefficient below 0 (no phase gets shorter with a GPU or an encoder more): a coefficient
    fitted negative is held at 0, the most negative first, and the others refitted."""
    kept = list(range(len(design[0])))
    while True:
        fitted = dict(zip(kept, _least_squares([[x[i] for i in kept] for x in design], ys), strict=True))
        negative = min(kept, key=lambda i: fitted[i])
        if fitted[negative] >= 0:
            return [fitted.get(i, 0.0) for i in range(len(design[0]))]
        kept.remove(negative)


def _graph_seconds(rows: list[Row], engine: str, moe: bool = False) -> float:
    """Seconds per graph and layer, through the origin, over the dense rows or (`moe`) the mixture-of-experts ones."""
    pairs = [
        ([float(g * n)], float(r["cuda_graphs"]))
        for r in _fitted(rows, "cuda_graphs", engine)
        if bool(r["experts"]) == moe and (g := graphs(r)) and (n := layers(r))
    ]
    return round(_least_squares([x for x, _ in pairs], [y for _, y in pairs])[0], 6)


def _hit_fraction(rows: list[Row]) -> float:
    """What a compile from the cache costs as a share of the same start-up's miss: least squares through the origin
    over the rows not held out that log both."""
    pairs = [
        ([float(r["compile_miss"])], float(r["compile"])) for r in rows if r["held_out"] == "no" and hit(r) and r["compile"]
    ]
    return round(_least_squares([x for x, _ in pairs], [y for _, y in pairs])[0], 3)


def _mean(rows: list[Row], phase: str, engine: str | None = None) -> float:
    return round(mean(float(r[phase]) for r in _fitted(rows, phase, engine)), 2)


def _multi_gpu(row: Row) -> float:
    return 1.0 if gpus(row) > 1 else 0.0


def _steps(row: Row) -> list[float]:
    """A base, the step for several GPUs and the step for a multimodal checkpoint."""
    return [1.0, _multi_gpu(row), float(multimodal(row))]


def _step_fit(rows: list[Row], phase: str, engine: str | None = None) -> list[float]:
    """A phase as its base, multi-GPU step and multimodal step (`_steps`), over the rows not held out."""
    fitted = _fitted(rows, phase, engine)
    return _non_negative([_steps(r) for r in fitted], [float(r[phase]) for r in fitted])


def _kv_cache_terms(row: Row) -> list[float]:
    """A V1 row's KV-cache initialisation terms: the constant from 0.11 on, the part per layer before 0.11, the part
    per GPU beyond the first, the multimodal step."""
    old = era(row) is not None
    return [float(not old), float(layers(row) or 0) * old, float(gpus(row) - 1), float(multimodal(row))]


def _base_fit(rows: list[Row]) -> FittedPhases:
    """The H100 figures of releases from 0.11 on, every factor 1."""
    compiled = [r for r in _fitted(rows, "compile", "V1", dense=True) if layers(r)]
    compile_base, per_pass = _non_negative(
        [[1.0, float(layers(r) or 0) * compile_passes(gpus(r))] for r in compiled], [float(r["compile"]) for r in compiled]
    )
    started = _fitted(rows, "process_start")
    start_base, multi_gpu, start_multimodal, per_extra_gpu, model_info = _non_negative(
        [[*_steps(r), float(gpus(r) - 1), float(model_info_miss(r))] for r in started],
        [float(r["process_start"]) for r in started],
    )
    initialised = _fitted(rows, "kv_cache_init", "V1")
    kv_v1, kv_per_layer, kv_per_extra_gpu, kv_multimodal = _non_negative(
        [_kv_cache_terms(r) for r in initialised], [float(r["kv_cache_init"]) for r in initialised]
    )
    api_base, api_multi_gpu, api_multimodal = _step_fit(rows, "api_ready")
    return FittedPhases(
        process_start=round(start_base, 2),
        process_start_multi_gpu=round(multi_gpu, 2),
        process_start_per_extra_gpu=round(per_extra_gpu, 2),
        process_start_multimodal=round(start_multimodal, 2),
        process_start_model_info_miss=round(model_info, 2),
        compile_base=round(compile_base, 2),
        compile_per_layer_pass=round(per_pass, 4),
        compile_hit_fraction=_hit_fraction(rows),
        unknown_layers=round(mean(float(layers(r) or 0) for r in compiled), 1),
        graph_seconds_v0=_graph_seconds(rows, "V0"),
        graph_seconds_v1=_graph_seconds(rows, "V1"),
        graph_seconds_v1_moe=_graph_seconds(rows, "V1", moe=True),
        kv_cache_init_v0=_mean(rows, "kv_cache_init", "V0"),
        kv_cache_init_v1=round(kv_v1, 2),
        kv_cache_init_per_layer=round(kv_per_layer, 4),
        kv_cache_init_per_extra_gpu=round(kv_per_extra_gpu, 2),
        kv_cache_init_multimodal=round(kv_multimodal, 2),
        api_ready=round(api_base, 2),
        api_ready_multi_gpu=round(api_multi_gpu, 2),
        api_ready_multimodal=round(api_multimodal, 2),
        **dict.fromkeys(FACTORS, 1.0),
    )


# Each factor: the phase, the rows it is fitted on, fitted in this order (each against the figures before it).
FACTORS: dict[str, tuple[str, Callable[[Row], bool]]] = {
    "compile_0_10": ("compile", lambda r: era(r) == "0.10"),
    "cuda_graphs_0_10": ("cuda_graphs", lambda r: era(r) == "0.10" and family(r) not in FACTOR_FAMILIES),
    "cuda_graphs_a100": ("cuda_graphs", lambda r: family(r) == "A100" and era(r) != "pre-0.10"),
    "cuda_graphs_l40s": ("cuda_graphs", lambda r: family(r) == "L40S" and era(r) != "pre-0.10"),
    "kv_cache_init_l40s": ("kv_cache_init", lambda r: family(r) == "L40S"),
    "compile_pre_0_10": ("compile", lambda r: era(r) == "pre-0.10"),
    "cuda_graphs_pre_0_10": ("cuda_graphs", lambda r: era(r) == "pre-0.10"),
    "kv_cache_init_pre_0_10": ("kv_cache_init", lambda r: era(r) == "pre-0.10"),
}


def factor_rows(rows: list[Row], name: str) -> list[Row]:
    """The rows not held out that a factor is fitted on: they log its phase (a compile only where it missed the
    cache, in a dense model of stated layers) and the figures before it predict the phase."""
    phase, keep = FACTORS[name]
    return [
        r
        for r in rows
        if r["held_out"] == "no"
        and r[phase]
        and keep(r)
        and not (phase == "compile" and (hit(r) or r["experts"] or not layers(r)))
        and not (phase == "cuda_graphs" and not (graphs(r) and layers(r)))
    ]


def _factor(rows: list[Row], name: str, fitted: FittedPhases) -> float:
    """A factor through the origin: the logged phase over what the figures without it predict."""
    phase = FACTORS[name][0]
    pairs = [(predicted(r, fitted)[phase], float(r[phase])) for r in factor_rows(rows, name)]
    return round(sum(x * y for x, y in pairs) / sum(x * x for x, _ in pairs), 3)


def fit(rows: list[Row]) -> FittedPhases:
    """The base figures, then each factor in FACTORS' order."""
    fitted = _base_fit(rows)
    for name in FACTORS:
        fitted = replace(fitted, **{name: _factor(rows, name, fitted)})
    return fitted


def host(row: Row) -> str:
    """The machine a row ran on, as far as its source tells: the repository (an issue or pull request thread on its
    own) and the GPU column. Rows of one host are starts of one set of nodes."""
    source = re.match(r"https://github\.com/[^/]+/[^/]+(?:/(?:issues|pull)/\d+)?", row["source"])
    return f"{source[0] if source else row['source']} | {row['gpu']}"


def phase_ratios(row: Row, fitted: FittedPhases) -> dict[str, float]:
    """What the row's start measures of its host (preflight/startup_phases.py measured_phase_factors): each logged
    phase over the fit's, a compile from the cache left out."""
    phases = predicted(row, fitted)
    return {
        phase: logged / phases[phase]
        for phase in FIXED
        if (logged := _number(row, phase)) and phases[phase] and not (phase == "compile" and hit(row))
    }


def host_factors(rows: list[Row], fitted: FittedPhases, row: Row) -> dict[str, float]:
    """The probes.phase_factors that the starts fitted on the row's host measured: per phase, the median of their
    ratios (several starts on the host; {} where it has none)."""
    ratios: dict[str, list[float]] = {}
    for other in (r for r in rows if r["held_out"] == "no" and host(r) == host(row)):
        for phase, ratio in phase_ratios(other, fitted).items():
            ratios.setdefault(phase, []).append(ratio)
    return {phase: median(values) for phase, values in ratios.items()}


def held_out_misses(rows: list[Row], fitted: FittedPhases, measured: bool = False) -> list[Miss]:
    """Each held-out phase beside its prediction; `measured`: after starts on the same host, with the factors they
    measured (host_factors), as a stack that sets probes.phase_factors gets it."""
    misses = []
    for row in (r for r in rows if r["held_out"] == "yes"):
        factors = host_factors(rows, fitted, row) if measured else {}
        phases = {phase: round(seconds * factors.get(phase, 1.0), 2) for phase, seconds in predicted(row, fitted).items()}
        if hit(row) and row["compile"]:  # its own miss, logged beside it, times the fraction
            predicted_hit = fitted.compile_hit(float(row["compile_miss"]))
            misses.append(Miss(row["id"], "compile_hit", float(row["compile"]), predicted_hit))
        for phase in ("cuda_graphs",) if hit(row) else FIXED:  # a hit captures its graphs again
            logged = _number(row, phase)
            if logged:
                misses.append(Miss(row["id"], phase, logged, phases[phase]))
        whole, load = _number(row, "whole_start"), _number(row, "weight_load")
        if whole and load is not None:
            misses.append(Miss(row["id"], "whole_start", whole, round(load + sum(phases.values()), 2)))
    return misses


# Over the slowest start seen: the probe restarts a pod that outlasts it, so a host or GPU slower than any row (a GPU
# without rows keeps the H100 figures) would crash-loop at a margin that only just covers the slowest row.
PROBE_HEADROOM = 1.25


def slowest_ratio(rows: list[Row], fitted: FittedPhases) -> float:
    """The largest ratio of a start-up's logged fixed phases to what the fit predicts for the same phases, over every
    row that compiled (held out or not: an envelope, not a fit; the probe covers a first start, which misses the
    compile cache)."""
    ratios = []
    for row in (r for r in rows if not hit(r)):
        phases = predicted(row, fitted)
        logged = {phase: value for phase in FIXED if (value := _number(row, phase)) is not None}
        if logged:
            ratios.append(sum(logged.values()) / sum(phases[phase] for phase in logged))
    return max(ratios)


def probe_margin(rows: list[Row], fitted: FittedPhases) -> float:
    """The startup probe's margin over fitted fixed terms: the slowest ratio times PROBE_HEADROOM, rounded up to a
    half."""
    return math.ceil(slowest_ratio(rows, fitted) * PROBE_HEADROOM * 2) / 2


def main() -> None:
    rows = load_rows()
    fitted = fit(rows)
    print("fitted (least squares over the rows not held out):")
    print("| coefficient | fitted |")
    print("| --- | --- |")
    for name, value in vars(fitted).items():
        print(coefficient_row(name, value))
    print("| start-up | phase | logged s | predicted s | error | within |")
    print("| --- | --- | --- | --- | --- | --- |")
    for miss in held_out_misses(rows, fitted):
        print(table_row(miss))
    print("| phase | held-out figures | within | median error |")
    print("| --- | --- | --- | --- |")
    for line in phase_summary(held_out_misses(rows, fitted)):
        print(line)
    measured = held_out_misses(rows, fitted, measured=True)
    print("after starts on the same host (probes.phase_factors as those starts measured them):")
    print("| phase | held-out figures | within | median error |")
    print("| --- | --- | --- | --- |")
    for line in phase_summary(measured):
        print(line)
    print("| start-up | phase | logged s | predicted s | error | within |")
    print("| --- | --- | --- | --- | --- | --- |")
    for miss in (m for m in measured if not m.within):
        print(table_row(miss))
    margin = probe_margin(rows, fitted)
    print(f"probe margin over fitted terms (largest logged / predicted fixed phases x {PROBE_HEADROOM:g}): {margin:g}")


def coefficient_row(name: str, value: float) -> str:
    """The coefficients table's row (docs/calibration.md "Start-up phases")."""
    units = {"unknown_layers": "layers", "compile_hit_fraction": "x the miss"}
    unit = "x the H100 figure" if name in FACTORS else units.get(name, "s")
    return f"| {name} | {value:g} {unit} |"


def phase_summary(misses: list[Miss]) -> list[str]:
    """Per phase, the held-out summary's row (docs/calibration.md "Start-up phases"): its figures, how many are
    within, and the median of the errors' sizes."""
    lines = []
    for phase in (*FIXED[:2], "compile_hit", *FIXED[2:], "whole_start"):
        of_phase = [miss for miss in misses if miss.phase == phase]
        if of_phase:
            within = sum(miss.within for miss in of_phase)
            error = median(abs(miss.error_percent) for miss in of_phase)
            lines.append(f"| {phase} | {len(of_phase)} | {within} | {error:.0f} % |")
    return lines


def table_row(miss: Miss) -> str:
    """The held-out table's row (docs/calibration.md "Start-up phases")."""
    within = "yes" if miss.within else "**no**"
    return f"| {miss.row} | {miss.phase} | {miss.logged:g} | {miss.predicted:g} | {miss.error_percent:+.0f} % | {within} |"


if __name__ == "__main__":
    main()
