"""PromQL building blocks shared by the KEDA triggers, the alerts and the dashboard.

The workload the queries are about (its selectors, pod names, replica series) is the plan's
(plan/scaling.py Workload); there is no pinned Python PromQL parser, so parsing is left to `promtool` in the
tests (tests/promql_lint.py checks metric names against catalog/vllm_metrics.py).
"""

from __future__ import annotations

from collections.abc import Iterable


def number(value: float) -> str:
    """A threshold as PromQL and KEDA write it: 26, 0.85 (never 26.0)."""
    return f"{value:g}"


def quantile(q: float, histogram: str, match: str, by: Iterable[str] = (), window: str = "5m") -> str:
    """histogram_quantile over a histogram's buckets, aggregated so one series per `by` group comes out."""
    groups = ", ".join([*by, "le"])
    return f"histogram_quantile({number(q)}, sum by ({groups}) (rate({histogram}_bucket{match}[{window}])))"


def ratio_of_rates(numerator: str, denominator: str, match: str, by: Iterable[str] = (), window: str = "5m") -> str:
    """sum(rate(a)) / sum(rate(b)) for two counters."""
    group = f" by ({', '.join(by)})" if by else ""
    return f"sum{group} (rate({numerator}{match}[{window}])) / sum{group} (rate({denominator}{match}[{window}]))"
