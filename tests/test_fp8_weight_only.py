"""FP8 weights on a GPU without FP8 tensor cores run weight-only through vLLM's Marlin kernel: the preflight says so,
whether the weights are quantized at load (engine.quantization fp8) or stored so in the checkpoint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from catalog.gpus import GPUS
from preflight.model_source import from_config_dict, stores_fp8_weights
from tests.factories import make_config
from validation import assess

FP8_70B = "RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic"
LLAMA_8B_CONFIG: dict[str, Any] = {
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
}


def _compressed_tensors(weight_type: str) -> dict[str, Any]:
    """A compressed-tensors quantization_config as llm-compressor writes it (FP8_DYNAMIC: float; W8A8: int)."""
    weights = {"num_bits": 8, "type": weight_type, "strategy": "channel", "symmetric": True}
    group = {"targets": ["Linear"], "weights": weights, "input_activations": {**weights, "strategy": "token"}}
    return {"quant_method": "compressed-tensors", "config_groups": {"group_0": group}, "ignore": ["lm_head"]}


def _weight_only_warnings(product: str, gpus: int = 1, **changes: Any) -> list[str]:
    report = assess(make_config(gpu={"product": product, "count": gpus}, **changes)).report
    assert report is not None
    return [w for w in report.verdict.warnings if "weight-only (W8A16)" in w]


def _fp8_70b(product: str) -> list[str]:
    return _weight_only_warnings(product, 2, model={"id": FP8_70B}, engine={"tensor_parallel_size": 2})


def test_a_checkpoint_stored_in_fp8_on_an_a100_warns_naming_model_id() -> None:
    (warning,) = _fp8_70b("A100-SXM4-80GB")
    assert warning.startswith(f"model.id '{FP8_70B}' stores FP8 weights, but A100-SXM4-80GB has no FP8 tensor cores")


def test_a_checkpoint_stored_in_fp8_on_an_h100_does_not_warn() -> None:
    assert _fp8_70b("H100-80GB-HBM3") == []


def test_a_16_bit_checkpoint_on_an_a100_does_not_warn() -> None:
    assert _weight_only_warnings("A100-SXM4-80GB") == []


def test_fp8_quantized_at_load_on_an_a100_warns_naming_engine_quantization() -> None:
    (warning,) = _weight_only_warnings("A100-SXM4-80GB", engine={"quantization": "fp8"})
    assert warning.startswith("engine.quantization fp8 quantizes the weights to FP8 at load")


def test_the_fix_names_exactly_the_gpu_families_with_fp8_tensor_cores() -> None:
    (warning,) = _fp8_70b("A100-SXM4-80GB")
    native = sorted({gpu.family for gpu in GPUS.values() if gpu.native_fp8})
    assert f"({', '.join(native)})" in warning and "ampere" not in native


def test_a_compressed_tensors_scheme_of_float_weights_stores_fp8() -> None:
    assert stores_fp8_weights({"quantization_config": _compressed_tensors("float")})


def test_a_compressed_tensors_scheme_of_int8_weights_does_not_store_fp8() -> None:
    assert not stores_fp8_weights({"quantization_config": _compressed_tensors("int")})


def test_the_fp8_quant_method_stores_fp8() -> None:
    assert stores_fp8_weights({"quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic"}})


def test_an_awq_checkpoint_does_not_store_fp8() -> None:
    assert not stores_fp8_weights({"quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128}})


def test_a_config_json_of_a_compressed_tensors_fp8_checkpoint_reads_as_fp8_weights() -> None:
    config = {**LLAMA_8B_CONFIG, "quantization_config": _compressed_tensors("float")}
    assert from_config_dict(config, None).fp8_weights


def test_a_config_json_without_quantization_reads_as_16_bit_weights() -> None:
    assert not from_config_dict(LLAMA_8B_CONFIG, None).fp8_weights


def test_a_local_fp8_config_json_on_an_a100_warns(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**LLAMA_8B_CONFIG, "quantization_config": _compressed_tensors("float")}))
    model = {"id": "acme/llama-8b-fp8", "config_json": str(path), "num_parameters": 8_030_261_248}
    assert len(_weight_only_warnings("A100-SXM4-80GB", model=model)) == 1


def test_an_inline_architecture_quantized_fp8_warns_on_an_a100() -> None:
    architecture = {**LLAMA_8B_CONFIG, "quantization": "fp8", "num_parameters": 8_030_261_248}
    architecture.pop("model_type")
    assert len(_weight_only_warnings("A100-SXM4-80GB", model={"id": "acme/llama-8b-fp8", "architecture": architecture})) == 1


def _with_groups(groups: object) -> dict[str, Any]:
    return {**LLAMA_8B_CONFIG, "quantization_config": {"quant_method": "compressed-tensors", "config_groups": groups}}


def test_config_groups_given_as_a_list_leave_the_bits_unread_and_refuse_cleanly() -> None:
    with pytest.raises(ValueError, match="needs quantization_bits"):
        from_config_dict(_with_groups([{"weights": {"num_bits": 8, "type": "float"}}]), 8_030_261_248)


def test_a_group_whose_weights_are_a_list_leaves_the_bits_unread_and_refuses_cleanly() -> None:
    with pytest.raises(ValueError, match="needs quantization_bits"):
        from_config_dict(_with_groups({"group_0": {"weights": [8, "float"]}}), 8_030_261_248)


def test_a_well_formed_group_beside_a_malformed_one_still_reads_as_fp8() -> None:
    groups = {"bad": "x", "group_0": {"weights": {"num_bits": 8, "type": "float"}}}
    assert from_config_dict(_with_groups(groups), 8_030_261_248).fp8_weights


def test_a_local_config_json_with_malformed_groups_is_refused_naming_model_config_json(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_with_groups("compressed")))
    model = {"id": "acme/llama-8b", "config_json": str(path), "num_parameters": 8_030_261_248}
    assert [issue.key for issue in assess(make_config(model=model)).issues] == ["model.config_json"]


def test_a_quant_method_that_is_not_a_string_does_not_store_fp8_and_does_not_raise() -> None:
    assert not stores_fp8_weights({"quantization_config": {"quant_method": {"name": "fp8"}}})
