"""The plan's server and placement: decided once in plan.resolve, read by both targets' renderers."""

from __future__ import annotations

from preflight.delivery import server_memory_limit_gib, shm_gib
from tests.factories import make_config
from tests.kubernetes_fixtures import manifests, one, plan_of


def test_the_pod_runs_the_plans_command_line_as_typed() -> None:
    cfg = make_config(engine={"extra_args": ["--override-generation-config", '{"x": "$(HOME)"}']})
    container = one(manifests(cfg, plan_of(cfg).sizing), "Deployment")["spec"]["template"]["spec"]["containers"][0]
    # the kubelet would expand $(HOME): the pod writes it $$(HOME), the plan keeps what vLLM reads
    assert container["args"][-1] == '{"x": "$$(HOME)"}' and plan_of(cfg).server.args[-1] == '{"x": "$(HOME)"}'


def test_the_memory_limit_and_dev_shm_are_the_preflights_formulas() -> None:
    cfg = make_config(engine={"tensor_parallel_size": 2}, gpu={"product": "A100-SXM4-80GB", "count": 2})
    resources = plan_of(cfg).server.resources
    assert (
        (resources.memory_gib, resources.shm_gib)
        == (server_memory_limit_gib(cfg.server, 2), shm_gib(cfg.server, 2))
        == (44.0, 4.0)
    )


def test_keda_owning_the_count_starts_the_server_at_its_minimum() -> None:
    cfg = make_config(replicas=3, autoscaling={"enabled": True, "min_replica_count": 2, "max_replica_count": 3})
    assert (plan_of(cfg).server.replicas, plan_of(cfg).server.autoscaled) == (2, True)


def test_without_keda_the_server_runs_the_configured_replicas() -> None:
    assert (plan_of(make_config(replicas=2)).server.replicas, plan_of(make_config(replicas=2)).server.autoscaled) == (2, False)


def test_a_stack_that_can_run_several_replicas_spreads_them_one_per_node() -> None:
    spread = plan_of(make_config(replicas=3)).placement.spread
    assert spread is not None and (spread.topology_key, spread.min_domains) == ("kubernetes.io/hostname", 3)


def test_a_single_replica_is_not_spread() -> None:
    assert plan_of(make_config()).placement.spread is None
