"""One validation (validation.assess) for the CLI and the program: the same verdict on every stack file,
and nothing registered whenever the CLI refuses."""

from __future__ import annotations

import io
import runpy
from contextlib import redirect_stderr, redirect_stdout
from functools import cache
from pathlib import Path

import pulumi
import pytest

from cli.preflight import main as preflight_main
from config.errors import ConfigIssue
from tests.factories import REPO, make_config
from tests.harness import Registered, run_program_catching
from tests.kubernetes_fixtures import checked
from tests.program import SECRET_VALUES, pulumi_config
from validation import RULES, Outcome, assess, check_stack

STACK_FILES = sorted((REPO / "stacks").rglob("*.yaml")) + sorted((REPO / "tests").rglob("*.yaml"))


def cli_outcome(path: Path) -> int:
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        return preflight_main([str(path)])


def program_run(path: Path) -> tuple[Outcome | str, Registered]:
    """__main__.py under mocks with the file's config, and the secrets it requires set elsewhere (as the
    deployer does for prod): the CLI only notes those."""
    loaded = pulumi_config(path)
    if loaded is None:  # the Pulumi engine itself refuses a file that is not a stack file
        return Outcome.CONFIG_ERROR, Registered()
    values, secrets = loaded
    missing = [name for name in SECRET_VALUES if name not in values]
    values |= {name: SECRET_VALUES[name] for name in missing}
    stack = path.name.removeprefix("Pulumi.").removesuffix(".yaml")
    registered, error = run_program_catching(
        lambda: runpy.run_path(str(REPO / "__main__.py"), run_name="__main__"), values, (*secrets, *missing), stack
    )
    return _program_outcome(error), registered


@cache
def repository_program_run(path: Path) -> tuple[Outcome | str, Registered]:
    """program_run of a stack file in the repository, once a process: these tests and
    tests/test_offline_render.py read the same run of each shipped stack (4 s of a one-process suite run), and
    no test changes a file in the repository or what a run registered."""
    return program_run(path)


def _program_outcome(error: BaseException | None) -> Outcome | str:
    if error is None:
        return Outcome.FITS
    if isinstance(error, pulumi.RunError) and str(error).startswith("Invalid stack config"):
        return Outcome.CONFIG_ERROR
    if isinstance(error, pulumi.RunError) and str(error).startswith("vLLM preflight blocked"):
        return Outcome.BLOCKED
    return f"crashed: {error!r}"


@pytest.mark.parametrize("path", STACK_FILES, ids=[str(p.relative_to(REPO)) for p in STACK_FILES])
def test_the_cli_and_the_program_give_the_same_verdict_on_every_stack_file(path: Path) -> None:
    outcome, registered = repository_program_run(path)
    assert cli_outcome(path) == outcome
    if outcome is not Outcome.FITS:
        assert registered.resources == []


def test_the_corpus_holds_every_verdict() -> None:
    assert {cli_outcome(path) for path in STACK_FILES} == {0, 1, 2}


# name: (changes, the keys check_stack names)
RULE_CASES: dict[str, tuple[dict, list[str]]] = {
    "cache smaller than the weights": ({"cache": {"size_gib": 5}}, ["cache.size_gib"]),
    "an owned flag in extra_args": ({"engine": {"extra_args": ["--max-num-seqs", "8"]}}, ["engine.extra_args"]),
    "an unknown attention backend": ({"engine": {"attention_backend": "XFORMERS"}}, ["engine.attention_backend"]),
    "local path outside the cache mount": (
        {"model": {"id": "meta-llama/Llama-3.1-8B-Instruct", "local_path": "/models/x"}, "cache": {"existing_claim": "models"}},
        ["model.local_path"],
    ),
}


@pytest.mark.parametrize("name", list(RULE_CASES))
def test_check_stack_names_the_key_of_each_rule(name: str) -> None:
    changes, keys = RULE_CASES[name]
    assert [issue.key for issue in check_stack(*checked(**changes))] == keys


def test_check_stack_returns_every_problem_at_once() -> None:
    issues = check_stack(
        *checked(cache={"size_gib": 5}, engine={"attention_backend": "XFORMERS", "extra_args": ["--port=9000"]})
    )
    assert [issue.key for issue in issues] == ["cache.size_gib", "engine.attention_backend", "engine.extra_args"]


def test_a_required_secret_is_checked_only_when_the_secrets_are_known() -> None:
    cfg, plan = checked(security={"require_api_key": True})
    known = frozenset({"hf_token"})
    assert (check_stack(cfg, plan), [i.key for i in check_stack(cfg, plan, known)]) == ([], ["api_key"])


def test_a_docker_stack_without_its_required_api_key_is_refused() -> None:
    cfg = make_config(target="docker", docker={}, security={"require_api_key": True})
    assert [i.key for i in check_stack(cfg, assess(cfg).plan, frozenset({"hf_token"}))] == ["api_key"]  # type: ignore[arg-type]


def test_a_config_error_outranks_a_memory_verdict() -> None:
    cfg = make_config(
        engine={"max_model_len": 8192, "attention_backend": "XFORMERS"},
        gpu={"product": "L4"},
        model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
    )
    verdict = assess(cfg)
    assert (verdict.report is not None and not verdict.report.verdict.fits, verdict.outcome) == (True, Outcome.CONFIG_ERROR)


def test_a_rule_is_a_function_of_the_subject_appended_to_rules() -> None:
    added = lambda subject: [ConfigIssue("replicas", "is refused by a test rule.")]  # noqa: E731
    RULES.append(added)
    try:
        assert [i.key for i in check_stack(*checked())] == ["replicas"]
    finally:
        RULES.remove(added)


def test_a_gated_catalog_model_without_the_hf_token_is_refused_when_the_secrets_are_known() -> None:
    cfg, plan = checked()  # meta-llama/Llama-3.1-8B-Instruct: gated on the Hub
    assert [i.key for i in check_stack(cfg, plan, frozenset())] == ["hf_token"]


def test_a_public_catalog_model_needs_no_hf_token() -> None:
    cfg, plan = checked(model={"id": "Qwen/Qwen2.5-7B-Instruct"})
    assert check_stack(cfg, plan, frozenset()) == []


def test_a_gated_model_served_from_a_local_path_needs_no_hf_token() -> None:
    cfg, plan = checked(
        model={"id": "meta-llama/Llama-3.1-8B-Instruct", "local_path": "llama"}, cache={"existing_claim": "models"}
    )
    assert check_stack(cfg, plan, frozenset()) == []
