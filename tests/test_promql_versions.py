"""Every PromQL expression the program emits (KEDA triggers, alerts, dashboard), taken from what the
components register under mocks: it parses (promtool), and uses only series the configured vLLM version
or the known exporters expose, with no rate() over a gauge."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.gpus import NVIDIA
from catalog.vllm_metrics import VERSIONS
from components.autoscaling import KedaAutoscaler, KedaAutoscalerArgs
from components.monitoring import Monitoring, MonitoringArgs
from components.render.queries import emitted_queries as queries_of
from config.observability import AutoscalingConfig, MonitoringConfig
from plan.monitoring import alert_limits
from plan.scaling import Capacity, Workload
from tests.harness import Registered, run_program
from tests.plan_parts import monitoring_of, scaling_of
from tests.promql_lint import lint
from tests.promtool import check_rules, recording_rules, write_yaml

CAPACITY = Capacity(max_num_seqs=256, kv_cache_tokens=448_224, tokens_per_request=1024, gpu_memory_utilization=0.9)
LABELS = {"app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": "llama"}


def everything(version: str) -> Registered:
    """Both components with every trigger, alert and panel switched on."""
    scaling = scaling_of(
        AutoscalingConfig(enabled=True, triggers=("queue", "running", "kv_cache", "latency")),
        CAPACITY,
        Workload(namespace="llm", model_name="llama-8b", deployment_name="llama-server"),
        version=version,
        labels=LABELS,
    )
    limits = alert_limits(MonitoringConfig(), scaling.config, CAPACITY, scaling.thresholds.queue, None, NVIDIA.exporter)
    monitoring = monitoring_of(MonitoringConfig(), limits, version, name="llama", selector_labels=LABELS)

    def build() -> None:
        KedaAutoscaler("llama", KedaAutoscalerArgs(scaling, "llm"))
        Monitoring("llama", MonitoringArgs(monitoring, scaling.workload, "llm"))

    return run_program(build)


def emitted_queries(registered: Registered) -> list[str]:
    """Read back out of the registered objects by the function the upgrade report uses (components/render/queries.py)."""
    by_consumer = queries_of(resource.inputs for resource in registered.resources)
    return [query for queries in by_consumer.values() for query in queries]


@pytest.fixture(scope="module", params=sorted(VERSIONS))
def queries(request: pytest.FixtureRequest) -> tuple[str, list[str]]:
    return request.param, emitted_queries(everything(request.param))


def test_the_checked_queries_include_triggers_alerts_panels_and_the_variable(queries: tuple[str, list[str]]) -> None:
    _, found = queries
    assert 'sum(vllm:num_requests_waiting{namespace="llm",model_name="llama-8b"})' in found  # KEDA trigger
    assert 'absent(vllm:num_requests_running{namespace="llm",model_name="llama-8b"})' in found  # alert
    assert (
        'sum by (model_name) (rate(vllm:generation_tokens_total{namespace="llm",model_name=~"$model_name"}[5m]))' in found
    )  # panel
    assert 'vllm:num_requests_running{namespace="llm"}' in found  # dashboard variable


def test_every_emitted_query_uses_only_series_the_version_exports(queries: tuple[str, list[str]]) -> None:
    version, found = queries
    assert {q: lint(q, VERSIONS[version]) for q in found if lint(q, VERSIONS[version])} == {}


def test_every_emitted_query_parses(queries: tuple[str, list[str]], tmp_path: Path) -> None:
    _, found = queries
    result = check_rules(write_yaml(tmp_path / "parse.yaml", recording_rules(found)))
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_parse_check_rejects_broken_promql(tmp_path: Path) -> None:
    result = check_rules(write_yaml(tmp_path / "parse.yaml", recording_rules(["sum(vllm:num_requests_waiting"])))
    assert result.returncode != 0
