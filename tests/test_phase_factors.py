"""Measured phase factors: a start on a stack's nodes measures each fixed phase against the fit
(preflight/startup_phases.py measured_phase_factors), and probes.phase_factors scales the fitted phases of any
stack on those nodes (preflight/startup.py fixed_terms)."""

from __future__ import annotations

import pytest

from catalog.startup_phases import FIXED_PHASES
from config.kubernetes import PhaseFactorsConfig
from preflight.startup_phases import LoggedPhases, measured_phase_factors, render_phase_check
from tests.factories import make_config
from tests.kubernetes_fixtures import plan_of

LOGGED = LoggedPhases(process_start=30.0, compile=12.0, cuda_graphs=4.0, kv_cache_init=9.0, api_ready=2.0)


def budget(**factors: float):  # type: ignore[no-untyped-def]
    return plan_of(make_config(probes={"phase_factors": factors})).delivery.budget


def test_the_factor_keys_are_the_catalogs_fixed_phases() -> None:
    assert tuple(PhaseFactorsConfig.model_fields) == FIXED_PHASES


def test_a_factor_scales_its_fitted_phase_and_no_other() -> None:
    plain, slow = budget().fixed.fitted, budget(compile=2.0).fixed.fitted
    assert (slow["compile"], slow["cuda_graphs"]) == (pytest.approx(plain["compile"] * 2, abs=0.01), plain["cuda_graphs"])


def test_a_factor_on_an_engine_start_phase_moves_the_engine_start_term() -> None:
    plain, slow = budget(), budget(process_start=2.0)
    added = plain.fixed.fitted["process_start"]
    assert slow.probe.engine_start_seconds == pytest.approx(plain.probe.engine_start_seconds + added, abs=0.02)


def test_the_term_says_which_measured_factors_it_takes() -> None:
    assert "measured probes.phase_factors: compile x 0.6" in budget(compile=0.6).fixed.cuda_graph_how


def test_a_measured_factor_is_the_logged_phase_over_the_fit() -> None:
    plain = budget()
    assert measured_phase_factors(plain, LOGGED)["compile"] == round(12.0 / plain.fixed.fitted["compile"], 2)


def test_a_stacks_own_factors_do_not_change_what_a_start_measures() -> None:
    assert measured_phase_factors(budget(compile=0.5, api_ready=2.0), LOGGED) == measured_phase_factors(budget(), LOGGED)


def test_a_compile_from_the_cache_measures_no_compile_factor() -> None:
    hit = LoggedPhases(compile=4.0, cuda_graphs=4.0, compile_cache_hit=True)
    assert set(measured_phase_factors(budget(), hit)) == {"cuda_graphs"}


def test_a_ratio_beyond_any_hosts_is_not_offered() -> None:
    assert "process_start" not in measured_phase_factors(budget(), LoggedPhases(process_start=0.0))


def test_the_report_prints_the_factors_as_the_stack_files_mapping() -> None:
    text = render_phase_check(budget(), LoggedPhases(api_ready=budget().fixed.fitted["api_ready"] * 2))
    assert "measured on these nodes, for the stack of any model on them: probes.phase_factors: {api_ready: 2}" in text
