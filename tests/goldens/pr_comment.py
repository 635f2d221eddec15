"""The PR comment's golden: cli/pr_comment.py on tests/data/pr-comment/{base,head}, the prod stack moved from
vLLM 0.7.2 (base) to 0.33.0 (head) and the dev stack unchanged. The preflight runs in-process (the same CLI the
workflow runs as `python -m preflight`), so the golden needs no subprocess."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from cli.pr_comment import Report, collect, comment, stack_files
from cli.preflight import main as preflight_main
from tests.factories import REPO

FIXTURES = REPO / "tests" / "data" / "pr-comment"
BASE, HEAD = FIXTURES / "base", FIXTURES / "head"
GOLDEN = REPO / "tests" / "data" / "goldens" / "pr-comment.md"


def in_process(checkout: Path, stack_file: str, against: str | None) -> Report:
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        preflight_main([str(checkout / stack_file), "--json", *(["--against", against] if against else [])])
    report: Report = json.loads(out.getvalue())
    return report


def golden_comment() -> str:
    return comment(collect(BASE, HEAD, stack_files(BASE, HEAD), in_process))
