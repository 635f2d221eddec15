"""The layer contract (pyproject.toml [tool.importlinter], run by scripts/test.sh) catches what it is for."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.factories import REPO

CONTRACT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_renderers(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--contract", "renderers"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def copy_of_the_packages(destination: Path) -> Path:
    """The contract's packages (their Python files only) and pyproject.toml, to plant an import in."""
    for package in CONTRACT["root_packages"]:
        shutil.copytree(REPO / package, destination / package, ignore=_not_python)
    shutil.copy(REPO / "pyproject.toml", destination / "pyproject.toml")
    return destination


def _not_python(folder: str, names: list[str]) -> list[str]:
    kept = [name for name in names if name.endswith(".py") or ((Path(folder) / name).is_dir() and name != "__pycache__")]
    return sorted(set(names) - set(kept))


def test_a_renderer_importing_the_whole_config_breaks_the_contract_even_behind_type_checking(tmp_path: Path) -> None:
    tree = copy_of_the_packages(tmp_path)
    (tree / "components" / "render" / "planted.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from config.stack import StackConfig  # noqa: F401\n",
        encoding="utf-8",
    )
    result = lint_renderers(tree)
    assert result.returncode == 1
    assert "components.render.planted -> config.stack" in result.stdout
