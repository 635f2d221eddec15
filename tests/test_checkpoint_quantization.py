"""Checkpoint versus runtime: the download is the checkpoint, the GPU holds what vLLM quantizes it to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plan.sizing import resolve_sizing
from tests.factories import make_config

QWEN_72B = {"model": {"id": "Qwen/Qwen2.5-72B-Instruct"}, "gpu": {"product": "H100-80GB-HBM3"}}
TP2 = {"tensor_parallel_size": 2, "max_model_len": 8192}


def test_online_fp8_on_a_bf16_checkpoint_downloads_the_bf16_files() -> None:
    report = resolve_sizing(make_config(**QWEN_72B, engine={**TP2, "quantization": "fp8"}))
    assert report.weights_on_disk_gib == pytest.approx(135.4, abs=0.5)


def test_online_fp8_on_a_bf16_checkpoint_halves_the_gpu_weights() -> None:
    bf16 = resolve_sizing(make_config(**QWEN_72B, engine=TP2))
    fp8 = resolve_sizing(make_config(**QWEN_72B, engine={**TP2, "quantization": "fp8"}))
    assert fp8.verdict.fits and fp8.memory.weights_gib_per_gpu < 0.55 * bf16.memory.weights_gib_per_gpu


def test_awq_on_a_checkpoint_that_is_not_awq_blocks_naming_the_key() -> None:
    report = resolve_sizing(make_config(engine={"quantization": "awq"}))
    assert not report.verdict.fits
    assert report.verdict.reasons[0].startswith("engine.quantization 'awq' needs a checkpoint quantized with awq")


def test_gptq_marlin_on_a_bf16_checkpoint_blocks() -> None:
    assert not resolve_sizing(make_config(engine={"quantization": "gptq_marlin"})).verdict.fits


def test_a_pre_quantized_awq_checkpoint_fits_without_engine_quantization() -> None:
    report = resolve_sizing(make_config(model={"id": "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4"}))
    assert report.verdict.fits and report.weights_on_disk_gib == pytest.approx(5.3, abs=0.3)


def test_awq_marlin_is_accepted_for_an_awq_checkpoint() -> None:
    cfg = make_config(model={"id": "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4"}, engine={"quantization": "awq_marlin"})
    assert resolve_sizing(cfg).verdict.fits


def test_a_different_method_than_the_checkpoints_blocks_naming_the_checkpoint_method() -> None:
    cfg = make_config(model={"id": "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4"}, engine={"quantization": "gptq"})
    reasons = resolve_sizing(cfg).verdict.reasons
    assert reasons and "does not match the checkpoint's quantization_config ('awq')" in reasons[0]


def test_the_fp8_dynamic_70b_weights_per_gpu_match_the_calibration_log() -> None:
    cfg = make_config(
        model={"id": "RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic"},
        gpu={"product": "H100-80GB-HBM3"},
        engine={"tensor_parallel_size": 2},
    )
    assert resolve_sizing(cfg).memory.weights_gib_per_gpu == pytest.approx(33.88, rel=0.01)  # row T14


def test_a_config_json_quantization_config_sets_the_checkpoint_storage(tmp_path: Path) -> None:
    config = {
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "vocab_size": 128256,
        "max_position_embeddings": 131072,
        "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128},
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    report = resolve_sizing(make_config(model={"id": "local/llama-awq", "config_json": str(path)}))
    assert report.weights_on_disk_gib < 6 and report.verdict.fits
