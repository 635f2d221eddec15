"""Malformed stack files: each gives its designed error naming the key, and nothing gets deployed.

Every file in tests/bad_stacks/ carries its expectation in a header line,
`# expect: <key> | <message fragment>` (`-` for problems with the file itself, which name no key).
Config errors exit the preflight CLI with 2. Stacks that are valid config but cannot run (the model does
not fit, tensor parallelism does not divide the heads) are preflight verdicts: they live in
tests/bad_stacks/blocked/ with a `# blocked: <reason fragment>` header and exit 1.
"""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pulumi
import pytest

from cli.preflight import EXIT_BLOCKED, EXIT_CONFIG_ERROR
from cli.preflight import main as preflight_main
from config.errors import PROJECT, ConfigError
from plan.sizing import resolve_sizing
from tests.factories import load_stack_file
from tests.harness import Registered, run_program_catching
from tests.program import pulumi_config

ROOT = Path(__file__).resolve().parent.parent
BAD_STACKS = ROOT / "tests" / "bad_stacks"
EXPECT = re.compile(r"^# expect: (?P<key>\S+) \| (?P<fragment>.+)$", re.MULTILINE)
BLOCKED = re.compile(r"^# blocked: (?P<fragment>.+)$", re.MULTILINE)


@dataclass(frozen=True)
class Expectation:
    key: str  # as typed in the stack file, without the project prefix; "" for the file itself
    fragment: str  # a verbatim piece of the rendered issue

    def found_in(self, error: ConfigError) -> bool:
        return any(issue.key == self.key and self.fragment in issue.render() for issue in error.issues)

    def found_in_text(self, text: str) -> bool:
        if not self.key:
            return self.fragment in text
        return any(f"{PROJECT}:{self.key}: " in line and self.fragment in line for line in text.splitlines())


def expectation(path: Path) -> Expectation:
    found = EXPECT.search(path.read_text(encoding="utf-8"))
    assert found, f"{path.name} has no `# expect: <key> | <fragment>` header"
    key = found["key"]
    return Expectation("" if key == "-" else key, found["fragment"].strip())


def blocked_reason(path: Path) -> str:
    found = BLOCKED.search(path.read_text(encoding="utf-8"))
    assert found, f"{path.name} has no `# blocked: <fragment>` header"
    return found["fragment"].strip()


BAD_FILES = sorted(BAD_STACKS.glob("*.yaml"))
BLOCKED_FILES = sorted((BAD_STACKS / "blocked").glob("*.yaml"))
PROGRAM_FILES = [path for path in BAD_FILES if pulumi_config(path) is not None]


def _ids(paths: list[Path]) -> list[str]:
    return [path.stem for path in paths]


def test_the_corpus_holds_at_least_forty_malformed_stack_files() -> None:
    assert len(BAD_FILES) >= 40, f"only {len(BAD_FILES)} files in {BAD_STACKS}"


def test_every_malformed_file_declares_its_expected_error() -> None:
    missing = [path.name for path in BAD_FILES if not EXPECT.search(path.read_text(encoding="utf-8"))]
    assert not missing, f"files without an `# expect:` header: {missing}"


@pytest.mark.parametrize("path", BAD_FILES, ids=_ids(BAD_FILES))
def test_malformed_stack_file_gives_its_designed_error_naming_the_key(path: Path) -> None:
    expected = expectation(path)
    with pytest.raises(ConfigError) as caught:
        resolve_sizing(load_stack_file(path))
    assert expected.found_in(caught.value), f"expected {expected} in:\n{caught.value.render()}"


@pytest.mark.parametrize("path", BAD_FILES, ids=_ids(BAD_FILES))
def test_malformed_stack_file_makes_the_preflight_cli_exit_2(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = preflight_main([str(path)])
    assert code == EXIT_CONFIG_ERROR


@pytest.mark.parametrize("path", BAD_FILES, ids=_ids(BAD_FILES))
def test_malformed_stack_file_error_is_printed_by_the_cli_naming_the_key(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    preflight_main([str(path)])
    printed = capsys.readouterr().err
    assert expectation(path).found_in_text(printed), printed


@pytest.mark.parametrize("name", ["gpu-memory-utilization-above-one", "document-is-a-list", "hf-token-in-plain-text"])
def test_preflight_cli_process_exits_2_on_a_malformed_file_without_a_traceback(name: str) -> None:
    path = BAD_STACKS / f"{name}.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "preflight", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, "Traceback" in done.stderr) == (EXIT_CONFIG_ERROR, False), done.stderr
    assert expectation(path).found_in_text(done.stderr), done.stderr


@pytest.mark.parametrize("path", PROGRAM_FILES, ids=_ids(PROGRAM_FILES))
def test_malformed_stack_stops_the_pulumi_program_with_a_run_error_naming_the_key(path: Path) -> None:
    _registered, error = _run_main(path)
    assert isinstance(error, pulumi.RunError) and f"{PROJECT}:{expectation(path).key}" in str(error), repr(error)


@pytest.mark.parametrize("path", PROGRAM_FILES, ids=_ids(PROGRAM_FILES))
def test_malformed_stack_stops_the_pulumi_program_before_any_resource_is_registered(path: Path) -> None:
    registered, _error = _run_main(path)
    assert [resource.name for resource in registered.resources] == []


@cache  # two tests read each file's run: the error it names and what it registered
def _run_main(path: Path) -> tuple[Registered, BaseException | None]:
    values, secrets = pulumi_config(path) or ({}, ())
    return run_program_catching(lambda: runpy.run_path(str(ROOT / "__main__.py"), run_name="__main__"), values, secrets)


def test_the_blocked_table_covers_a_model_that_does_not_fit_and_tensor_parallel_not_dividing_heads() -> None:
    assert {"weights-do-not-fit", "tensor-parallel-not-dividing-heads"} <= {path.stem for path in BLOCKED_FILES}


@pytest.mark.parametrize("path", BLOCKED_FILES, ids=_ids(BLOCKED_FILES))
def test_blocked_stack_is_valid_config_but_the_preflight_names_why_it_cannot_run(path: Path) -> None:
    report = resolve_sizing(load_stack_file(path))
    assert (report.verdict.fits, any(blocked_reason(path) in reason for reason in report.verdict.reasons)) == (False, True), (
        report.verdict.reasons
    )


@pytest.mark.parametrize("path", BLOCKED_FILES, ids=_ids(BLOCKED_FILES))
def test_blocked_stack_makes_the_preflight_cli_exit_1(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert preflight_main([str(path)]) == EXIT_BLOCKED


def test_preflight_cli_process_exits_1_when_tensor_parallel_does_not_divide_the_heads() -> None:
    path = BAD_STACKS / "blocked" / "tensor-parallel-not-dividing-heads.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "preflight", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == EXIT_BLOCKED, done.stdout + done.stderr
