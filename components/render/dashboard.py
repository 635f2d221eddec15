"""The Grafana dashboard for one vLLM deployment, built in code, and its sidecar ConfigMap.

kube-prometheus-stack's Grafana sidecar loads ConfigMaps labelled `grafana_dashboard: "1"` from every
namespace (chart values grafana.sidecar.dashboards, docs/sources.md §E). Panels read the configured version's metric
names (catalog/vllm_metrics.py); the `model_name` variable filters vLLM's series.
"""

from __future__ import annotations

import json
from typing import Any

from catalog import keda_http
from catalog.gpus import MetricsExporter
from catalog.vllm_metrics import VersionMetrics
from components.render.promql import quantile, ratio_of_rates
from config.observability import MonitoringConfig
from plan.monitoring import MonitoringPlan
from plan.scaling import Workload, quote, selector
from plan.zero import ZeroPlan

SIDECAR_LABEL = {"grafana_dashboard": "1"}
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
QUANTILES = (0.5, 0.95, 0.99)
WIDTH, HEIGHT = 12, 8  # two panels per row on Grafana's 24-column grid

Target = tuple[str, str]  # (PromQL, legend)


def model_selector(workload: Workload) -> str:
    """vLLM series of this namespace, for the model picked in the dashboard variable."""
    return "{" + f'namespace={quote(workload.namespace)},model_name=~"$model_name"' + "}"


def latency_targets(histogram: str, match: str) -> list[Target]:
    return [(quantile(q, histogram, match, ["model_name"]), f"p{round(q * 100)} {{{{model_name}}}}") for q in QUANTILES]


def prefix_cache_targets(metrics: VersionMetrics, match: str) -> list[Target]:
    """V1: hits / queries counters (tokens). V0: a 0..1 gauge that reads -1 when prefix caching is off."""
    if metrics.prefix_cache_hits and metrics.prefix_cache_queries:
        ratio = ratio_of_rates(metrics.prefix_cache_hits, metrics.prefix_cache_queries, match, ["model_name"])
        return [(ratio, "hit rate {{model_name}}")]
    if metrics.prefix_cache_hit_rate_gauge:
        return [(f"avg by (model_name) ({metrics.prefix_cache_hit_rate_gauge}{match} >= 0)", "hit rate {{model_name}}")]
    return []


def engine_panels(metrics: VersionMetrics, match: str) -> list[tuple[str, str, list[Target]]]:
    """(title, Grafana unit, targets) for the panels fed by vLLM itself."""
    by = "sum by (model_name)"
    return [
        ("Time to first token", "s", latency_targets("vllm:time_to_first_token_seconds", match)),
        ("Inter-token latency", "s", latency_targets(metrics.inter_token_latency, match)),
        ("End-to-end request latency", "s", latency_targets("vllm:e2e_request_latency_seconds", match)),
        (
            "Token throughput",
            "suffix: tok/s",
            [
                (f"{by} (rate(vllm:prompt_tokens_total{match}[5m]))", "prompt {{model_name}}"),
                (f"{by} (rate(vllm:generation_tokens_total{match}[5m]))", "generation {{model_name}}"),
            ],
        ),
        (
            "Requests running and waiting",
            "short",
            [
                (f"{by} (vllm:num_requests_running{match})", "running {{model_name}}"),
                (f"{by} (vllm:num_requests_waiting{match})", "waiting {{model_name}}"),
            ],
        ),
        ("KV-cache usage", "percentunit", [(f"max by (pod) ({metrics.kv_cache_usage}{match})", "{{pod}}")]),
        ("Prefix-cache hit rate", "percentunit", prefix_cache_targets(metrics, match)),
        (
            "Preemptions per second",
            "short",
            [(f"{by} (rate(vllm:num_preemptions_total{match}[5m]))", "preemptions {{model_name}}")],
        ),
    ]


def cluster_panels(cfg: MonitoringConfig, workload: Workload, exporter: MetricsExporter) -> list[tuple[str, str, list[Target]]]:
    """GPU panels (DCGM exporter) and replica counts (kube-state-metrics)."""
    gpu = workload.pods(cfg.dcgm_namespace_label, cfg.dcgm_pod_label)
    pod, gpu_by = cfg.dcgm_pod_label, f"{cfg.dcgm_pod_label}, gpu"
    wanted, available, _ = workload.replica_series()
    replicas = [(wanted, "wanted"), (available, "available")]
    if workload.hpa_name:
        hpa = selector({"namespace": workload.namespace, "horizontalpodautoscaler": workload.hpa_name})
        replicas.append((f"kube_horizontalpodautoscaler_spec_max_replicas{hpa}", "autoscaler max"))
    return [
        (
            "GPU utilization",
            "percent",
            [(f"avg by ({gpu_by}) ({exporter.utilization}{gpu})", f"{{{{{pod}}}}} GPU {{{{gpu}}}}")],
        ),
        ("GPU memory used", "mbytes", [(f"max by ({gpu_by}) ({exporter.memory_used}{gpu})", f"{{{{{pod}}}}} GPU {{{{gpu}}}}")]),
        ("Replicas", "short", replicas),
    ]


