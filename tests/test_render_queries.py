"""The PromQL the rendered objects carry, read back out of them (components/render/queries.py): the one list
of queries the PromQL lint and the upgrade report check."""

from __future__ import annotations

from components.render.manifests import stack_manifests
from components.render.queries import ALERTS, DASHBOARD, KEDA, emitted_queries, used_metrics
from tests.factories import shipped_stack
from validation import assess


def prod_objects() -> list[dict[str, object]]:
    plan = assess(shipped_stack("prod"), stack="prod").plan
    assert plan is not None
    return stack_manifests(plan)


def test_the_keda_queries_are_the_scaled_objects_trigger_queries() -> None:
    objects = prod_objects()
    scaled = next(o for o in objects if o["kind"] == "ScaledObject")
    assert emitted_queries(objects)[KEDA] == [t["metadata"]["query"] for t in scaled["spec"]["triggers"]]  # type: ignore[index]


def test_every_consumer_has_queries_in_the_prod_render() -> None:
    found = emitted_queries(prod_objects())
    assert all(found[consumer] for consumer in (KEDA, ALERTS, DASHBOARD))


def test_a_series_read_by_several_consumers_names_each_once() -> None:
    assert used_metrics(prod_objects())["vllm:num_requests_waiting"] == (KEDA, ALERTS, DASHBOARD)


def test_the_dashboard_variable_selector_counts_as_a_dashboard_query() -> None:
    assert 'vllm:num_requests_running{namespace="vllm-prod"}' in emitted_queries(prod_objects())[DASHBOARD]


def test_objects_without_queries_give_none() -> None:
    assert emitted_queries([{"kind": "ConfigMap", "metadata": {"name": "x"}, "data": {}}]) == {
        KEDA: [],
        ALERTS: [],
        DASHBOARD: [],
    }
