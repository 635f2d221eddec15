"""`python -m preflight STACK --log FILE`: the calibration rows' quoted log lines are parsed in every wording."""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

import pytest

from cli.preflight import main
from plan.sizing import resolve_sizing
from preflight.startup_log import (
    FIGURE_MATCHERS,
    MATCH_WINDOW,
    REFUSAL_MATCHERS,
    AnchoredPattern,
    compare,
    parse_startup_log,
    render_log_check,
    term_off,
)
from tests.factories import make_config

LOGS = Path(__file__).parent / "data" / "startup-logs"
STACKS_DIR = Path(__file__).parent.parent / "stacks"


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


# --- bounded matching and the CLI's messages -------------------------------------------------------------

STACK_TEXT = (
    "config:\n  vllm-serving:model:\n    id: meta-llama/Llama-3.1-8B-Instruct\n"
    "  vllm-serving:gpu:\n    product: H100-80GB-HBM3\n  vllm-serving:security:\n    require_api_key: false\n"
)
ALL_MATCHERS = [m for group in (*FIGURE_MATCHERS.values(), *REFUSAL_MATCHERS.values()) for m in group]


class RecordingRegex:
    """A compiled pattern that records how many characters each call may read."""

    def __init__(self, regex: re.Pattern[str], windows: list[int]) -> None:
        self.regex, self.windows = regex, windows

    def match(self, text: str, pos: int, endpos: int) -> re.Match[str] | None:
        self.windows.append(min(endpos, len(text)) - pos)
        return self.regex.match(text, pos, endpos)


def hostile_line(filler: str = "1" * 12 + " " * 40) -> str:
    """One 2 MiB line: every pattern's start, each followed by what makes a backtracking pattern rescan."""
    piece = "".join(m.anchor + filler for m in ALL_MATCHERS)
    return (piece * (2 * 2**20 // len(piece) + 1))[: 2 * 2**20]


def test_each_pattern_reads_at_most_its_window_at_each_occurrence_of_its_start(monkeypatch: pytest.MonkeyPatch) -> None:
    text = hostile_line()
    windows: dict[str, list[int]] = {}
    for matchers in (FIGURE_MATCHERS, REFUSAL_MATCHERS):
        for name, group in list(matchers.items()):
            recording = tuple(
                AnchoredPattern(m.anchor, RecordingRegex(m.regex, windows.setdefault(m.regex.pattern, [])))  # type: ignore[arg-type]
                for m in group
            )
            monkeypatch.setitem(matchers, name, recording)
    parse_startup_log(text)
    assert sum(map(len, windows.values())) > len(ALL_MATCHERS)  # the recorders were called
    for matcher in ALL_MATCHERS:
        calls = windows[matcher.regex.pattern]
        assert len(calls) <= text.count(matcher.anchor) and max(calls, default=0) <= MATCH_WINDOW, matcher.anchor


def test_every_pattern_starts_with_a_literal_of_at_least_ten_characters() -> None:
    assert min(len(m.anchor) for m in ALL_MATCHERS) >= 10


def test_a_2_mib_line_of_pattern_starts_gives_no_figures() -> None:
    text = "".join(m.anchor + " " * 60 + "x" for group in FIGURE_MATCHERS.values() for m in group) * 3000
    assert len(text) > 2 * 2**20 and "\n" not in text
    logged = parse_startup_log(text)
    assert [getattr(logged, name) for name in FIGURE_MATCHERS if name != "version"] == [None] * (len(FIGURE_MATCHERS) - 1)


def test_a_run_of_commas_is_not_a_figure() -> None:
    assert parse_startup_log("num_gpu_blocks is: ,,,, done").num_gpu_blocks is None


def test_a_400_digit_figure_is_a_config_error_naming_the_figure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "vllm.log"
    log.write_text(f"Available KV cache memory: {'9' * 400} GiB\n")
    assert main([str(write_stack(tmp_path)), "--log", str(log)]) == 2
    err = capsys.readouterr().err
    assert "kv_cache_gib: the figure '999999999999999999999999'… (400 characters) has 400 digits" in err, err


def test_random_bytes_as_a_log_say_no_vllm_figures_were_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "random.log"
    log.write_bytes(random.Random(22).randbytes(64 * 1024))
    assert main([str(write_stack(tmp_path)), "--log", str(log)]) == 2
    assert f"no vLLM start-up figures found in {log}" in capsys.readouterr().err


def test_another_models_log_names_the_mismatch_instead_of_comparing_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "qwen.log"
    engine = "Initializing a V1 LLM engine (v0.19.0) with config: model='Qwen/Qwen2.5-7B-Instruct', speculative_config=None\n"
    log.write_text(engine + (LOGS / "R01.log").read_text())
    assert main([str(write_stack(tmp_path)), "--log", str(log)]) == 2
    captured = capsys.readouterr()
    assert "is the start-up log of 'Qwen/Qwen2.5-7B-Instruct', but the stack serves 'meta-llama/Llama-3.1-8B-Instruct'" in (
        captured.err
    )
    assert "Start-up log against the preflight" not in captured.out


def test_the_same_model_under_a_cache_path_is_compared(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "llama.log"
    engine = "Initializing a V1 LLM engine (v0.19.0) with config: model='/models/meta-llama/Llama-3.1-8B-Instruct', x\n"
    log.write_text(engine + (LOGS / "R01.log").read_text())
    assert main([str(write_stack(tmp_path)), "--log", str(log)]) == 0
    assert "Start-up log against the preflight" in capsys.readouterr().out


def test_json_with_a_log_prints_one_document_holding_the_log_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(write_stack(tmp_path)), "--json", "--log", str(LOGS / "R01.log")]) == 0
    document = json.loads(capsys.readouterr().out)  # one document: json.loads refuses trailing text
    assert {"kv_cache_gib", "weights_gib"} <= {f["figure"] for f in document["startup_log"]["figures"]}


def test_a_fifo_given_as_the_log_is_named_a_named_pipe_not_a_missing_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "vllm.log"
    os.mkfifo(fifo)
    assert main([str(write_stack(tmp_path)), "--log", str(fifo)]) == 2
    assert "is a named pipe (FIFO), not a regular file" in capsys.readouterr().err


def write_stack(folder: Path) -> Path:
    stack = folder / "Pulumi.x.yaml"
    stack.write_text(STACK_TEXT)
    return stack


def test_json_prints_one_document_even_for_an_internal_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def crash(*_args: object, **_kwargs: object) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr("cli.preflight.assess", crash)
    assert main([str(STACKS_DIR / "Pulumi.dev.yaml"), "--json"]) == 3
    assert json.loads(capsys.readouterr().out) == {"fits": False, "internal_error": "ZeroDivisionError"}
