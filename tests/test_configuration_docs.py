"""docs/configuration.md is generated from the config models (scripts/gen_config_docs.py) and kept current."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from types import ModuleType
from typing import Literal

from pydantic import Field, PositiveInt

from config.base import ConfigGroup
from tests.factories import REPO


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_config_docs", REPO / "scripts" / "gen_config_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = load_generator()


class _Inner(ConfigGroup):
    """A nested group."""

    depth: PositiveInt = Field(3, le=9, description="How deep.")


class _Toy(ConfigGroup):
    """A group no real config has."""

    colour: Literal["red", "blue"] = Field("red", description="Paint.")
    inner: _Inner = Field(default_factory=_Inner, description="Nested keys.")


class _ToyRoot(ConfigGroup):
    name: str = Field(description="A required name.")
    toy: _Toy = Field(default_factory=_Toy, description="Toy group.")


def test_the_committed_configuration_reference_is_what_the_models_generate() -> None:
    committed = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert committed == GEN.render(), f"docs/configuration.md is stale: run `{GEN.COMMAND}` and commit the result"


def test_a_key_added_to_a_model_appears_without_changing_the_generator() -> None:
    text = GEN.generate(_ToyRoot)
    assert "| `vllm-serving:toy.inner.depth` | integer | `3` | How deep. | > 0, ≤ 9 |" in text.splitlines()


def test_a_literal_key_lists_its_allowed_values() -> None:
    assert "| `vllm-serving:toy.colour` | one of `red`, `blue` | `red` | Paint. |  |" in GEN.generate(_ToyRoot)


def test_a_required_key_says_required() -> None:
    assert "| `vllm-serving:name` | string | required | A required name. |  |" in GEN.generate(_ToyRoot)


def test_the_secrets_are_listed_as_secrets() -> None:
    text = GEN.render()
    assert "- `vllm-serving:hf_token`" in text and "- `vllm-serving:api_key`" in text


def test_check_mode_fails_on_a_stale_file_and_names_the_command(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    stale = tmp_path / "configuration.md"
    stale.write_text("old\n", encoding="utf-8")
    monkeypatch.setattr(GEN, "OUTPUT", stale)
    monkeypatch.setattr(GEN, "ROOT", tmp_path)
    assert GEN.main(["--check"]) == 1
    assert GEN.COMMAND in capsys.readouterr().err


def test_the_generator_never_imports_pulumi() -> None:
    code = (
        "import runpy, sys; g = runpy.run_path('scripts/gen_config_docs.py', run_name='gen'); g['render'](); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_kubernetes')))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"
