"""A small PromQL linter for the tests: the metric names an expression selects, checked against the vLLM
version's table (catalog/vllm_metrics.py), and rate()/irate()/increase() over a gauge (docs/sources.md §B.4:
never rate a gauge). No pinned Python PromQL parser exists, so parsing proper is promtool's."""

from __future__ import annotations

import re

from catalog.vllm_metrics import MetricType, VersionMetrics
from components.render.promql import metric_names, strip_expression

_COUNTER_FUNCTIONS = re.compile(r"\b(rate|irate|increase)\s*\(\s*([A-Za-z_:][\w:]*)")


def lint(expr: str, metrics: VersionMetrics) -> list[str]:
    """Problems with an expression for this vLLM version: unknown series, and counter functions over gauges."""
    problems = [
        f"{name} is not a series vLLM {metrics.version} or the known exporters expose"
        for name in metric_names(expr)
        if metrics.series_type(name) is None
    ]
    for match in _COUNTER_FUNCTIONS.finditer(strip_expression(expr)):
        function, name = match.groups()
        if metrics.series_type(name) is MetricType.GAUGE:
            problems.append(f"{function}() over the gauge {name}")
    return problems
