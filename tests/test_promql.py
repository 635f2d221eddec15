"""The PromQL helpers and the metric-name linter, and the per-version metric tables they check against."""

from __future__ import annotations

import re

import pytest

from catalog.vllm_metrics import VERSIONS, MetricType, metrics_for
from components.render.promql import number, quantile
from plan.scaling import Workload, quote, selector
from tests.promql_lint import lint, metric_names

V1 = VERSIONS["0.33.0"]
V0 = VERSIONS["0.7.2"]
WORKLOAD = Workload(namespace="llm", model_name="llama-8b", deployment_name="llama-server")


def test_metric_names_skip_functions_labels_and_ranges() -> None:
    expr = (
        "histogram_quantile(0.99, sum by (le, pod) (rate(vllm:time_to_first_token_seconds_bucket"
        '{namespace="llm",model_name=~"$model_name"}[5m]))) > 2'
    )
    assert metric_names(expr) == ["vllm:time_to_first_token_seconds_bucket"]


def test_metric_names_skip_keywords_and_label_lists_of_vector_matching() -> None:
    expr = (
        "kube_deployment_spec_replicas > on (namespace, deployment) group_left "
        "kube_deployment_status_replicas_available and bool vector(1) offset 5m"
    )
    assert metric_names(expr) == ["kube_deployment_spec_replicas", "kube_deployment_status_replicas_available"]


def test_metric_names_ignore_names_inside_string_literals() -> None:
    assert metric_names('absent(vllm:num_requests_running{pod="vllm:num_requests_waiting"})') == ["vllm:num_requests_running"]


def test_metric_names_do_not_take_exponents_for_names() -> None:
    assert metric_names("vllm:num_requests_waiting > 1e3") == ["vllm:num_requests_waiting"]


def test_lint_rejects_the_v0_cache_gauge_on_vllm_0_33() -> None:
    assert lint("avg(vllm:gpu_cache_usage_perc)", V1) == [
        "vllm:gpu_cache_usage_perc is not a series vLLM 0.33.0 or the known exporters expose"
    ]


def test_lint_rejects_the_v1_cache_gauge_on_vllm_0_7_2() -> None:
    assert lint("avg(vllm:kv_cache_usage_perc)", V0) == [
        "vllm:kv_cache_usage_perc is not a series vLLM 0.7.2 or the known exporters expose"
    ]


def test_lint_rejects_rate_over_a_gauge() -> None:
    assert lint("sum(rate(vllm:num_requests_waiting[5m]))", V1) == ["rate() over the gauge vllm:num_requests_waiting"]


def test_lint_rejects_increase_over_a_gauge_from_an_exporter() -> None:
    assert lint("increase(DCGM_FI_DEV_FB_USED[5m])", V1) == ["increase() over the gauge DCGM_FI_DEV_FB_USED"]


def test_lint_rejects_a_histogram_by_its_bare_name() -> None:
    assert lint("rate(vllm:e2e_request_latency_seconds[5m])", V1) == [
        "vllm:e2e_request_latency_seconds is not a series vLLM 0.33.0 or the known exporters expose"
    ]


def test_lint_accepts_rate_over_a_counter_and_histogram_buckets() -> None:
    expr = "sum(rate(vllm:generation_tokens_total[5m])) + sum(rate(vllm:e2e_request_latency_seconds_bucket[5m]))"
    assert lint(expr, V1) == []


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_every_renamed_signal_is_in_its_versions_table(version: str) -> None:
    metrics = VERSIONS[version]
    named = [
        metrics.kv_cache_usage,
        metrics.prefix_cache_hit_rate_gauge,
        metrics.prefix_cache_hits,
        metrics.prefix_cache_queries,
        metrics.http_requests,
    ]
    assert all(name in metrics.metrics for name in named if name)
    assert metrics.metrics[metrics.inter_token_latency] is MetricType.HISTOGRAM


def test_kv_cache_usage_is_a_gauge_in_both_versions() -> None:
    assert V0.metrics[V0.kv_cache_usage] is MetricType.GAUGE
    assert V1.metrics[V1.kv_cache_usage] is MetricType.GAUGE


def test_version_0_33_has_no_metric_removed_before_it() -> None:
    removed = {
        "vllm:gpu_cache_usage_perc",
        "vllm:gpu_prefix_cache_hit_rate",
        "vllm:time_per_output_token_seconds",
        "vllm:num_requests_swapped",
        "vllm:cpu_cache_usage_perc",
        "vllm:avg_generation_throughput_toks_per_s",
    }
    assert removed.isdisjoint(V1.metrics)


def test_version_0_7_2_has_no_throughput_gauges() -> None:
    # Removed by vLLM PR #12383 before 0.7.2 (vllm issue #13218).
    assert "vllm:avg_generation_throughput_toks_per_s" not in V0.metrics
    assert "vllm:avg_prompt_throughput_toks_per_s" not in V0.metrics


def test_metrics_for_an_unknown_version_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match=re.escape("no metric table for vLLM '0.5.0'; have 0.6.0, 0.6.1, ")):
        metrics_for("0.5.0")


def test_quote_escapes_quotes_and_backslashes() -> None:
    assert quote('a"b\\c') == '"a\\"b\\\\c"'


def test_selector_lists_labels_in_order() -> None:
    assert selector({"namespace": "llm", "model_name": "m"}) == '{namespace="llm",model_name="m"}'


def test_numbers_render_without_a_trailing_zero() -> None:
    assert [number(26.0), number(0.85), number(2)] == ["26", "0.85", "2"]


def test_quantile_aggregates_by_le_and_the_given_labels() -> None:
    assert quantile(0.99, "vllm:x_seconds", '{a="b"}', ["model_name"]) == (
        'histogram_quantile(0.99, sum by (model_name, le) (rate(vllm:x_seconds_bucket{a="b"}[5m])))'
    )


def test_workload_selects_vllm_series_by_namespace_and_model_name() -> None:
    assert WORKLOAD.vllm == '{namespace="llm",model_name="llama-8b"}'


def test_workload_selects_the_deployments_pods_by_an_anchored_name_pattern() -> None:
    assert WORKLOAD.pods() == '{namespace="llm",pod=~"llama-server-[a-z0-9]+-[a-z0-9]+"}'


def test_workload_escapes_dots_in_the_pod_pattern() -> None:
    dotted = Workload(namespace="llm", model_name="m", deployment_name="a.b")
    assert dotted.pods(reason="OOMKilled") == '{namespace="llm",pod=~"a\\\\.b-[a-z0-9]+-[a-z0-9]+",reason="OOMKilled"}'
