"""The startup budget's fixed terms (preflight/startup.py fixed_terms): the stack's probes.* where set, else the
fit on public start-ups for the model, its GPUs per pod and its batch limits (catalog/startup_phases.py)."""

from __future__ import annotations

import math

import pytest

from catalog.startup_phases import ENGINE_START_PHASES, GRAPH_PHASES, PROBE_MARGIN
from config.kubernetes import ProbesConfig
from preflight.startup import FixedTerms, fitted_phase_seconds, fixed_terms
from tests.factories import make_config
from tests.kubernetes_fixtures import SET_FIXED_TERMS, plan_of

SEVENTY_B = {
    "model": {"id": "meta-llama/Llama-3.1-70B-Instruct"},
    "gpu": {"product": "A100-SXM4-80GB", "count": 4},
    "engine": {"tensor_parallel_size": 4, "max_model_len": 8192},
}


def terms(*probes: dict[str, object], **changes: object) -> FixedTerms:
    """The fixed terms of a stack; `probes`: its probes group, if any."""
    return plan_of(make_config(**changes, probes=probes[0] if probes else {})).delivery.budget.fixed


def resolved(**changes: object):  # type: ignore[no-untyped-def]
    return plan_of(make_config(**changes)).engine


def test_unset_terms_are_the_fitted_phases_of_the_pod() -> None:
    fixed, fitted = terms(**SEVENTY_B), fitted_phase_seconds(resolved(**SEVENTY_B), 4, {})
    start, graphs = sum(fitted[p] for p in ENGINE_START_PHASES), sum(fitted[p] for p in GRAPH_PHASES)
    assert (fixed.engine_start_seconds, fixed.cuda_graph_seconds) == (pytest.approx(start, abs=0.02), pytest.approx(graphs))


def test_a_four_gpu_pod_starts_its_engine_later_than_a_one_gpu_pod_of_the_same_model() -> None:
    one = {**SEVENTY_B, "gpu": {"product": "H200", "count": 1}, "engine": {"max_model_len": 8192}}
    assert terms(**SEVENTY_B).engine_start_seconds > terms(**one).engine_start_seconds


def test_the_fitted_multi_gpu_part_is_the_fits_pod_less_its_one_gpu_start() -> None:
    pod, one = (fitted_phase_seconds(resolved(**SEVENTY_B), gpus, {}) for gpus in (4, 1))
    added = sum(pod[p] - one[p] for p in ENGINE_START_PHASES)
    assert terms(**SEVENTY_B).multi_gpu_seconds == pytest.approx(added, abs=0.02)


def test_a_set_engine_start_is_used_with_the_set_per_gpu_term_for_each_extra_gpu() -> None:
    fixed = terms({"engine_start_seconds": 60, "per_gpu_start_seconds": 15}, **SEVENTY_B)
    assert (fixed.engine_start_seconds, fixed.engine_start_how) == (
        105,
        "probes.engine_start_seconds + 45 s for 3 more GPUs (probes.per_gpu_start_seconds x 3)",
    )


def test_a_set_engine_start_alone_adds_the_fitted_multi_gpu_part() -> None:
    fixed = terms({"engine_start_seconds": 60}, **SEVENTY_B)
    assert fixed.engine_start_seconds == pytest.approx(60 + terms(**SEVENTY_B).multi_gpu_seconds, abs=0.02)


def test_a_set_compile_term_replaces_the_fitted_one() -> None:
    assert terms({"cuda_graph_capture_seconds": 120}, **SEVENTY_B).cuda_graph_seconds == 120


def test_enforce_eager_has_no_compile_term_even_when_one_is_set() -> None:
    eager = {**SEVENTY_B, "engine": {**SEVENTY_B["engine"], "enforce_eager": True}}  # type: ignore[dict-item]
    assert terms({"cuda_graph_capture_seconds": 120}, **eager).cuda_graph_seconds == 0


