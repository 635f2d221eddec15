"""The stack files in stacks/ are what users copy: each loads, fits unless its name says it is blocked on
purpose, has a golden, and (the examples) opens with a comment saying what it shows. A new file that breaks
one of these fails here with the file, the CLI's own message and the fix."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from cli.preflight import main as preflight_main
from tests.factories import REPO, STACKS
from tests.goldens.record import GOLDENS

STACK_FILES = sorted(STACKS.rglob("*.yaml"))
EXAMPLES = sorted((STACKS / "examples").glob("*.yaml"))
BLOCKED_PREFIX = "Pulumi.blocked-"


def _rel(path: Path) -> str:
    return str(path.relative_to(REPO))


def preflight(path: Path) -> tuple[int, str]:
    """The CLI's exit code and everything it printed."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = preflight_main([str(path)])
    return code, err.getvalue() + out.getvalue()


def _verdict(printed: str) -> str:
    """The reasons and suggestions of a blocked report, without the figures above them."""
    return printed[printed.find("Blocked because:") :]


@pytest.mark.parametrize("path", STACK_FILES, ids=_rel)
def test_every_stack_file_loads_without_a_config_error(path: Path) -> None:
    code, printed = preflight(path)
    assert code != 2, (
        f"{_rel(path)} does not load (the preflight exits 2):\n{printed}\n"
        f"Fix the keys named above; check with `venv/bin/python -m preflight {_rel(path)}`. Malformed stacks "
        "that test an error message belong in tests/bad_stacks/, not in stacks/."
    )


@pytest.mark.parametrize("path", STACK_FILES, ids=_rel)
def test_every_stack_file_fits_unless_its_name_says_blocked(path: Path) -> None:
    code, printed = preflight(path)
    blocked_on_purpose = path.name.startswith(BLOCKED_PREFIX)
    if code == 2:
        pytest.skip("does not load: test_every_stack_file_loads_without_a_config_error names the problem")
    if blocked_on_purpose:
        assert code == 1, f"{_rel(path)} is named {BLOCKED_PREFIX}* but the preflight lets it fit: rename it or make it block"
    else:
        assert code == 0, (
            f"{_rel(path)} does not fit (the preflight exits 1):\n{_verdict(printed)}\nApply a suggestion above, or, "
            f"when it is meant to show a blocked stack, name it {BLOCKED_PREFIX}<what>.yaml."
        )


@pytest.mark.parametrize("path", STACK_FILES, ids=_rel)
def test_every_stack_file_has_a_golden(path: Path) -> None:
    name = _rel(path).replace("/", "__").removesuffix(".yaml")
    assert (GOLDENS / f"{name}.json").exists(), (
        f"{_rel(path)} has no golden: run `venv/bin/python -m tests.goldens.record`, check with "
        f"`git status tests/data/goldens` that only tests/data/goldens/{name}.json appeared, and commit it."
    )


@pytest.mark.parametrize("path", EXAMPLES, ids=_rel)
def test_every_example_opens_with_a_comment_saying_what_it_shows(path: Path) -> None:
    header = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        header.append(line.removeprefix("#").strip())
    assert len(" ".join(header)) >= 40, f"{_rel(path)}: start it with a comment (# ...) saying what the example shows"


def test_every_stack_file_the_docs_name_exists() -> None:
    named = {
        (page.name, match)
        for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
        for match in re.findall(r"stacks/(?:examples/)?Pulumi\.[\w.-]+\.yaml", page.read_text(encoding="utf-8"))
    }
    assert named and sorted((page, path) for page, path in named if not (REPO / path).exists()) == []
