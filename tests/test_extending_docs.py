"""docs/extending.md's procedures name scripts and files that exist, so following them cannot dead-end."""

from __future__ import annotations

import re

from tests.factories import REPO

EXTENDING = (REPO / "docs" / "extending.md").read_text(encoding="utf-8")
# Repository paths in backticks: `scripts/x.py`, `catalog/gpus.py`, `tests/test_x.py` (a trailing X.Y.Z is a placeholder).
NAMED = sorted(
    set(re.findall(r"`(?:venv/bin/python )?((?:scripts|catalog|tests|cluster|config)/[\w/.-]+\.(?:py|sh|json))", EXTENDING))
)


def test_docs_extending_names_the_scripts_that_add_a_vllm_release_and_a_model() -> None:
    assert {"scripts/vllm_release_tables.py", "scripts/add_model.py"} <= set(NAMED)


def test_every_script_and_file_docs_extending_names_exists() -> None:
    missing = [path for path in NAMED if "X.Y.Z" not in path and not (REPO / path).is_file()]
    assert NAMED and missing == []
