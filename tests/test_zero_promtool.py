"""`promtool test rules` on the alerts of a stack that scales to zero behind the KEDA HTTP add-on: quiet at zero
by design and during a cold start, a page when requests wait longer than the cold start's budget or the
interceptor gives up, and the metrics-absent page back once a replica has long been wanted."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from components.render.alerts import render_rule_groups
from plan import Plan
from tests.promtool import UnitTest, expected_alert, promtool_scenario
from tests.test_scale_to_zero import example_plan

Series = list[tuple[str, str]]


@cache
def plan() -> Plan:
    return example_plan()


def rules() -> list[dict[str, Any]]:
    p = plan()
    return render_rule_groups(p.monitoring.config, p.monitoring.limits, p.monitoring.metrics, p.scaling.workload, p.zero)


def rule_named(alert: str) -> dict[str, Any]:
    return next(r for g in rules() for r in g["rules"] if r.get("alert") == alert)


def deployment(metric: str, values: str) -> tuple[str, str]:
    w = plan().scaling.workload
    return (f'{metric}{{namespace="{w.namespace}",deployment="{w.deployment_name}"}}', values)


def held(values: str) -> tuple[str, str]:
    p = plan()
    return (
        f'interceptor_request_concurrency{{namespace="keda",route_name="{p.identity.instance}",route_namespace="{p.identity.namespace}"}}',
        values,
    )


def answered(code: str, values: str) -> tuple[str, str]:
    p = plan()
    labels = f'namespace="keda",route_name="{p.identity.instance}",route_namespace="{p.identity.namespace}",method="POST"'
    return (f'interceptor_request_count_total{{{labels},code="{code}"}}', values)


def at_zero(minutes: int) -> Series:
    """Scaled to zero for `minutes`: wanted and available 0, created long before, no vLLM series at all."""
    return [
        deployment("kube_deployment_spec_replicas", f"0x{minutes}"),
        deployment("kube_deployment_status_replicas_available", f"0x{minutes}"),
        deployment("kube_deployment_created", f"0x{minutes}"),
    ]


def cold_start(zero_minutes: int, starting_minutes: int) -> Series:
    """At zero, then one replica wanted (a request held at the interceptor) and none available yet."""
    total = zero_minutes + starting_minutes
    return [
        deployment("kube_deployment_spec_replicas", f"0x{zero_minutes} 1x{starting_minutes}"),
        deployment("kube_deployment_status_replicas_available", f"0x{total}"),
        deployment("kube_deployment_created", f"0x{total}"),
        held(f"0x{zero_minutes} 1x{starting_minutes}"),
    ]


def unit_test(series: Series, checks: dict[str, list[dict[str, str]]], eval_time: str) -> UnitTest:
    """Feed `series` (one sample a minute) and expect exactly the alerts in `checks` at `eval_time`."""
    tests = [
        {
            "eval_time": eval_time,
            "alertname": alert,
            "exp_alerts": [expected_alert(rule_named(alert), labels) for labels in fired],
        }
        for alert, fired in checks.items()
    ]
    test = {
        "evaluation_interval": "1m",
        "tests": [
            {"interval": "1m", "input_series": [{"series": n, "values": v} for n, v in series], "alert_rule_test": tests}
        ],
    }
    return rules(), test


REPLICA_PAGES = ("VllmMetricsAbsent", "VllmNoReplicaAvailable", "VllmReplicasNotReady", "VllmColdStartTooLong")


@promtool_scenario
def test_no_replica_or_metrics_page_while_the_stack_is_at_zero_by_design() -> UnitTest:
    return unit_test(at_zero(180), {alert: [] for alert in REPLICA_PAGES}, "170m")


@promtool_scenario
def test_no_page_during_a_cold_start_within_its_budget() -> UnitTest:
    budget_minutes = plan().zero.cold_start.budget_seconds // 60  # type: ignore[union-attr]
    series = cold_start(60, budget_minutes + 30)
    return unit_test(series, {alert: [] for alert in REPLICA_PAGES}, f"{60 + budget_minutes - 1}m")


@promtool_scenario
def test_requests_held_longer_than_the_cold_starts_budget_page() -> UnitTest:
    budget_minutes = -(-plan().zero.cold_start.budget_seconds // 60)  # type: ignore[operator,union-attr]
    series = cold_start(60, budget_minutes + 30)
    return unit_test(series, {"VllmColdStartTooLong": [{}]}, f"{60 + budget_minutes + 2}m")


@promtool_scenario
def test_the_interceptor_giving_up_on_requests_pages() -> UnitTest:
    series = [*at_zero(30), answered("504", "0x10 1+1x20")]
    return unit_test(series, {"VllmInterceptorGaveUp": [{}]}, "20m")


@promtool_scenario
def test_answered_requests_do_not_page_as_given_up() -> UnitTest:
    series = [*at_zero(30), answered("200", "0+5x30")]
    return unit_test(series, {"VllmInterceptorGaveUp": []}, "20m")


@promtool_scenario
def test_the_metrics_absent_page_returns_once_a_replica_has_long_been_wanted() -> UnitTest:
    w = plan().scaling.workload
    series = [
        deployment("kube_deployment_spec_replicas", "1x120"),
        deployment("kube_deployment_status_replicas_available", "1x120"),
        deployment("kube_deployment_created", "0x120"),
    ]
    fired = [{"namespace": w.namespace, "model_name": w.model_name}]
    return unit_test(series, {"VllmMetricsAbsent": fired}, "110m")


@pytest.mark.parametrize("alert", ["VllmColdStartTooLong", "VllmInterceptorGaveUp"])
def test_the_add_ons_alerts_are_rendered_only_with_the_add_on(alert: str) -> None:
    p = example_plan(autoscaling={"min_replica_count": 1, "http_add_on": None})
    groups = render_rule_groups(p.monitoring.config, p.monitoring.limits, p.monitoring.metrics, p.scaling.workload, p.zero)
    assert alert not in {r.get("alert") for g in groups for r in g["rules"]}