def test_the_fitted_compile_term_grows_with_the_layers() -> None:
    eight_b = {"model": {"id": "meta-llama/Llama-3.1-8B-Instruct"}, "engine": {"max_model_len": 8192}}
    assert terms(**SEVENTY_B).cuda_graph_seconds > terms(**eight_b).cuda_graph_seconds


def test_the_budgets_terms_say_where_each_figure_comes_from() -> None:
    budget = plan_of(make_config(**SEVENTY_B)).delivery.budget
    how, multi = {t.name: t.how for t in budget.terms}, budget.fixed.multi_gpu_seconds
    source = "(A100 start-ups R26-R61, T2, U1-U4)"  # the stack's A100-SXM4-80GB
    assert how["compile + graphs"] == f"compile and CUDA graphs fitted {source}"
    assert how["engine start"].endswith(" s for 3 more GPUs (fitted)") and f"+ {multi:g} s" in how["engine start"]


def test_an_a100s_engine_start_says_it_takes_the_h100_figures_as_no_a100_factor_covers_its_phases() -> None:
    how = plan_of(make_config(**SEVENTY_B)).delivery.budget.fixed.engine_start_how
    assert "fitted (the H100 figures: the A100 start-ups R26-R61, T2, U1-U4 give these phases no factor)" in how


def test_an_l40ss_engine_start_rests_on_the_l40s_start_ups_whose_kv_cache_factor_it_takes() -> None:
    how = plan_of(make_config(gpu={"product": "L40S"})).delivery.budget.fixed.engine_start_how
    assert "fitted (L40S start-ups R1-R25)" in how


def test_fixed_terms_read_only_the_probes_and_the_resolved_engine() -> None:
    assert fixed_terms(ProbesConfig(), resolved()) == terms()


def test_the_probe_allows_the_fitted_terms_times_the_margin() -> None:
    probe = plan_of(make_config(**SEVENTY_B)).delivery.budget.probe
    predicted = probe.engine_start_seconds + probe.cuda_graph_seconds
    assert probe.fixed_allowance_seconds == pytest.approx(predicted * PROBE_MARGIN, abs=0.02)


def test_set_terms_are_allowed_as_set() -> None:
    probe = plan_of(make_config(**SEVENTY_B, probes=SET_FIXED_TERMS)).delivery.budget.probe
    assert (probe.fixed_allowance_seconds, probe.fixed_allowance_how) == (105 + 120, "")


def test_a_set_compile_term_keeps_the_margin_on_the_fitted_engine_start_only() -> None:
    budget = plan_of(make_config(**SEVENTY_B, probes={"cuda_graph_capture_seconds": 120})).delivery.budget
    probe = budget.probe
    assert probe.fixed_allowance_seconds == pytest.approx(probe.engine_start_seconds * PROBE_MARGIN + 120, abs=0.02)


def test_the_expected_start_is_the_prediction_not_the_allowance() -> None:
    budget = plan_of(make_config(**SEVENTY_B)).delivery.budget
    probe = budget.probe
    assert budget.expected_start_seconds == math.ceil(
        probe.load_seconds + probe.engine_start_seconds + probe.cuda_graph_seconds
    )


def test_a_set_engine_start_on_several_gpus_gets_the_margin_on_its_fitted_multi_gpu_part_only() -> None:
    fixed = terms({"engine_start_seconds": 60, "cuda_graph_capture_seconds": 120}, **SEVENTY_B)
    assert fixed.engine_start_allowed_seconds == pytest.approx(60 + fixed.multi_gpu_seconds * PROBE_MARGIN, abs=0.02)


def test_a_set_engine_start_on_one_gpu_is_allowed_as_set() -> None:
    one_gpu = {"model": {"id": "meta-llama/Llama-3.1-8B-Instruct"}, "engine": {"max_model_len": 8192}}
    fixed = terms({"engine_start_seconds": 60}, **one_gpu)
    assert fixed.engine_start_allowed_seconds == 60
