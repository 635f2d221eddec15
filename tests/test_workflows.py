"""The GitHub Actions workflows: triggers, permissions, and every stack covered by preview and deploy."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from cli.pr_comment import MARKER
from plan.sizing import resolve_sizing
from tests.factories import load_stack_file

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
PULUMI_ACTION = "pulumi/actions@8e5e406f4007fca908480587cb9893c07090f58d"  # v7.0.0
GOLDEN_COMMENT = ROOT / "tests" / "data" / "goldens" / "pr-comment.md"
FULL_SHA = re.compile(r"^[^@]+@[0-9a-f]{40}$")


@cache
def workflow(name: str) -> dict[Any, Any]:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


def triggers(name: str) -> dict[str, Any]:
    document = workflow(name)
    return document["on"] if "on" in document else document[True]  # YAML 1.1 (PyYAML) reads bare `on` as True


def job(name: str, job_id: str) -> dict[str, Any]:
    return workflow(name)["jobs"][job_id]


def step(name: str, job_id: str, step_name: str) -> dict[str, Any]:
    found = [s for s in job(name, job_id)["steps"] if s.get("name") == step_name]
    assert len(found) == 1, f"{name}: job {job_id} has {len(found)} steps named {step_name!r}"
    return found[0]


def pulumi_step(name: str, job_id: str) -> dict[str, Any]:
    found = [s for s in job(name, job_id)["steps"] if s.get("uses") == PULUMI_ACTION]
    assert len(found) == 1, f"{name}: job {job_id} has {len(found)} {PULUMI_ACTION} steps"
    return found[0]


def matrix(name: str, job_id: str) -> list[dict[str, str]]:
    return job(name, job_id)["strategy"]["matrix"]["include"]


def stack_names(folder: Path) -> list[str]:
    return sorted(path.name.removeprefix("Pulumi.").removesuffix(".yaml") for path in folder.glob("Pulumi.*.yaml"))


def test_preview_runs_on_pull_requests_to_main() -> None:
    assert triggers("preview.yml") == {"pull_request": {"branches": ["main"]}}


def test_preview_may_comment_on_pull_requests_and_only_read_code() -> None:
    permissions = {job_id: job("preview.yml", job_id)["permissions"] for job_id in workflow("preview.yml")["jobs"]}
    assert (workflow("preview.yml")["permissions"], permissions) == (
        {},
        {
            "tests": {"contents": "read"},
            "examples": {"contents": "read"},
            "stack": {"contents": "read", "pull-requests": "write"},
            "comment-report": {"contents": "read"},
            "comment": {"pull-requests": "write"},
        },
    )


def test_the_comment_report_runs_the_pr_comment_script_against_a_checkout_of_the_base() -> None:
    steps = job("preview.yml", "comment-report")["steps"]
    base = step("preview.yml", "comment-report", "Check out the base")["with"]
    assert base == {"ref": "${{ github.event.pull_request.base.sha }}", "path": "base", "persist-credentials": False}
    assert (
        "venv/bin/python -m cli.pr_comment --base base --out comment.md"
        in step("preview.yml", "comment-report", "Compute the comment")["run"]
    )
    assert steps[-1]["with"]["path"] == "comment.md"


def test_the_job_that_posts_the_comment_runs_no_code_of_the_pull_request() -> None:
    steps = job("preview.yml", "comment")["steps"]
    assert not any(str(s.get("uses", "")).startswith("actions/checkout@") for s in steps)
    assert job("preview.yml", "comment")["needs"] == "comment-report"


def test_the_posted_comment_is_found_again_by_the_scripts_marker() -> None:
    run = step("preview.yml", "comment", "Post or update the comment")["run"]
    assert "marker=$(head -n 1 comment.md)" in run and "--method PATCH" in run
    assert GOLDEN_COMMENT.read_text(encoding="utf-8").startswith(MARKER + "\n")


@pytest.mark.parametrize("workflow_name", ["preview.yml", "deploy.yml"])
def test_the_tests_job_runs_the_projects_test_script(workflow_name: str) -> None:
    assert step(workflow_name, "tests", "Test")["run"] == "bash scripts/test.sh"


@pytest.mark.parametrize("job_id", ["stack", "examples"])
def test_preview_jobs_wait_for_the_tests(job_id: str) -> None:
    assert job("preview.yml", job_id)["needs"] == "tests"


def test_preview_matrix_lists_exactly_the_stacks_in_the_stacks_folder() -> None:
    assert sorted(entry["stack"] for entry in matrix("preview.yml", "stack")) == stack_names(ROOT / "stacks")


@pytest.mark.parametrize("stack", stack_names(ROOT / "stacks"))
def test_preview_matrix_target_is_the_stack_files_target(stack: str) -> None:
    targets = {entry["stack"]: entry["target"] for entry in matrix("preview.yml", "stack")}

    assert targets.get(stack) == load_stack_file(ROOT / "stacks" / f"Pulumi.{stack}.yaml").target


def test_preview_runs_the_preflight_before_pulumi() -> None:
    steps = job("preview.yml", "stack")["steps"]

    assert steps.index(step("preview.yml", "stack", "Preflight")) < steps.index(pulumi_step("preview.yml", "stack"))


def test_preview_publishes_the_markdown_preflight_report_in_the_job_summary() -> None:
    preflight = step("preview.yml", "stack", "Preflight")

    assert preflight["run"] == (
        'venv/bin/python -m preflight "stacks/Pulumi.${{ matrix.stack }}.yaml" --markdown 2>&1 | tee -a "$GITHUB_STEP_SUMMARY"'
    )


def test_preview_preflight_fails_the_job_for_a_blocked_stack_through_pipefail() -> None:
    # Only an explicit `shell: bash` runs with -o pipefail; the default bash -e would hide the exit code behind tee.
    assert step("preview.yml", "stack", "Preflight")["shell"] == "bash"


def test_preview_uses_the_pulumi_action_to_preview_and_comment() -> None:
    inputs = pulumi_step("preview.yml", "stack")["with"]

    assert (inputs["command"], inputs["comment-on-pr"], inputs["stack-name"]) == (
        "preview",
        True,
        "${{ vars.PULUMI_STACK_PREFIX }}${{ matrix.stack }}",
    )


@pytest.mark.parametrize(("workflow_name", "job_id"), [("preview.yml", "stack"), ("deploy.yml", "up")])
def test_the_backend_comes_from_repository_secrets(workflow_name: str, job_id: str) -> None:
    action = pulumi_step(workflow_name, job_id)

    assert (action["with"]["cloud-url"], action["env"]["PULUMI_CONFIG_PASSPHRASE"]) == (
        "${{ secrets.PULUMI_BACKEND_URL }}",
        "${{ secrets.PULUMI_CONFIG_PASSPHRASE }}",
    )


@pytest.mark.parametrize(("workflow_name", "job_id"), [("preview.yml", "stack"), ("deploy.yml", "up")])
def test_the_kubeconfig_is_written_only_for_kubernetes_stacks(workflow_name: str, job_id: str) -> None:
    credentials = step(workflow_name, job_id, "Cluster credentials")

    assert (credentials["if"], credentials["env"]) == (
        "matrix.target == 'kubernetes'",
        {"KUBECONFIG_CONTENT": "${{ secrets.KUBECONFIG }}"},
    )


def test_preview_skips_pulumi_for_pull_requests_from_forks() -> None:
    assert pulumi_step("preview.yml", "stack")["if"] == "github.event.pull_request.head.repo.full_name == github.repository"


def test_examples_matrix_lists_exactly_the_example_files() -> None:
    examples = sorted(entry["example"] for entry in matrix("preview.yml", "examples"))

    assert examples == stack_names(ROOT / "stacks" / "examples"), (
        "the examples matrix of .github/workflows/preview.yml must name every stacks/examples/Pulumi.<name>.yaml, "
        "each with the verdict it expects (fits, blocked)"
    )


@pytest.mark.parametrize("entry", matrix("preview.yml", "examples"), ids=lambda entry: entry["example"])
def test_each_examples_documented_verdict_is_its_preflight_verdict(entry: dict[str, str]) -> None:
    report = resolve_sizing(load_stack_file(ROOT / "stacks" / "examples" / f"Pulumi.{entry['example']}.yaml"))

    assert entry["expect"] == ("fits" if report.verdict.fits else "blocked")


def test_examples_are_never_previewed() -> None:
    assert [s for s in job("preview.yml", "examples")["steps"] if "pulumi" in str(s.get("uses", ""))] == []


def test_deploy_runs_on_pushes_to_main_and_by_hand_only() -> None:
    assert triggers("deploy.yml") == {"push": {"branches": ["main"]}, "workflow_dispatch": None}


def test_deploy_only_reads_the_repository() -> None:
    permissions = [job("deploy.yml", job_id)["permissions"] for job_id in workflow("deploy.yml")["jobs"]]
    assert (workflow("deploy.yml")["permissions"], permissions) == ({}, [{"contents": "read"}] * 2)


@pytest.mark.parametrize("workflow_name", ["preview.yml", "deploy.yml"])
def test_every_action_is_pinned_to_a_full_commit_sha_with_its_tag_in_a_comment(workflow_name: str) -> None:
    lines = [line for line in (WORKFLOWS / workflow_name).read_text(encoding="utf-8").splitlines() if "uses:" in line]
    unpinned = [
        line.strip()
        for line in lines
        if not (FULL_SHA.match(line.split("uses:")[1].split("#")[0].strip()) and re.search(r"# v\d", line))
    ]
    assert (len(lines) > 0, unpinned) == (True, [])


@pytest.mark.parametrize("workflow_name", ["preview.yml", "deploy.yml"])
def test_no_checkout_leaves_the_token_in_the_git_config(workflow_name: str) -> None:
    checkouts = [
        s
        for j in workflow(workflow_name)["jobs"].values()
        for s in j["steps"]
        if str(s.get("uses", "")).startswith("actions/checkout@")
    ]
    assert checkouts and all(s["with"]["persist-credentials"] is False for s in checkouts)


def test_deploy_is_gated_by_the_stacks_github_environment() -> None:
    assert job("deploy.yml", "up")["environment"] == "${{ matrix.stack }}"


def test_deploy_waits_for_the_tests() -> None:
    assert job("deploy.yml", "up")["needs"] == "tests"


def test_deploy_matrix_is_the_preview_matrix() -> None:
    assert matrix("deploy.yml", "up") == matrix("preview.yml", "stack")


def test_deploy_runs_pulumi_up_per_stack() -> None:
    inputs = pulumi_step("deploy.yml", "up")["with"]

    assert (inputs["command"], inputs["stack-name"]) == ("up", "${{ vars.PULUMI_STACK_PREFIX }}${{ matrix.stack }}")


def test_deploy_never_cancels_a_running_update() -> None:
    assert job("deploy.yml", "up")["concurrency"] == {"group": "pulumi-up-${{ matrix.stack }}", "cancel-in-progress": False}


def test_deploy_does_not_comment_on_pull_requests() -> None:
    assert "comment-on-pr" not in pulumi_step("deploy.yml", "up")["with"]


@pytest.mark.parametrize("workflow_name", ["preview.yml", "deploy.yml"])
def test_every_secret_and_variable_a_workflow_reads_is_documented(workflow_name: str) -> None:
    text = (WORKFLOWS / workflow_name).read_text(encoding="utf-8")
    docs = (ROOT / "docs" / "ci-and-gitops.md").read_text(encoding="utf-8")
    names = set(re.findall(r"\b(?:secrets|vars)\.([A-Z_]+)", text))

    assert sorted(name for name in names if f"`{name}`" not in docs) == []
