"""PromQL building blocks shared by the KEDA triggers, the alerts and the dashboard.

The workload the queries are about (its selectors, pod names, replica series) is the plan's
(plan/scaling.py Workload); there is no pinned Python PromQL parser, so parsing is left to `promtool` in the
tests. `metric_names` reads the series an expression selects back out of it: the tests lint them against
catalog/vllm_metrics.py (tests/promql_lint.py), the upgrade report checks them against the new release.
"""

from __future__ import annotations

import re
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


_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_MATCHERS = re.compile(r"\{[^}]*\}")
_RANGES = re.compile(r"\[[^\]]*\]")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_IDENTIFIER = re.compile(r"(?<![\w:.])([A-Za-z_:][\w:]*)(?![\w:])(\s*\()?")
_KEYWORDS = frozenset(
    {
        "and",
        "or",
        "unless",
        "by",
        "without",
        "on",
        "ignoring",
        "group_left",
        "group_right",
        "bool",
        "offset",
        "inf",
        "nan",
        "Inf",
        "NaN",
    }
)


def strip_expression(expr: str) -> str:
    """The expression without string literals, label matchers, ranges and grouping label lists."""
    text = _STRINGS.sub('""', expr)
    text = _MATCHERS.sub("", text)
    text = _RANGES.sub("", text)
    return _GROUPING.sub("", text)


def metric_names(expr: str) -> list[str]:
    """Metric names a PromQL expression selects, in order of appearance (functions and keywords left out)."""
    names: list[str] = []
    for match in _IDENTIFIER.finditer(strip_expression(expr)):
        name, call = match.group(1), match.group(2)
        if call or name in _KEYWORDS or name in names:
            continue
        names.append(name)
    return names
