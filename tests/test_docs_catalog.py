"""docs/catalog.md is generated from the model and GPU catalogs (scripts/gen_catalog_docs.py) and kept current."""

from __future__ import annotations

import dataclasses
import importlib.util
import subprocess
import sys
from types import ModuleType

from catalog.gpu_labels import ProviderLabels
from catalog.gpus import GPUS
from catalog.models import MODELS
from tests.factories import REPO


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_catalog_docs", REPO / "scripts" / "gen_catalog_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = load_generator()


def test_the_committed_catalog_page_is_what_the_catalogs_generate() -> None:
    committed = (REPO / "docs" / "catalog.md").read_text(encoding="utf-8")
    assert committed == GEN.render(), f"docs/catalog.md is stale: run `{GEN.COMMAND}` and commit the result"


def test_every_catalog_model_and_gpu_has_a_row() -> None:
    text = GEN.render()
    missing = [name for name in [*MODELS, *GPUS] if f"| `{name}` |" not in text]
    assert missing == []


def test_a_model_added_to_the_catalog_appears_without_changing_the_generator() -> None:
    added = {"my-org/tiny": dataclasses.replace(MODELS["Qwen/Qwen3-0.6B"], num_local_experts=4, num_experts_per_tok=1)}
    row = next(line for line in GEN.generate(added, {}, {}).splitlines() if "my-org/tiny" in line)
    assert row.startswith("| `my-org/tiny` | 0.60 B | bfloat16 |") and "MoE: 4 experts, 1 per token" in row


def test_a_quantized_checkpoint_names_its_method() -> None:
    row = GEN.model_row("x", MODELS["hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4"])
    assert "| `awq` |" in row


def test_a_gpu_row_carries_its_provider_labels() -> None:
    row = GEN.gpu_row(GPUS["L4"], ProviderLabels(("nvidia-l4",), "l4", 22888))
    assert row == "| `L4` | 22.03 GiB | `NVIDIA-L4` | yes | ada-lovelace | 8 | pcie | `nvidia-l4` | `l4` (22888 MiB) |  |"


def test_check_mode_fails_on_a_stale_file_and_names_the_command(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    stale = tmp_path / "catalog.md"
    stale.write_text("old\n", encoding="utf-8")
    monkeypatch.setattr(GEN, "OUTPUT", stale)
    monkeypatch.setattr(GEN, "ROOT", tmp_path)
    assert GEN.main(["--check"]) == 1
    assert GEN.COMMAND in capsys.readouterr().err


def test_the_generator_never_imports_pulumi() -> None:
    code = (
        "import runpy, sys; g = runpy.run_path('scripts/gen_catalog_docs.py', run_name='gen'); g['render'](); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_kubernetes')))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"


def test_every_example_is_listed_with_the_gpus_of_one_replica() -> None:
    text = GEN.render()
    examples = sorted((REPO / "stacks" / "examples").glob("Pulumi.*.yaml"))
    assert [p.name for p in examples if f"(../stacks/examples/{p.name})" not in text] == []
    assert "| `meta-llama/Llama-3.1-405B-Instruct` | `A100-SXM4-80GB` x 16 |" in text