def panel(index: int, title: str, unit: str, targets: list[Target]) -> dict[str, Any]:
    return {
        "id": index + 1,
        "type": "timeseries",
        "title": title,
        "datasource": DATASOURCE,
        "gridPos": {"h": HEIGHT, "w": WIDTH, "x": (index % 2) * WIDTH, "y": (index // 2) * HEIGHT},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": [
            {"refId": chr(ord("A") + n), "datasource": DATASOURCE, "expr": expr, "legendFormat": legend}
            for n, (expr, legend) in enumerate(targets)
        ],
    }


def variables(workload: Workload) -> list[dict[str, Any]]:
    """The Prometheus data source, and model_name from vLLM's own label (the served model name)."""
    models = f"label_values(vllm:num_requests_running{selector({'namespace': workload.namespace})}, model_name)"
    current = {"text": workload.model_name, "value": workload.model_name}
    return [
        {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus"},
        {
            "name": "model_name",
            "label": "Model",
            "type": "query",
            "datasource": DATASOURCE,
            "definition": models,
            "query": {"query": models, "refId": "model_name"},
            "current": current,
            "refresh": 2,
            "includeAll": False,
            "multi": False,
        },
    ]


def interceptor_panels(zero: ZeroPlan | None) -> list[tuple[str, str, list[Target]]]:
    """The KEDA HTTP add-on's interceptor for this route: requests it holds or forwards, and those it gave up on."""
    if zero is None:
        return []
    match = selector({"route_name": zero.name, "route_namespace": zero.namespace})
    codes = "|".join(keda_http.GAVE_UP_CODES)
    gave_up = match[:-1] + f',code=~"{codes}"}}'
    return [
        (
            "Requests at the interceptor (held while at zero)",
            "short",
            [
                (f"sum({keda_http.CONCURRENCY}{match})", "in flight"),
                (f"sum(rate({keda_http.REQUEST_COUNT}{gave_up}[5m]))", "gave up (502/504) per s"),
            ],
        )
    ]


def lora_panels(workload: Workload) -> list[tuple[str, str, list[Target]]]:
    """vLLM labels its request series with the base model's name only; which adapters a server is running is
    vllm:lora_requests_info, one series per set of running adapters, its value the time it was last set
    (vllm-project/vllm vllm/v1/metrics/loggers.py@a6f0308cfe806b7731ad4979c9bea6e470c35efd, gauge_lora_info)."""
    info = f"vllm:lora_requests_info{selector({'namespace': workload.namespace})}"
    recent = f"count by (running_lora_adapters) (time() - max by (pod, running_lora_adapters) ({info}) < 60)"
    waiting = f"count by (waiting_lora_adapters) (time() - max by (pod, waiting_lora_adapters) ({info}) < 60)"
    return [
        (
            "Servers running each LoRA adapter set",
            "short",
            [(recent, "running {{running_lora_adapters}}"), (waiting, "waiting {{waiting_lora_adapters}}")],
        )
    ]


def router_panels(job: str, namespace: str) -> list[tuple[str, str, list[Target]]]:
    """The router's own series (vllm_router_*, read from the 0.1.17 binary; docs/sources.md §S9)."""
    match = selector({"job": job, "namespace": namespace})
    return [
        (
            "Router requests and errors per second",
            "reqps",
            [
                (f"sum(rate(vllm_router_requests_total{match}[5m]))", "requests"),
                (f"sum(rate(vllm_router_request_errors_total{match}[5m]))", "errors"),
                (f"sum(rate(vllm_router_retries_total{match}[5m]))", "retries"),
            ],
        ),
        (
            "Router requests per server",
            "reqps",
            [(f"sum by (worker) (rate(vllm_router_processed_requests_total{match}[5m]))", "{{worker}}")],
        ),
        ("Router server health", "short", [(f"min by (worker) (vllm_router_worker_health{match})", "{{worker}}")]),
        (
            "Router prefix-routing decisions",
            "short",
            [(f"sum by (outcome) (rate(vllm_router_prefix_routing_decisions_total{match}[5m]))", "{{outcome}}")],
        ),
    ]


def render_dashboard(monitoring: MonitoringPlan, workload: Workload, zero: ZeroPlan | None = None) -> dict[str, Any]:
    cfg, metrics, exporter = monitoring.config, monitoring.metrics, monitoring.limits.gpu_exporter
    match = model_selector(workload)
    panels = engine_panels(metrics, match) + cluster_panels(cfg, workload, exporter) + interceptor_panels(zero)
    if monitoring.lora:
        panels += lora_panels(workload)
    if monitoring.router_job:
        panels += router_panels(monitoring.router_job, workload.namespace)
    return {
        "uid": f"vllm-{workload.namespace}-{workload.deployment_name}"[:40],  # Grafana uids: at most 40 chars
        "title": f"vLLM {workload.deployment_name} ({workload.namespace})",
        "tags": ["vllm", f"vllm-{metrics.version}"],
        "schemaVersion": 39,
        "editable": True,
        "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {"list": variables(workload)},
        "panels": [panel(index, *spec) for index, spec in enumerate(panels)],
    }


def dashboard_file_name(deployment_name: str) -> str:
    return f"{deployment_name}-vllm.json"


def render_dashboard_data(dashboard: dict[str, Any], deployment_name: str) -> dict[str, str]:
    """ConfigMap data: one JSON file the sidecar writes into Grafana's provisioning folder."""
    return {dashboard_file_name(deployment_name): json.dumps(dashboard, indent=2, sort_keys=True)}
