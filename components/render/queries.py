"""Every PromQL expression a stack's rendered objects carry, read back out of them: the KEDA triggers, the alert
rules and the dashboard's panels and variables. Pure.

Read from the rendered objects rather than from the functions that build them, so what is checked is what is
applied: tests/test_promql_versions.py lints these against the version's metric table, and the upgrade report
(cli/upgrade.py) checks their series against the new release.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from components.render.dashboard import SIDECAR_LABEL
from components.render.promql import metric_names

KEDA, ALERTS, DASHBOARD = "KEDA", "alerts", "dashboard"
LABEL_VALUES = re.compile(r"^label_values\((.*), \w+\)$")  # Grafana's variable query wraps a selector


def emitted_queries(objects: Iterable[dict[str, Any]]) -> dict[str, list[str]]:
    """Per consumer (KEDA, alerts, dashboard): the expressions, in the order the objects hold them."""
    found: dict[str, list[str]] = {KEDA: [], ALERTS: [], DASHBOARD: []}
    for obj in objects:
        kind = obj.get("kind")
        if kind == "ScaledObject":
            found[KEDA] += [t["metadata"]["query"] for t in obj["spec"]["triggers"] if t.get("type") == "prometheus"]
        elif kind == "PrometheusRule":
            found[ALERTS] += [rule["expr"] for group in obj["spec"]["groups"] for rule in group["rules"]]
        elif kind == "ConfigMap" and SIDECAR_LABEL.items() <= obj["metadata"].get("labels", {}).items():
            found[DASHBOARD] += [q for board in obj["data"].values() for q in dashboard_queries(json.loads(board))]
    return found


def dashboard_queries(board: dict[str, Any]) -> list[str]:
    """The panels' target expressions, then the selectors of the query variables."""
    variables = [v["query"]["query"] for v in board.get("templating", {}).get("list", []) if v["type"] == "query"]
    return [t["expr"] for p in board["panels"] for t in p.get("targets", [])] + [LABEL_VALUES.sub(r"\1", v) for v in variables]


def used_metrics(objects: Iterable[dict[str, Any]]) -> dict[str, tuple[str, ...]]:
    """Each series name the rendered queries select -> the consumers that select it, in order of appearance."""
    used: dict[str, list[str]] = {}
    for consumer, queries in emitted_queries(objects).items():
        for name in (name for query in queries for name in metric_names(query)):
            consumers = used.setdefault(name, [])
            if consumer not in consumers:
                consumers.append(consumer)
    return {name: tuple(consumers) for name, consumers in used.items()}
