"""A model outside the catalog: described inline with config.json keys, or read from a local config.json."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catalog.models import MODELS
from config.errors import ConfigError, show
from config.model import ArchitectureConfig
from plan.sizing import resolve_sizing
from preflight.model_source import from_config, from_config_dict
from tests.factories import make_config
from tests.kubernetes_fixtures import plan_of
from tests.test_landing import refused_key

LLAMA_8B = MODELS["meta-llama/Llama-3.1-8B-Instruct"]

# The fields of meta-llama/Llama-3.1-8B-Instruct/config.json the preflight reads, plus some it ignores.
LLAMA_8B_CONFIG_JSON: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
    "rope_scaling": {"rope_type": "llama3", "factor": 8.0},
    "tie_word_embeddings": False,
}


def write_json(tmp_path: Path, document: Any) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def from_json(path: str, **model: Any) -> Any:
    return resolve_sizing(
        make_config(model={"id": "my-org/private-8b", "config_json": path, "num_parameters": LLAMA_8B.num_parameters, **model})
    )


def test_a_model_read_from_its_config_json_is_sized_like_the_same_catalog_model(tmp_path: Path) -> None:
    catalog = resolve_sizing(make_config())
    local = from_json(write_json(tmp_path, LLAMA_8B_CONFIG_JSON))
    assert (local.memory.kv_cache_gib_per_gpu, local.memory.per_token_kv_bytes) == (
        catalog.memory.kv_cache_gib_per_gpu,
        catalog.memory.per_token_kv_bytes,
    )


def test_a_model_described_inline_is_sized_like_the_same_catalog_model() -> None:
    keys = (
        "num_hidden_layers",
        "num_attention_heads",
        "num_key_value_heads",
        "head_dim",
        "hidden_size",
        "intermediate_size",
        "vocab_size",
        "max_position_embeddings",
        "num_parameters",
    )
    architecture = {key: getattr(LLAMA_8B, key) for key in keys}
    inline = resolve_sizing(make_config(model={"id": "my-org/private-8b", "architecture": architecture}))
    assert inline.memory.kv_cache_gib_per_gpu == resolve_sizing(make_config()).memory.kv_cache_gib_per_gpu


def test_layer_types_in_a_config_json_count_the_sliding_window_layers(tmp_path: Path) -> None:
    document = {**LLAMA_8B_CONFIG_JSON, "sliding_window": 1024, "layer_types": ["sliding_attention", "full_attention"] * 16}
    report = from_json(write_json(tmp_path, document))
    assert report.resolved.architecture.num_sliding_window_layers == 16


def test_a_multimodal_config_json_is_read_from_its_text_config(tmp_path: Path) -> None:
    document = {"architectures": ["LlavaForConditionalGeneration"], "text_config": LLAMA_8B_CONFIG_JSON}
    assert from_json(write_json(tmp_path, document)).memory.per_token_kv_bytes == 32 * 2 * 8 * 128 * 2


def test_a_config_json_with_a_vision_encoder_is_a_multimodal_checkpoint(tmp_path: Path) -> None:
    document = {"architectures": ["LlavaForConditionalGeneration"], "text_config": LLAMA_8B_CONFIG_JSON, "vision_config": {}}
    assert from_json(write_json(tmp_path, document)).resolved.architecture.multimodal


def test_a_text_only_config_json_is_not_a_multimodal_checkpoint(tmp_path: Path) -> None:
    assert not from_json(write_json(tmp_path, LLAMA_8B_CONFIG_JSON)).resolved.architecture.multimodal


def test_a_multimodal_checkpoint_is_budgeted_a_longer_engine_start(tmp_path: Path) -> None:
    document = {"text_config": LLAMA_8B_CONFIG_JSON, "vision_config": {}}
    text, image = (
        plan_of(make_config(model={"id": "my-org/private-8b", "config_json": write_json(tmp_path, doc)}))
        for doc in (LLAMA_8B_CONFIG_JSON, document)
    )
    assert image.delivery.budget.fixed.engine_start_seconds > text.delivery.budget.fixed.engine_start_seconds


def test_a_config_json_that_is_not_a_mapping_is_a_config_error_naming_the_key(tmp_path: Path) -> None:
    path = write_json(tmp_path, [1, 2])
    with pytest.raises(ConfigError) as caught:
        from_json(path)
    assert caught.value.issues[0].render() == (
        f"vllm-serving:model.config_json: {show(path)} holds a JSON list, not the mapping of a config.json. "
        "Fix: point it at the model's config.json, relative to the project."
    )


def test_a_config_json_lacking_the_layer_count_is_a_config_error_naming_the_key(tmp_path: Path) -> None:
    document = {key: value for key, value in LLAMA_8B_CONFIG_JSON.items() if key != "num_hidden_layers"}
    with pytest.raises(ConfigError) as caught:
        from_json(write_json(tmp_path, document))
    assert caught.value.issues[0].key == "model.config_json" and "num_hidden_layers" in caught.value.render()


def test_a_directory_given_as_config_json_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        from_json(str(tmp_path))
    assert caught.value.issues[0].render().startswith(f"vllm-serving:model.config_json: cannot read {str(tmp_path)!r}")


# The inline architecture of the 8B config.json above: the keys model.architecture takes.
INLINE_8B = {key: value for key, value in LLAMA_8B_CONFIG_JSON.items() if key in ArchitectureConfig.model_fields}


def test_an_inline_architecture_marked_multimodal_is_budgeted_a_longer_engine_start() -> None:
    text, image = (
        plan_of(make_config(model={"id": "my-org/private-8b", "architecture": {**INLINE_8B, "multimodal": mm}}))
        for mm in (False, True)
    )
    assert image.delivery.budget.fixed.engine_start_seconds > text.delivery.budget.fixed.engine_start_seconds


def test_an_inline_architecture_is_text_only_unless_marked() -> None:
    assert [
        from_config(ArchitectureConfig.model_validate({**INLINE_8B, **mm})).multimodal for mm in ({}, {"multimodal": True})
    ] == [
        False,
        True,
    ]


def test_an_inline_multimodal_that_is_not_true_or_false_is_refused_naming_the_key() -> None:
    architecture = {**INLINE_8B, "multimodal": "maybe"}
    issue = refused_key("model.architecture.multimodal", model={"id": "my-org/private-8b", "architecture": architecture})
    assert "true or false" in issue.message


# Any JSON value where a config.json (from the Hub or a file) holds one of the keys the preflight reads.
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
QUANTIZATION_CONFIG = {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 8}}}}
READ_KEYS = (*LLAMA_8B_CONFIG_JSON, "quantization_config", "text_config", "vision_config", "layer_types", "sliding_window")


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    key=st.sampled_from(READ_KEYS), nested=st.sampled_from((None, "quant_method", "config_groups", "bits")), value=JSON_VALUES
)
def test_any_json_value_at_a_key_the_preflight_reads_gives_an_architecture_or_a_value_error(
    key: str, nested: str | None, value: Any
) -> None:
    document = {**LLAMA_8B_CONFIG_JSON, "quantization_config": QUANTIZATION_CONFIG}
    if nested is None:
        document[key] = value
    else:
        document["quantization_config"] = {**QUANTIZATION_CONFIG, nested: value}
    with contextlib.suppress(ValueError):
        from_config_dict(document, LLAMA_8B.num_parameters)
