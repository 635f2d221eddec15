"""The KEDA trigger queries evaluated by promtool on synthetic series: each returns exactly one sample
(KEDA errors on more than one), with the value the HPA arithmetic expects, and nothing when vLLM is gone,
so that ignoreNullValues "false" hands over to the fallback instead of scaling down (docs/sources.md §D.2, §D.3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from catalog.vllm_metrics import VERSIONS
from components.render.keda import trigger_queries
from plan.scaling import Workload
from tests.promtool import run_promtool, write_yaml

WORKLOAD = Workload(namespace="llm", model_name="llama-8b", deployment_name="llama-server")
PODS = ("llama-server-7d9f8b6c5-x2x4k", "llama-server-7d9f8b6c5-q8w7e")
Series = list[tuple[str, str]]


def vllm(metric: str, pod: str, model: str = "llama-8b", engine: str = "0") -> str:
    """A vLLM series as the ServiceMonitor scrape labels it, with V1's engine label."""
    return f'{metric}{{namespace="llm",model_name="{model}",engine="{engine}",pod="{pod}"}}'


def evaluate(tmp_path: Path, series: Series, query: str, samples: list[float]) -> None:
    """Assert that `query`, at 10m over one sample a minute of `series`, gives exactly these label-less samples."""
    write_yaml(tmp_path / "empty.yaml", {"groups": []})
    test: dict[str, Any] = {
        "rule_files": ["empty.yaml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [{"series": name, "values": values} for name, values in series],
                "promql_expr_test": [
                    {"expr": query, "eval_time": "10m", "exp_samples": [{"labels": "{}", "value": value} for value in samples]}
                ],
            }
        ],
    }
    result = run_promtool("test", "rules", write_yaml(tmp_path / "test.yaml", test))
    assert result.returncode == 0, result.stdout + result.stderr


def query(name: str, version: str = "0.33.0") -> str:
    return trigger_queries(VERSIONS[version], WORKLOAD)[name][0]


def test_queue_query_is_one_sum_over_pods_and_ignores_other_models(tmp_path: Path) -> None:
    series = [
        (vllm("vllm:num_requests_waiting", PODS[0]), "30x15"),
        (vllm("vllm:num_requests_waiting", PODS[1]), "40x15"),
        (vllm("vllm:num_requests_waiting", PODS[0], model="other"), "500x15"),
    ]
    evaluate(tmp_path, series, query("queue"), [70])


def test_running_query_is_one_sum_over_pods(tmp_path: Path) -> None:
    series = [(vllm("vllm:num_requests_running", PODS[0]), "100x15"), (vllm("vllm:num_requests_running", PODS[1]), "60x15")]
    evaluate(tmp_path, series, query("running"), [160])


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_kv_cache_query_is_one_sum_of_pod_fractions_in_thousandths(tmp_path: Path, version: str) -> None:
    # AverageValue 850: ceil(1400 / 850) = 2 replicas, as Value over the 0.7 average would give ceil(2 x 0.7 / 0.85).
    metric = VERSIONS[version].kv_cache_usage
    series = [(vllm(metric, PODS[0]), "0.9x15"), (vllm(metric, PODS[1]), "0.5x15")]
    evaluate(tmp_path, series, query("kv_cache", version), [1400])


def test_kv_cache_query_counts_a_pod_with_two_engines_once(tmp_path: Path) -> None:
    metric = VERSIONS["0.33.0"].kv_cache_usage
    series = [
        (vllm(metric, PODS[0], engine="0"), "0.8x15"),
        (vllm(metric, PODS[0], engine="1"), "1x15"),
        (vllm(metric, PODS[1]), "0.5x15"),
    ]
    evaluate(tmp_path, series, query("kv_cache"), [1400])


@pytest.mark.parametrize("name", ["queue", "running", "kv_cache"])
def test_gauge_queries_return_nothing_when_vllm_is_not_scraped(tmp_path: Path, name: str) -> None:
    series = [('kube_deployment_spec_replicas{namespace="llm",deployment="llama-server"}', "1x15")]
    evaluate(tmp_path, series, query(name), [])


def ttft_buckets(per_minute_in_5s_bucket: int) -> Series:
    """Observations all landing between 2.5 s and 5 s, at the given rate, on one pod."""
    bounds = ("0.5", "2.5", "5", "+Inf")
    return [
        (
            vllm("vllm:time_to_first_token_seconds_bucket", PODS[0]).replace("}", f',le="{le}"}}'),
            f"0+{per_minute_in_5s_bucket if le in ('5', '+Inf') else 0}x15",
        )
        for le in bounds
    ]


def test_latency_query_is_one_p95_over_pods_in_milliseconds(tmp_path: Path) -> None:
    series = [*ttft_buckets(10), (vllm("vllm:num_requests_running", PODS[0]), "4x15")]
    evaluate(tmp_path, series, query("latency"), [4875])


def test_latency_query_multiplies_the_p95_by_the_pods_reporting(tmp_path: Path) -> None:
    # AverageValue 2000 ms: ceil(9750 / 2000) = 5 replicas, as Value over the 4.875 s p95 would give ceil(2 x 4.875 / 2).
    series = [
        *ttft_buckets(10),
        (vllm("vllm:num_requests_running", PODS[0]), "4x15"),
        (vllm("vllm:num_requests_running", PODS[1]), "0x15"),
    ]
    evaluate(tmp_path, series, query("latency"), [9750])


def test_latency_query_reads_zero_for_an_idle_server_that_still_reports(tmp_path: Path) -> None:
    series = [*ttft_buckets(0), (vllm("vllm:num_requests_running", PODS[0]), "0x15")]
    evaluate(tmp_path, series, query("latency"), [0])


def test_latency_query_returns_nothing_when_vllm_is_not_scraped(tmp_path: Path) -> None:
    series = [('kube_deployment_spec_replicas{namespace="llm",deployment="llama-server"}', "1x15")]
    evaluate(tmp_path, series, query("latency"), [])
