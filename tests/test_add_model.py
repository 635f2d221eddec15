"""scripts/add_model.py (docs/extending.md, "A model") writes a catalog entry that reads back as the preflight
would size the model's config.json."""

from __future__ import annotations

import dataclasses
import json
import runpy
import sys
import types
from pathlib import Path
from typing import Any

from catalog.models import MODELS
from config.model import ModelConfig
from preflight.model_source import resolve_architecture
from tests.factories import REPO

SCRIPT = runpy.run_path(str(REPO / "scripts" / "add_model.py"), run_name="add_model")
CONFIG_JSON = {
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "hidden_size": 2048,
    "intermediate_size": 6144,
    "vocab_size": 151936,
    "max_position_embeddings": 40960,
    "tie_word_embeddings": True,
}


def models_of(catalog_text: str) -> dict[str, Any]:
    """MODELS of the catalog's text, run as a module of its own (dataclasses look their module up)."""
    module = types.ModuleType("catalog_copy")
    sys.modules[module.__name__] = module
    try:
        exec(compile(catalog_text, "catalog/models.py", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module.MODELS


def test_the_added_model_reads_back_as_its_config_json_is_sized(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(CONFIG_JSON), encoding="utf-8")
    arch = resolve_architecture(ModelConfig(id="my-org/tiny-2b", config_json=str(path), num_parameters=2_000_000_000))
    catalog = (REPO / "catalog" / "models.py").read_text(encoding="utf-8")
    added = models_of(SCRIPT["with_model"](catalog, "my-org/tiny-2b", arch, "my-org/tiny-2b/config.json"))
    assert dataclasses.asdict(added["my-org/tiny-2b"]) == dataclasses.asdict(arch)
    assert set(added) == {*MODELS, "my-org/tiny-2b"}


def test_a_model_the_catalog_has_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    before = (REPO / "catalog" / "models.py").read_text(encoding="utf-8")
    status = SCRIPT["main"](["meta-llama/Llama-3.1-8B-Instruct", str(tmp_path / "config.json"), "--source", "x"])
    assert (status, (REPO / "catalog" / "models.py").read_text(encoding="utf-8")) == (1, before)
