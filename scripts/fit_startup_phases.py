"""Fit the fixed start-up phases on public GPU start-ups and print how well they predict the held-out ones.

Usage: venv/bin/python scripts/fit_startup_phases.py
Reads tests/data/startup-phases.csv (one row per public start-up, its sources). Over the rows not held out, by
least squares: CUDA graphs = a coefficient per engine generation x graphs captured x layers (through the origin);
compile = a base + a part per layer (V1 rows that state their layers); KV cache init a mean per engine; process
start and API ready a mean (catalog/startup_phases.py says why, and holds the result). Each held-out row is then
predicted phase by phase, and its whole start as the predicted fixed phases plus its logged weight load.
"""

from __future__ import annotations

import csv
import sys
from dataclasses import dataclass
from pathlib import Path
from statistics import mean

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make the project's packages importable
    sys.path.insert(0, str(ROOT))

from catalog.startup_phases import FittedPhases  # noqa: E402
from preflight.cuda_graphs import graphs_captured  # noqa: E402

DATA = ROOT / "tests" / "data" / "startup-phases.csv"
FIXED = ("process_start", "compile", "cuda_graphs", "kv_cache_init", "api_ready")
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


def load_rows(path: Path = DATA) -> list[Row]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _number(row: Row, key: str) -> float | None:
    return float(row[key]) if row[key] else None


def layers(row: Row) -> int | None:
    return int(row["layers"]) if row["layers"] else None


def graphs(row: Row) -> int | None:
    seqs = row["max_num_seqs"]
    return graphs_captured(row["engine"], int(seqs), int(row["max_num_batched_tokens"] or 0)) if seqs else None


def _fitted(rows: list[Row], phase: str, engine: str | None = None) -> list[Row]:
    return [r for r in rows if r["held_out"] == "no" and r[phase] and (engine is None or r["engine"] == engine)]


def _through_origin(pairs: list[tuple[float, float]]) -> float:
    """The slope k of y = k x by least squares."""
    return sum(x * y for x, y in pairs) / sum(x * x for x, _ in pairs)


def _line(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    """The base and slope of y = a + b x by least squares."""
    mx, my = mean(x for x, _ in pairs), mean(y for _, y in pairs)
    slope = sum((x - mx) * (y - my) for x, y in pairs) / sum((x - mx) ** 2 for x, _ in pairs)
    return my - slope * mx, slope


def _graph_seconds(rows: list[Row], engine: str) -> float:
    pairs = [
        (float(g * n), float(r["cuda_graphs"]))
        for r in _fitted(rows, "cuda_graphs", engine)
        if (g := graphs(r)) and (n := layers(r))
    ]
    return round(_through_origin(pairs), 6)


def _mean(rows: list[Row], phase: str, engine: str | None = None) -> float:
    return round(mean(float(r[phase]) for r in _fitted(rows, phase, engine)), 2)


def gpus(row: Row) -> int:
    return int(row["tensor_parallel"] or 1)


def fit(rows: list[Row]) -> FittedPhases:
    compiled = [(float(n), float(r["compile"])) for r in _fitted(rows, "compile", "V1") if (n := layers(r))]
    base, per_layer = _line(compiled)
    started = [(float(gpus(r) - 1), float(r["process_start"])) for r in _fitted(rows, "process_start")]
    start_base, per_extra_gpu = _line(started)
    return FittedPhases(
        process_start=round(start_base, 2),
        process_start_per_extra_gpu=round(per_extra_gpu, 2),
        compile_base=round(base, 2),
        compile_per_layer=round(per_layer, 4),
        compile_unknown_layers=round(mean(y for _, y in compiled), 2),
        graph_seconds_v0=_graph_seconds(rows, "V0"),
        graph_seconds_v1=_graph_seconds(rows, "V1"),
        kv_cache_init_v0=_mean(rows, "kv_cache_init", "V0"),
        kv_cache_init_v1=_mean(rows, "kv_cache_init", "V1"),
        api_ready=_mean(rows, "api_ready"),
    )


def held_out_misses(rows: list[Row], fitted: FittedPhases) -> list[Miss]:
    misses = []
    for row in (r for r in rows if r["held_out"] == "yes"):
        predicted = fitted.seconds(row["engine"], layers(row), graphs(row), gpus(row))
        for phase in FIXED:
            logged = _number(row, phase)
            if logged:
                misses.append(Miss(row["id"], phase, logged, predicted[phase]))
        whole, load = _number(row, "whole_start"), _number(row, "weight_load")
        if whole and load is not None:
            misses.append(Miss(row["id"], "whole_start", whole, round(load + sum(predicted.values()), 2)))
    return misses


def main() -> None:
    rows = load_rows()
    fitted = fit(rows)
    print("fitted (least squares over the rows not held out):", fitted)
    print("| start-up | phase | logged s | predicted s | error |")
    print("| --- | --- | --- | --- | --- |")
    for miss in held_out_misses(rows, fitted):
        print(f"| {miss.row} | {miss.phase} | {miss.logged:g} | {miss.predicted:g} | {miss.error_percent:+.0f} % |")


if __name__ == "__main__":
    main()
