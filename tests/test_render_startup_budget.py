"""The startup budget: load from the cache + engine start + CUDA graphs, times a safety factor."""

from __future__ import annotations

import pytest

from preflight.startup import startup_budget


def test_load_time_is_weights_over_throughput():
    assert startup_budget(100.0, 0.5, 1, False).load_seconds == 200


def test_each_extra_gpu_adds_worker_start_time():
    assert startup_budget(10.0, 1.0, 4, False).engine_start_seconds == 60 + 3 * 15


def test_enforce_eager_skips_cuda_graph_capture():
    assert startup_budget(10.0, 1.0, 1, True).cuda_graph_seconds == 0


def test_total_is_the_sum_times_the_safety_factor_rounded_up_to_whole_periods():
    budget = startup_budget(131.417, 0.5, 4, False)  # (262.8 + 105 + 120) x 1.5 = 731.6
    assert (budget.total_seconds, budget.failure_threshold) == (740, 74)


def test_bigger_model_gets_a_longer_budget():
    assert startup_budget(131.0, 0.5, 4, False).total_seconds > startup_budget(15.0, 0.5, 4, False).total_seconds


def test_override_replaces_the_estimate():
    budget = startup_budget(131.0, 0.5, 4, False, override_seconds=3600)
    assert (budget.total_seconds, budget.failure_threshold, budget.overridden) == (3600, 360, True)


def test_explanation_shows_each_term():
    assert startup_budget(100.0, 1.0, 1, False).explain() == (
        "(100 s load + 60 s engine start + 120 s compile/CUDA graphs) x 1.5 = 420 s (42 x 10 s)")


def test_zero_throughput_is_rejected():
    with pytest.raises(ValueError, match="positive"):
        startup_budget(10.0, 0.0, 1, False)
