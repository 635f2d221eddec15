"""Fit the fixed start-up phases on public GPU start-ups and print how well they predict the held-out ones.

Usage: venv/bin/python scripts/fit_startup_phases.py
Reads tests/data/startup-phases.csv (one row per public start-up, its sources); a phase's fitted seconds are the
mean over the rows not held out that log it (catalog/startup_phases.py holds the result). Each held-out row is
then predicted phase by phase, and its whole start as the fitted fixed phases plus its logged weight load.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "startup-phases.csv"
FIXED = ("process_start", "compile", "cuda_graphs", "kv_cache_init", "api_ready")


@dataclass(frozen=True)
class Miss:
    row: str
    phase: str  # a FIXED phase or "whole_start"
    logged: float
    predicted: float

    @property
    def error_percent(self) -> float:
        return (self.predicted - self.logged) / self.logged * 100


def load_rows(path: Path = DATA) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _number(row: dict[str, str], key: str) -> float | None:
    return float(row[key]) if row[key] else None


def fit(rows: list[dict[str, str]]) -> dict[str, float]:
    fitted = {}
    for phase in FIXED:
        values = [v for row in rows if row["held_out"] == "no" and (v := _number(row, phase)) is not None]
        fitted[phase] = round(sum(values) / len(values), 2)
    return fitted


def held_out_misses(rows: list[dict[str, str]], fitted: dict[str, float]) -> list[Miss]:
    misses = []
    for row in (r for r in rows if r["held_out"] == "yes"):
        for phase in FIXED:
            logged = _number(row, phase)
            if logged:
                misses.append(Miss(row["id"], phase, logged, fitted[phase]))
        whole, load = _number(row, "whole_start"), _number(row, "weight_load")
        if whole and load is not None:
            misses.append(Miss(row["id"], "whole_start", whole, round(load + sum(fitted.values()), 2)))
    return misses


def main() -> None:
    rows = load_rows()
    fitted = fit(rows)
    print("fitted (mean of the rows not held out):", fitted)
    print("| start-up | phase | logged s | predicted s | error |")
    print("| --- | --- | --- | --- | --- |")
    for miss in held_out_misses(rows, fitted):
        print(f"| {miss.row} | {miss.phase} | {miss.logged:g} | {miss.predicted:g} | {miss.error_percent:+.0f} % |")


if __name__ == "__main__":
    main()
