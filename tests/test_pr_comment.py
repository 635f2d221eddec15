"""The pull request's preflight comment (cli/pr_comment.py): the base's and the head's reports per stack file, as
one Markdown table and the upgrade impact. tests/data/pr-comment holds the two checkouts' stack files (prod moved
from vLLM 0.7.2 to 0.33.0, dev unchanged); the comment is the golden tests/data/goldens/pr-comment.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cli.pr_comment import COLUMNS, MARKER, NONE, StackReports, collect, comment, main, row, run_preflight, stack_files
from tests.factories import REPO
from tests.goldens.pr_comment import BASE, GOLDEN, HEAD, golden_comment, in_process

PROD = "stacks/Pulumi.prod.yaml"


def sized(**extra: Any) -> dict[str, Any]:
    """A hand-made report with the figures the table reads (and `extra`, e.g. the cost section)."""
    return {
        "verdict": {"overall": "FITS", "fits": True, "reasons": []},
        "capacity": {"kv_cache_tokens": 445_696, "max_concurrency_at_max_model_len": 54.41},
        "startup": {"first_start_seconds": 4574, "probe": {"total_seconds": 2360}},
        **extra,
    }


def cost(usd: float | None) -> dict[str, Any]:
    at = {"replicas": 2, "gpus": 8, "gpu_hours_per_month": 5840.0, "usd_per_month": usd}
    price = {"usd_per_hour": 32.77, "source": "AWS p4de.24xlarge on-demand, us-east-1 (2026-11)"}
    return {"price": price, "min_replicas": at, "max_replicas": {**at, "replicas": 4, "gpus": 16}}


def test_the_comment_on_the_two_checkouts_is_the_golden() -> None:
    assert golden_comment() == GOLDEN.read_text(encoding="utf-8")


def test_the_comment_starts_with_the_marker_the_workflow_finds_it_by() -> None:
    assert GOLDEN.read_text(encoding="utf-8").splitlines()[0] == MARKER


def test_the_stack_files_are_every_one_either_checkout_has(tmp_path: Path) -> None:
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.new.yaml").write_text("config: {}\n", encoding="utf-8")
    assert stack_files(BASE, tmp_path) == ["stacks/Pulumi.dev.yaml", "stacks/Pulumi.new.yaml", PROD]


def test_the_head_is_run_against_the_bases_file_of_the_same_name() -> None:
    calls: list[tuple[Path, str, str | None]] = []

    def record(checkout: Path, stack_file: str, against: str | None) -> dict[str, Any]:
        calls.append((checkout, stack_file, against))
        return sized()

    collect(BASE, HEAD, [PROD], record)
    assert calls == [(BASE, PROD, None), (HEAD, PROD, str((BASE / PROD).resolve()))]


def test_a_base_file_the_heads_code_refuses_still_gives_the_heads_report_and_says_why() -> None:
    def run(checkout: Path, stack_file: str, against: str | None) -> dict[str, Any]:
        return {"fits": False, "config_errors": [f"--against {against}: bad"]} if against else sized()

    (stack,) = collect(BASE, HEAD, [PROD], run)
    assert (
        stack.head is not None
        and stack.head["capacity"]
        and stack.head["upgrade_error"] == [f"--against {(BASE / PROD).resolve()}: bad"]
    )
    assert "- upgrade impact not computed: --against" in comment([stack])


def test_a_cost_section_fills_the_cost_columns_in_dollars_per_month_with_the_gpus() -> None:
    cells = row(StackReports(PROD, sized(cost=cost(12_345.6)), sized(cost=cost(12_345.6))))
    assert cells[2:4] == ["$12,346/month (2 x, 8 GPUs)", "$12,346/month (4 x, 16 GPUs)"]


def test_a_cost_without_a_price_says_no_price_never_a_guess() -> None:
    assert row(StackReports(PROD, sized(cost=cost(None)), sized(cost=cost(None))))[2] == "no price (2 x, 8 GPUs)"


def test_a_report_without_cost_shows_a_dash() -> None:
    assert row(StackReports(PROD, sized(), sized()))[2:4] == [NONE, NONE]


def test_a_cost_only_the_head_carries_shows_the_change_from_a_dash() -> None:
    assert row(StackReports(PROD, sized(), sized(cost=cost(100.0))))[2] == f"{NONE} → $100/month (2 x, 8 GPUs)"


def test_the_heads_price_source_is_named_below_the_table() -> None:
    assert "- price: AWS p4de.24xlarge on-demand, us-east-1 (2026-11)" in comment(
        [StackReports(PROD, sized(), sized(cost=cost(1.0)))]
    )


def test_a_stack_new_in_the_pull_request_is_marked_new() -> None:
    assert row(StackReports(PROD, None, sized()))[1] == "FITS (new stack)"


def test_a_stack_the_pull_request_removes_is_marked_removed() -> None:
    assert row(StackReports(PROD, sized(), None))[1] == "FITS (stack removed)"


def test_a_head_config_error_is_the_verdict_and_its_errors_are_listed() -> None:
    head = {"fits": False, "config_errors": ["vllm-serving:engine.max_model_len: is 'long'."]}
    stack = StackReports(PROD, sized(), head)
    assert row(stack)[1] == "FITS → CONFIG ERROR" and row(stack)[4] == f"445,696 → {NONE}"
    assert "- config error: vllm-serving:engine.max_model_len: is 'long'." in comment([stack])


def test_the_head_reports_upgrade_is_the_one_the_preflight_computes() -> None:
    head = in_process(HEAD, PROD, str(BASE / PROD))
    assert head["upgrade"]["from"]["vllm_version"] == "0.7.2" and head["upgrade"]["to"]["vllm_version"] == "0.33.0"


def test_the_preflight_runs_as_a_process_in_the_checkout() -> None:
    report = run_preflight(REPO, PROD, None)
    assert report["verdict"]["overall"] == "FITS"


def test_main_writes_the_comment_of_the_named_stack_files_to_the_out_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cli.pr_comment.run_preflight", in_process)  # the fixture checkouts hold no code to run
    out = tmp_path / "comment.md"
    assert main(["--base", str(BASE), "--head", str(HEAD), "--out", str(out), "stacks/Pulumi.dev.yaml"]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [line for line in lines if line.startswith("| `dev` | FITS | ")]  # then the price's source below the table


def test_a_base_that_is_not_a_directory_names_the_flag_and_the_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--base", str(tmp_path / "nothing"), "--head", str(HEAD)])
    assert stopped.value.code == 2
    assert f"--base {tmp_path / 'nothing'}: not a directory" in capsys.readouterr().err


def test_the_columns_in_the_ci_docs_are_the_comments() -> None:
    text = (REPO / "docs" / "ci-and-gitops.md").read_text(encoding="utf-8")
    header = text.split("<!-- docs-check: pr-comment columns -->\n", 1)[1].splitlines()[0]
    assert header == "| " + " | ".join(COLUMNS) + " |"


def test_the_ci_docs_name_the_command_the_workflow_runs() -> None:
    text = (REPO / "docs" / "ci-and-gitops.md").read_text(encoding="utf-8")
    assert "venv/bin/python -m cli.pr_comment --base base --out comment.md" in text
