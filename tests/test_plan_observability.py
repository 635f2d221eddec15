"""The plan's traffic, scaling and monitoring parts (plan/traffic.py, plan/scaling.py, plan/monitoring.py):
decided once, and equal to what the server and delivery renderers spell on their side."""

from __future__ import annotations

from plan.names import Names
from tests.factories import example_stack, make_config
from tests.kubernetes_fixtures import INSTANCE, plan_of

MULTINODE = "llama-405b-on-2x8-a100-80gb"  # stacks/examples: one replica across two nodes


def test_the_queue_alert_fires_where_keda_acts() -> None:
    plan = plan_of(make_config(autoscaling={"enabled": True, "queue_threshold": 7}))
    assert (plan.scaling.thresholds.queue, plan.monitoring.limits.queue_per_replica) == (7, 7)


def test_without_keda_the_queue_alert_is_derived_from_capacity_and_no_hpa_is_watched() -> None:
    plan = plan_of(make_config())
    assert (plan.monitoring.limits.queue_per_replica, plan.scaling.workload.hpa_name) == (26, None)


def test_with_keda_the_workload_names_the_hpa_keda_creates() -> None:
    assert plan_of(make_config(autoscaling={"enabled": True})).scaling.workload.hpa_name == f"keda-hpa-{INSTANCE}"


def test_the_queries_of_a_multinode_stack_are_about_its_leaderworkerset() -> None:
    workload = plan_of(example_stack(MULTINODE)).scaling.workload
    assert (workload.deployment_name, workload.kind) == (Names(INSTANCE).group, "LeaderWorkerSet")


def test_the_alerts_wait_as_long_as_a_new_replica_may_take() -> None:
    plan = plan_of(make_config())
    assert plan.monitoring.limits.rollout_seconds == plan.delivery.new_replica_seconds


def test_the_smoke_test_is_planned_only_when_it_is_on() -> None:
    assert plan_of(make_config(smoke_test={"enabled": False})).traffic.smoke is None
    assert plan_of(make_config()).traffic.smoke is not None
