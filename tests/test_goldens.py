"""The render, the reports and the program's registrations of every recorded stack are byte-identical to the
goldens (tests/goldens/record.py): a refactor moves code, never what a stack deploys or prints."""

from __future__ import annotations

import pytest

from tests.goldens.record import GOLDENS, case_names, dump, record


@pytest.mark.parametrize("name", case_names())
def test_the_stack_renders_and_reports_exactly_as_recorded(name: str) -> None:
    golden = GOLDENS / f"{name}.json"
    assert golden.exists(), f"no golden for {name}: run `venv/bin/python -m tests.goldens.record` and commit {golden.name}"
    expected = golden.read_text(encoding="utf-8")
    assert dump(record(name)) == expected, f"rerun python -m tests.goldens.record only for an intended change ({name})"


def test_every_golden_file_belongs_to_a_recorded_stack() -> None:
    recorded, cases = {path.stem for path in GOLDENS.glob("*.json")}, set(case_names())
    assert sorted(recorded - cases) == [], "goldens of no stack file or variant: delete them"
