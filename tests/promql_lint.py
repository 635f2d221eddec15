"""A small PromQL linter for the tests: the metric names an expression selects, checked against the vLLM
version's table (catalog/vllm_metrics.py), and rate()/irate()/increase() over a gauge (docs/sources.md §B.4:
never rate a gauge). No pinned Python PromQL parser exists, so parsing proper is promtool's."""

from __future__ import annotations

import re

from catalog.vllm_metrics import MetricType, VersionMetrics

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_MATCHERS = re.compile(r"\{[^}]*\}")
_RANGES = re.compile(r"\[[^\]]*\]")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_IDENTIFIER = re.compile(r"(?<![\w:.])([A-Za-z_:][\w:]*)(?![\w:])(\s*\()?")
_COUNTER_FUNCTIONS = re.compile(r"\b(rate|irate|increase)\s*\(\s*([A-Za-z_:][\w:]*)")
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


def _strip(expr: str) -> str:
    """The expression without string literals, label matchers, ranges and grouping label lists."""
    text = _STRINGS.sub('""', expr)
    text = _MATCHERS.sub("", text)
    text = _RANGES.sub("", text)
    return _GROUPING.sub("", text)


def metric_names(expr: str) -> list[str]:
    """Metric names a PromQL expression selects, in order of appearance (functions and keywords left out)."""
    names: list[str] = []
    for match in _IDENTIFIER.finditer(_strip(expr)):
        name, call = match.group(1), match.group(2)
        if call or name in _KEYWORDS or name in names:
            continue
        names.append(name)
    return names


def lint(expr: str, metrics: VersionMetrics) -> list[str]:
    """Problems with an expression for this vLLM version: unknown series, and counter functions over gauges."""
    problems = [
        f"{name} is not a series vLLM {metrics.version} or the known exporters expose"
        for name in metric_names(expr)
        if metrics.series_type(name) is None
    ]
    for match in _COUNTER_FUNCTIONS.finditer(_strip(expr)):
        function, name = match.groups()
        if metrics.series_type(name) is MetricType.GAUGE:
            problems.append(f"{function}() over the gauge {name}")
    return problems
