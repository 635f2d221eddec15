"""The startup budget: load from the cache + engine start + CUDA graphs, times a safety factor."""

from __future__ import annotations

import math

import pytest

from config.kubernetes import ProbesConfig
from plan import Plan
from preflight.startup import StartupBudget, startup_budget


def budget_of(weights: float, throughput: float, **changes: object) -> StartupBudget:
    """startup_budget with a pod's fixed terms of 60 s engine start and 120 s compile, ProbesConfig's factor and period."""
    probes = ProbesConfig()
    terms: dict[str, object] = {
        "engine_start_seconds": 60.0,
        "cuda_graph_seconds": 120.0,
        "safety_factor": probes.safety_factor,
        "period_seconds": probes.startup_period_seconds,
    }
    return startup_budget(weights, throughput, **{**terms, **changes})  # type: ignore[arg-type]


def test_load_time_is_weights_over_throughput():
    assert budget_of(100.0, 0.5).load_seconds == 200


def test_total_is_the_sum_times_the_safety_factor_rounded_up_to_whole_periods():
    budget = budget_of(131.417, 0.5, engine_start_seconds=105.0)  # (262.8 + 105 + 120) x 1.5 = 731.6
    assert (budget.total_seconds, budget.failure_threshold) == (740, 74)


def test_bigger_model_gets_a_longer_budget():
    assert budget_of(131.0, 0.5).total_seconds > budget_of(15.0, 0.5).total_seconds


def test_override_replaces_the_estimate():
    budget = budget_of(131.0, 0.5, override_seconds=3600)
    assert (budget.total_seconds, budget.failure_threshold, budget.overridden) == (3600, 360, True)


def test_explanation_shows_each_term():
    assert budget_of(100.0, 1.0).explain() == (
        "(100 s load + 60 s engine start + 120 s compile/CUDA graphs) x 1.5 = 420 s (42 x 10 s)"
    )


def test_zero_throughput_is_rejected():
    with pytest.raises(ValueError, match="positive"):
        budget_of(10.0, 0.0)


def first_download(plan: Plan) -> int:
    """What the Docker start period adds to the startup probe's budget: the first download, x the safety factor."""
    return plan.server.startup_seconds - plan.delivery.budget.probe.total_seconds


DRAFT = {"method": "draft_model", "model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 4}


@pytest.mark.parametrize("speculative", [None, DRAFT], ids=["no draft", "with a draft model"])
def test_the_docker_start_period_is_the_kubernetes_startup_budget_plus_the_first_download(speculative) -> None:  # type: ignore[no-untyped-def]
    from tests.factories import make_config
    from tests.kubernetes_fixtures import plan_of

    model = {"id": "Qwen/Qwen3-8B"}
    measured = {"load_throughput_gib_per_s": 0.3}  # a host disk and a cluster class read differently unless measured
    changes = {"model": model, "engine": {"max_model_len": 8192, "speculative": speculative}, "probes": measured}
    docker = plan_of(make_config(target="docker", docker={}, **changes))
    kubernetes = plan_of(make_config(**changes))
    budget = docker.delivery.budget
    download = budget.download_seconds
    allowance = math.ceil(download * budget.probe.safety_factor)
    assert (download > 0, docker.server.startup_seconds) == (True, kubernetes.server.startup_seconds + allowance)


def test_the_first_download_on_docker_includes_the_draft_model() -> None:
    from tests.factories import make_config
    from tests.kubernetes_fixtures import plan_of

    model = {"id": "Qwen/Qwen3-8B"}
    plain = make_config(target="docker", docker={}, model=model, engine={"max_model_len": 8192})
    drafted = make_config(target="docker", docker={}, model=model, engine={"max_model_len": 8192, "speculative": DRAFT})
    assert first_download(plan_of(drafted)) > first_download(plan_of(plain)) > 0
