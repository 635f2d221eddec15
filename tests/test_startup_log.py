"""`python -m preflight STACK --log FILE`: the calibration rows' quoted log lines are parsed in every wording."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.preflight import main
from plan.sizing import resolve_sizing
from preflight.startup_log import compare, parse_startup_log, render_log_check, term_off
from tests.factories import make_config

LOGS = Path(__file__).parent / "data" / "startup-logs"


def logged(row: str):  # type: ignore[no-untyped-def]
    return parse_startup_log((LOGS / f"{row}.log").read_text())


def test_the_v1_profiling_line_gives_weights_activation_non_torch_and_kv() -> None:
    log = logged("R01")
    assert (log.weights_gib, log.activation_gib, log.non_torch_gib, log.non_kv_gib, log.kv_cache_gib) == (
        14.99,
        1.89,
        0.25,
        17.12,
        58.11,
    )


def test_the_v1_requested_memory_and_cuda_graph_estimate_are_read() -> None:
    log = logged("R01")
    assert (log.requested_gib, log.cuda_graph_estimate_gib) == (75.23, 0.84)


def test_the_legacy_v0_profiling_line_gives_peak_torch_non_torch_and_kv() -> None:
    log = logged("R28")
    assert (log.peak_torch_gib, log.non_torch_gib, log.kv_cache_gib, log.num_gpu_blocks) == (17.06, 0.35, 3.81, 1952)


def test_the_pr_10511_table_wording_is_read() -> None:
    log = logged("R37")
    assert (log.total_gpu_gib, log.weights_gib, log.non_torch_gib, log.activation_gib, log.kv_cache_gib) == (
        79.22,
        14.96,
        1.79,
        1.26,
        53.29,
    )


def test_the_v0_max_seq_len_refusal_is_recognised() -> None:
    log = logged("R29")
    assert log.refusals == ("max-seq-len",) and not log.started


def test_the_no_cache_memory_refusal_and_a_negative_kv_figure_are_read() -> None:
    log = logged("T01")
    assert (log.refusals, log.kv_cache_gib, log.weights_gib) == (("no-kv-memory",), -14.28, 15.67)


def test_token_capacity_and_concurrency_with_thousands_separators_are_read() -> None:
    log = logged("T02")
    assert (log.kv_cache_tokens, log.max_concurrency, log.cuda_graph_estimate_gib) == (224353, 6.85, 0.79)


def test_tensor_parallel_rank_zero_lines_give_requested_memory_and_blocks() -> None:
    assert logged("T14").requested_gib == 75.23
    assert logged("T16").num_gpu_blocks == 1245


def test_an_out_of_memory_error_is_recognised_but_is_not_a_kv_refusal() -> None:
    log = parse_startup_log("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 136.00 MiB.")
    assert log.refusals == ("out-of-memory",) and log.started


def test_each_logged_figure_is_set_beside_the_prediction_with_its_error() -> None:
    report = resolve_sizing(
        make_config(
            gpu={"product": "H100-80GB-HBM3"},
            vllm={"version": "0.19.0"},
            engine={"gpu_memory_utilization": 0.95, "max_model_len": 16384},
        )
    )
    checks = {check.figure: check for check in compare(report, logged("R01"))}
    assert checks["kv_cache_gib"].logged == 58.11
    assert checks["kv_cache_gib"].predicted == report.as_dict()["memory"]["kv_cache_gib_per_gpu"]
    assert abs(checks["kv_cache_gib"].error_percent or 0) < 3


def test_the_term_that_is_off_is_named_with_its_miss_in_gib() -> None:
    report = resolve_sizing(
        make_config(gpu={"product": "H100-80GB-HBM3"}, vllm={"version": "0.19.0"}, engine={"gpu_memory_utilization": 0.95})
    )
    fake = parse_startup_log(
        "torch peak memory increase: 5.00GiB; non-torch forward increase memory: 0.25GiB; weights memory: 14.99GiB."
    )
    printed = report.as_dict()["memory"]["activation_gib"]
    assert term_off(report, fake) == f"activation is underestimated by {5.0 - printed:.2f} GiB per GPU"


def test_a_refusal_the_preflight_did_not_predict_is_flagged_as_a_disagreement() -> None:
    report = resolve_sizing(make_config())
    assert "-- they disagree" in render_log_check(report, logged("T01"))


def test_the_cli_prints_the_log_check_after_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stack = tmp_path / "Pulumi.x.yaml"
    stack.write_text(
        "config:\n  vllm-serving:model:\n    id: meta-llama/Llama-3.1-8B-Instruct\n"
        "  vllm-serving:gpu:\n    product: H100-80GB-HBM3\n  vllm-serving:security:\n"
        "    require_api_key: false\n"
    )
    assert main([str(stack), "--log", str(LOGS / "R01.log")]) == 0
    out = capsys.readouterr().out
    assert "Start-up log against the preflight:" in out and "kv_cache_gib" in out


def test_a_cuda_graph_estimate_the_release_does_not_subtract_is_left_out_of_the_comparison() -> None:
    report = resolve_sizing(make_config(gpu={"product": "H100-80GB-HBM3"}, vllm={"version": "0.19.0"}))
    assert "cuda_graph_estimate_gib" not in {check.figure for check in compare(report, logged("R01"))}
