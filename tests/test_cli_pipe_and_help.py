"""Both command lines behave as Unix tools on a closed pipe, and their --help says what each exit code means."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest

from cli.pipe import EXIT_CLOSED_PIPE
from cli.preflight import main as preflight_main
from cli.render import main as render_main
from tests.factories import REPO

DEV = str(REPO / "stacks" / "Pulumi.dev.yaml")


class _ClosedPipe:
    """A stdout whose reader went away: every write and flush raises as a closed pipe does."""

    def write(self, _text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_the_preflight_on_a_closed_pipe_exits_141_and_prints_only_its_notes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    code, err = preflight_main([DEV]), capsys.readouterr().err
    assert (code, [line for line in err.splitlines() if not line.startswith("note: ")]) == (EXIT_CLOSED_PIPE, [])


def test_the_preflight_json_on_a_closed_pipe_is_no_internal_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert (preflight_main([DEV, "--json"]), "internal error" in capsys.readouterr().err) == (EXIT_CLOSED_PIPE, False)


def test_a_process_whose_reader_closed_the_pipe_ends_quietly() -> None:
    """The interpreter's last flush must not print "Exception ignored ... BrokenPipeError" either."""
    process = subprocess.Popen(
        [sys.executable, "-m", "preflight", DEV], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # before the child has imported anything: its first write meets no reader
    err = process.stderr.read().decode()
    noise = [line for line in err.splitlines() if not line.startswith("note: ")]  # the stack's own notes stay
    assert (process.wait(timeout=120), noise) == (EXIT_CLOSED_PIPE, [])


@pytest.mark.parametrize("main", [preflight_main, render_main], ids=["preflight", "render"])
def test_help_lists_every_exit_code_and_an_example(
    main: Callable[[list[str]], int], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    codes = ["0", "1", "2", str(EXIT_CLOSED_PIPE)]
    listed = [code for code in codes if f"\n  {code} " in text]
    assert (listed, "examples:\n  python -m" in text) == (codes, True)


def test_the_preflight_help_names_the_internal_error_code(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        preflight_main(["--help"])
    assert "\n  3    internal error" in capsys.readouterr().out
