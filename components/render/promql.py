"""PromQL building blocks shared by the KEDA triggers, the alerts and the dashboard, and a small linter.

There is no pinned Python PromQL parser, so parsing is left to `promtool` in the tests; the linter here
only extracts metric names, to check them against the vLLM version's table (catalog/vllm_metrics.py) and
to catch rate()/irate()/increase() over a gauge (docs/sources.md §B.4: never rate a gauge).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from catalog.vllm_metrics import MetricType, VersionMetrics


@dataclass(frozen=True)
class Workload:
    """The deployment the queries are about. Names are the Kubernetes names, as Prometheus labels carry them."""

    namespace: str
    model_name: str  # vLLM's model_name label: the first --served-model-name
    deployment_name: str  # the Deployment, or the LeaderWorkerSet when kind says so
    hpa_name: str | None = None  # keda-hpa-<ScaledObject name> when autoscaling is on
    kind: str = "Deployment"  # StatefulSet (per-replica volumes, config/delivery.py), LeaderWorkerSet (engine.nnodes > 1)

    @property
    def scale_target(self) -> dict[str, str]:
        api = "leaderworkerset.x-k8s.io/v1" if self.kind == "LeaderWorkerSet" else "apps/v1"
        return {"apiVersion": api, "kind": self.kind, "name": self.deployment_name}

    def replica_series(self) -> tuple[str, str, str]:
        """(wanted, available, name label) from kube-state-metrics (kubernetes/kube-state-metrics
        docs/metrics/workload/{deployment,statefulset}-metrics.md). A LeaderWorkerSet's leader StatefulSet carries its
        name and counts groups; a leader is ready only when its whole group joined (docs/multinode.md)."""
        if self.kind in ("StatefulSet", "LeaderWorkerSet"):
            match = selector({"namespace": self.namespace, "statefulset": self.deployment_name})
            return (f"kube_statefulset_replicas{match}", f"kube_statefulset_status_replicas_ready{match}", "statefulset")
        match = selector({"namespace": self.namespace, "deployment": self.deployment_name})
        return f"kube_deployment_spec_replicas{match}", f"kube_deployment_status_replicas_available{match}", "deployment"

    @property
    def vllm(self) -> str:
        """Selector for vLLM's own series; `namespace` comes from the scrape, `model_name` from vLLM."""
        return selector({"namespace": self.namespace, "model_name": self.model_name})

    @property
    def pod_regex(self) -> str:
        """Pods of the Deployment: <deployment>-<replicaset hash>-<suffix>; of a StatefulSet: <name>-<ordinal>; of a
        LeaderWorkerSet: <lws>-<group> and <lws>-<group>-<worker> (leaderworkerset_types.go@024af084:100-110).
        PromQL anchors regexes."""
        suffixes = {"StatefulSet": "-[0-9]+", "LeaderWorkerSet": "-[0-9]+(-[0-9]+)?"}
        return self.deployment_name.replace(".", r"\.") + suffixes.get(self.kind, "-[a-z0-9]+-[a-z0-9]+")

    def pods(self, namespace_label: str = "namespace", pod_label: str = "pod", **extra: str) -> str:
        """Selector for exporter series about this Deployment's pods (kube-state-metrics, DCGM, HTTP)."""
        matchers = [f"{namespace_label}={quote(self.namespace)}", f"{pod_label}=~{quote(self.pod_regex)}"]
        matchers += [f"{key}={quote(value)}" for key, value in extra.items()]
        return "{" + ",".join(matchers) + "}"


def quote(value: str) -> str:
    """A PromQL double-quoted string literal."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def selector(labels: Mapping[str, str]) -> str:
    return "{" + ",".join(f"{key}={quote(value)}" for key, value in labels.items()) + "}"


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


# --- the linter -----------------------------------------------------------------------------------------

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
