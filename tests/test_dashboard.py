"""The Grafana dashboard built in code: panels, their queries per vLLM version, and the model_name variable."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from catalog.gpus import NVIDIA
from catalog.vllm_metrics import VERSIONS
from components.render.dashboard import render_dashboard
from config.observability import AutoscalingConfig, MonitoringConfig
from plan.monitoring import alert_limits
from plan.scaling import Capacity, Workload
from tests.plan_parts import monitoring_of

WORKLOAD = Workload(namespace="llm", model_name="llama-8b", deployment_name="llama-server", hpa_name="keda-hpa-llama")
MATCH = '{namespace="llm",model_name=~"$model_name"}'


CAPACITY = Capacity(max_num_seqs=256, kv_cache_tokens=448_224, tokens_per_request=1024, gpu_memory_utilization=0.9)


def dashboard(
    version: str = "0.33.0", workload: Workload = WORKLOAD, router_job: str | None = None, lora: bool = False
) -> dict[str, Any]:
    cfg = MonitoringConfig()
    limits = alert_limits(cfg, AutoscalingConfig(), CAPACITY, None, None, NVIDIA.exporter)
    monitoring = dataclasses.replace(monitoring_of(cfg, limits, version), router_job=router_job, lora=lora)
    return render_dashboard(monitoring, workload)


def panel(title: str, version: str = "0.33.0", workload: Workload = WORKLOAD) -> dict[str, Any]:
    return next(p for p in dashboard(version, workload)["panels"] if p["title"] == title)


def exprs(title: str, version: str = "0.33.0", workload: Workload = WORKLOAD) -> list[str]:
    return [target["expr"] for target in panel(title, version, workload)["targets"]]


def test_panels_cover_latency_throughput_requests_cache_preemptions_gpu_and_replicas() -> None:
    assert [p["title"] for p in dashboard()["panels"]] == [
        "Time to first token",
        "Inter-token latency",
        "End-to-end request latency",
        "Token throughput",
        "Requests running and waiting",
        "KV-cache usage",
        "Prefix-cache hit rate",
        "Preemptions per second",
        "GPU utilization",
        "GPU memory used",
        "Replicas",
    ]


def test_panels_have_unique_ids_and_tile_two_per_row() -> None:
    panels = dashboard()["panels"]
    assert [p["id"] for p in panels] == list(range(1, len(panels) + 1))
    assert [(p["gridPos"]["x"], p["gridPos"]["y"]) for p in panels[:4]] == [(0, 0), (12, 0), (0, 8), (12, 8)]


def test_ttft_panel_shows_p50_p95_p99_in_seconds() -> None:
    latency = panel("Time to first token")
    assert latency["fieldConfig"]["defaults"]["unit"] == "s"
    assert [t["legendFormat"] for t in latency["targets"]] == ["p50 {{model_name}}", "p95 {{model_name}}", "p99 {{model_name}}"]
    assert latency["targets"][2]["expr"] == (
        f"histogram_quantile(0.99, sum by (model_name, le) (rate(vllm:time_to_first_token_seconds_bucket{MATCH}[5m])))"
    )


def test_inter_token_panel_reads_the_versions_histogram() -> None:
    assert all("vllm:inter_token_latency_seconds_bucket" in e for e in exprs("Inter-token latency"))
    assert all("vllm:time_per_output_token_seconds_bucket" in e for e in exprs("Inter-token latency", "0.7.2"))


def test_throughput_panel_rates_the_token_counters() -> None:
    assert exprs("Token throughput") == [
        f"sum by (model_name) (rate(vllm:prompt_tokens_total{MATCH}[5m]))",
        f"sum by (model_name) (rate(vllm:generation_tokens_total{MATCH}[5m]))",
    ]


def test_requests_panel_shows_running_and_waiting_gauges_without_rate() -> None:
    assert exprs("Requests running and waiting") == [
        f"sum by (model_name) (vllm:num_requests_running{MATCH})",
        f"sum by (model_name) (vllm:num_requests_waiting{MATCH})",
    ]


def test_kv_cache_panel_is_a_percent_unit_of_the_fraction() -> None:
    kv = panel("KV-cache usage")
    assert kv["fieldConfig"]["defaults"]["unit"] == "percentunit"
    assert kv["targets"][0]["expr"] == f"max by (pod) (vllm:kv_cache_usage_perc{MATCH})"


def test_prefix_cache_panel_divides_hits_by_queries_on_v1() -> None:
    assert exprs("Prefix-cache hit rate") == [
        f"sum by (model_name) (rate(vllm:prefix_cache_hits_total{MATCH}[5m])) / "
        f"sum by (model_name) (rate(vllm:prefix_cache_queries_total{MATCH}[5m]))"
    ]


def test_prefix_cache_panel_reads_the_v0_gauge_without_its_minus_one() -> None:
    assert exprs("Prefix-cache hit rate", "0.7.2") == [f"avg by (model_name) (vllm:gpu_prefix_cache_hit_rate{MATCH} >= 0)"]


def test_gpu_panels_read_dcgm_by_the_exported_pod_label() -> None:
    dcgm = '{exported_namespace="llm",exported_pod=~"llama-server-[a-z0-9]+-[a-z0-9]+"}'
    assert exprs("GPU utilization") == [f"avg by (exported_pod, gpu) (DCGM_FI_DEV_GPU_UTIL{dcgm})"]
    assert exprs("GPU memory used") == [f"max by (exported_pod, gpu) (DCGM_FI_DEV_FB_USED{dcgm})"]
    assert panel("GPU memory used")["fieldConfig"]["defaults"]["unit"] == "mbytes"  # DCGM reports MiB


def test_replicas_panel_includes_the_autoscaler_maximum() -> None:
    assert exprs("Replicas")[2] == (
        'kube_horizontalpodautoscaler_spec_max_replicas{namespace="llm",horizontalpodautoscaler="keda-hpa-llama"}'
    )


def test_replicas_panel_has_no_autoscaler_line_without_autoscaling() -> None:
    plain = Workload(namespace="llm", model_name="llama-8b", deployment_name="llama-server")
    assert len(exprs("Replicas", workload=plain)) == 2


def test_model_name_variable_lists_vllms_model_name_label_and_defaults_to_the_served_model() -> None:
    variable = dashboard()["templating"]["list"][1]
    assert variable["name"] == "model_name"
    assert variable["query"]["query"] == 'label_values(vllm:num_requests_running{namespace="llm"}, model_name)'
    assert variable["current"] == {"text": "llama-8b", "value": "llama-8b"}


def test_panels_use_the_datasource_variable() -> None:
    assert dashboard()["templating"]["list"][0] == {
        "name": "datasource",
        "label": "Data source",
        "type": "datasource",
        "query": "prometheus",
    }
    assert all(p["datasource"] == {"type": "prometheus", "uid": "${datasource}"} for p in dashboard()["panels"])


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_every_panel_has_at_least_one_query(version: str) -> None:
    assert all(p["targets"] for p in dashboard(version)["panels"])


def test_dashboard_uid_fits_grafanas_forty_characters() -> None:
    long = Workload(namespace="n" * 30, model_name="m", deployment_name="d" * 30)
    assert len(dashboard(workload=long)["uid"]) == 40


def test_a_routed_stack_shows_the_router_s_requests_errors_servers_health_and_prefix_decisions() -> None:
    titles = [p["title"] for p in dashboard(router_job="llama-router")["panels"]][-4:]
    assert titles == [
        "Router requests and errors per second",
        "Router requests per server",
        "Router server health",
        "Router prefix-routing decisions",
    ]


def test_the_router_panels_read_the_router_s_job_in_the_namespace() -> None:
    board = dashboard(router_job="llama-router")
    errors = next(p for p in board["panels"] if p["title"] == "Router requests and errors per second")
    assert 'vllm_router_request_errors_total{job="llama-router",namespace="llm"}' in errors["targets"][1]["expr"]


def test_a_stack_without_routing_or_adapters_has_no_router_or_lora_panel() -> None:
    titles = [p["title"] for p in dashboard()["panels"]]
    assert not [t for t in titles if t.startswith("Router") or "LoRA" in t]


def test_a_stack_with_adapters_shows_the_servers_running_each_adapter_set() -> None:
    board = dashboard(lora=True)
    lora = next(p for p in board["panels"] if p["title"] == "Servers running each LoRA adapter set")
    assert lora["targets"][0]["legendFormat"] == "running {{running_lora_adapters}}"
    assert 'vllm:lora_requests_info{namespace="llm"}' in lora["targets"][0]["expr"]
