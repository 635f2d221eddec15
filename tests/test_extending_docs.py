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


CHANGES = dict(re.findall(r"<!-- change: ([\w-]+) -->\n(.*?)<!-- end -->", EXTENDING, re.DOTALL))


def product_files(change: str) -> list[str]:
    return re.findall(r"^- `([\w/]+\.py)`", CHANGES[change], re.MULTILINE)


def test_docs_extending_lists_the_files_of_the_four_changes_the_plan_layer_is_measured_by() -> None:
    assert sorted(CHANGES) == ["amd-gpu", "cluster-profile", "lora", "scale-to-zero"]


def test_each_listed_change_touches_at_most_six_product_files_that_exist_or_it_creates() -> None:
    for change in CHANGES:
        files = product_files(change)
        missing = [f for f in files if not (REPO / f).is_file() and f"`{f}` (new)" not in CHANGES[change]]
        assert (change, 0 < len(files) <= 6, missing) == (change, True, [])
