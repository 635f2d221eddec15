"""A skipped schema test says why and how to enable it."""

from __future__ import annotations

from pathlib import Path

import pytest

import tests.promtool as promtool


def test_without_the_crd_folder_the_reason_names_the_variable_to_set(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(promtool, "CRDS", tmp_path / "absent")
    reason = promtool.missing_crd_reason("keda.sh_scaledobjects.yaml") or ""
    assert ("set VLLM_SERVING_CRDS to a folder" in reason, "VLLM_SERVING_REQUIRE_CRDS=1" in reason) == (True, True)


def test_a_file_missing_from_the_crd_folder_is_named_with_its_upstream_source(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(promtool, "CRDS", tmp_path)
    assert promtool.missing_crd_reason("keda.sh_scaledobjects.yaml") == (
        f"upstream CRD schema keda.sh_scaledobjects.yaml not found in {tmp_path}: copy it there from "
        "kedacore/keda config/crd/bases/keda.sh_scaledobjects.yaml"
    )


def test_the_summary_lists_the_reason_of_every_skip(pytestconfig: pytest.Config) -> None:
    assert "s" in pytestconfig.option.reportchars or "a" in pytestconfig.option.reportchars.lower()
