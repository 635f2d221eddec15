"""`python -m preflight STACK_FILE`: the report, the exit codes, and that it never imports pulumi."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cli.preflight import main
from config.errors import show
from tests.factories import REPO, STACKS, preflight_imports

REPORT_FIELDS = {  # section -> the figures it must carry
    "verdict": {"fits", "reasons", "warnings", "suggestions", "suggested_changes", "overall"},
    "gpu": {"name", "memory_gib", "gpu_memory_utilization", "requested_gib"},
    "engine": {"vllm_version", "tensor_parallel_size", "pipeline_parallel_size", "max_model_len", "kv_cache_dtype"},
    "memory": {
        "per_token_kv_bytes",
        "weights_gib_per_gpu",
        "activation_gib",
        "non_torch_gib",
        "cuda_graph_gib",
        "kv_cache_gib_per_gpu",
    },
    "capacity": {"num_gpu_blocks", "kv_cache_tokens", "max_concurrency_at_max_model_len"},
    "target": {"requests", "tokens_per_request", "kv_tokens", "margin_percent"},
}


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "preflight", *args], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    )


def test_a_fitting_stack_exits_zero_and_prints_the_table(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([str(STACKS / "Pulumi.prod.yaml")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("vLLM preflight: FITS")
    assert "KV cache             34.38 GiB per GPU" in out


def test_a_blocked_stack_exits_one_and_says_why(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([str(STACKS / "examples/Pulumi.blocked-70b-on-2x-a100-40gb.yaml")]) == 1
    out = capsys.readouterr().out
    assert out.startswith("vLLM preflight: BLOCKED")
    assert "short by 30.17 GiB" in out


def test_a_config_error_exits_two_and_names_the_key(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    stack = tmp_path / "Pulumi.typo.yaml"
    stack.write_text(
        "config:\n  vllm-serving:model:\n    id: meta-llama/Llama-3.1-8B-Instruct\n"
        "  vllm-serving:gpu:\n    product: A100-SXM4-80GB\n  vllm-serving:engine:\n    max_modl_len: 4096\n"
    )
    assert main([str(stack)]) == 2
    assert "vllm-serving:engine.max_modl_len: unknown key (did you mean `max_model_len`?)" in capsys.readouterr().err


def test_json_output_carries_every_documented_field(capsys) -> None:  # type: ignore[no-untyped-def]
    main([str(STACKS / "Pulumi.dev.yaml"), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert {section: set(report[section]) & fields for section, fields in REPORT_FIELDS.items()} == REPORT_FIELDS
    assert report["verdict"]["fits"] is True


def test_json_output_of_a_config_error_lists_the_problems(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    stack = tmp_path / "Pulumi.bad.yaml"
    stack.write_text("config:\n  vllm-serving:gpu:\n    product: A100-SXM4-80GB\n")
    assert main([str(stack), "--json"]) == 2
    report = json.loads(capsys.readouterr().out)
    assert len(report["config_errors"]) == 1
    assert report["config_errors"][0].startswith("vllm-serving:model: is required but missing.")


def test_markdown_output_is_a_table_titled_by_the_stack_file(capsys) -> None:  # type: ignore[no-untyped-def]
    main([str(STACKS / "Pulumi.prod.yaml"), "--markdown"])
    out = capsys.readouterr().out
    assert out.startswith("### ✅ Pulumi.prod.yaml: FITS")
    assert "| KV cache | 34.38 GiB per GPU |" in out


def test_the_cli_never_imports_pulumi() -> None:
    assert not preflight_imports("pulumi", "stacks/Pulumi.prod.yaml")


def test_the_cli_without_a_snapshot_never_imports_the_cluster_checks() -> None:
    assert not preflight_imports("validation.cluster", "stacks/Pulumi.prod.yaml", "--json")


def test_the_cli_with_a_snapshot_imports_the_cluster_checks() -> None:
    assert preflight_imports("validation.cluster", "stacks/Pulumi.prod.yaml", "--cluster", "tests/data/clusters/all-right.json")


def test_a_required_secret_missing_from_the_file_is_noted_but_does_not_block(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([str(STACKS / "Pulumi.prod.yaml")]) == 0
    assert capsys.readouterr().err.startswith(
        "note: vllm-serving:api_key: is required because security.require_api_key is true, but it is not set."
    )


def test_a_directory_given_as_the_stack_file_exits_two_without_a_traceback() -> None:
    result = run_cli("stacks")
    assert (result.returncode, "Traceback" in result.stderr) == (2, False), result.stderr
    assert "stacks: is a directory, not a regular file." in result.stderr


def test_an_unreadable_stack_file_exits_two_naming_the_file(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    stack = tmp_path / "Pulumi.locked.yaml"
    stack.write_text("config: {}\n")

    def refuse(*_args: object, **_kwargs: object) -> str:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("reading.files.os.open", refuse)
    assert main([str(stack)]) == 2
    assert f"{stack}: cannot be read (Permission denied)." in capsys.readouterr().err


def test_a_file_that_is_not_yaml_exits_two_saying_so(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    stack = tmp_path / "Pulumi.binary.yaml"
    stack.write_bytes(b"\x93\x00\xff config")
    assert main([str(stack)]) == 2
    assert f"{stack}: is not UTF-8 text (byte 0)" in capsys.readouterr().err


def test_an_internal_error_exits_three_with_one_line_asking_to_report_it(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    def crash(*_args: object, **_kwargs: object) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr("cli.preflight.assess", crash)
    assert main([str(STACKS / "Pulumi.dev.yaml")]) == 3
    err = capsys.readouterr().err
    assert err.startswith("internal error in the preflight (ZeroDivisionError); please report it") and err.count("\n") == 1


def test_debug_shows_the_traceback_of_an_internal_error(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def crash(*_args: object, **_kwargs: object) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr("cli.preflight.assess", crash)
    with pytest.raises(ZeroDivisionError):
        main([str(STACKS / "Pulumi.dev.yaml"), "--debug"])


def test_a_missing_log_file_is_a_config_error_naming_the_file(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    missing = tmp_path / "vllm.log"
    assert main([str(STACKS / "Pulumi.dev.yaml"), "--log", str(missing)]) == 2
    assert f"--log {show(str(missing))}: no such file." in capsys.readouterr().err


def test_a_gated_model_without_the_hf_token_is_noted_offline_as_a_required_api_key_is(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([str(STACKS / "Pulumi.dev.yaml")]) == 0  # the CLI cannot see secrets set elsewhere (ESC, CI)
    assert "note: vllm-serving:hf_token: is required because model.id 'meta-llama/" in capsys.readouterr().err
