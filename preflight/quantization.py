"""Checkpoint storage versus the quantization vLLM runs: which combinations vLLM starts, and what each stores.

A checkpoint is stored either in its torch_dtype or as its config.json `quantization_config.quant_method`
says (Architecture.quantization). vLLM's ModelConfig._verify_quantization (0.33.0 config/model.py:1383-1460)
takes the checkpoint's method, lets a method's `override_quantization_method` upgrade it (awq -> awq_marlin,
gptq -> gptq_marlin), and refuses an engine.quantization that differs ("Quantization method specified in
the model config (...) does not match ..."). On a 16-bit checkpoint only the methods that quantize at load
time work: fp8 (Fp8Config with is_checkpoint_fp8_serialized False, model_executor/layers/quantization/
fp8.py:160) and bitsandbytes (in-flight 4-bit); awq, gptq and the like need the packed weights and scales
the checkpoint does not have.
"""

from __future__ import annotations

from catalog.models import Architecture

ONLINE_QUANTIZATION = frozenset({"fp8", "bitsandbytes"})
# engine.quantization values vLLM accepts for a checkpoint quantized with the key's method.
ACCEPTED_FOR_CHECKPOINT: dict[str, frozenset[str]] = {
    "awq": frozenset({"awq", "awq_marlin"}),
    "gptq": frozenset({"gptq", "gptq_marlin"}),
    "fp8": frozenset({"fp8"}),
    "bitsandbytes": frozenset({"bitsandbytes"}),
}


def runtime_quantization(arch: Architecture, requested: str | None) -> str | None:
    """The method the GPU weights are in: engine.quantization, else the checkpoint's own (vLLM reads it)."""
    return requested or arch.quantization


def quantization_reason(arch: Architecture, requested: str | None, model_id: str) -> str | None:
    """Why vLLM refuses engine.quantization for this checkpoint, or None when it starts."""
    if requested is None:
        return None
    stored = arch.quantization
    if stored is None:
        if requested in ONLINE_QUANTIZATION:
            return None
        return (
            f"engine.quantization {requested!r} needs a checkpoint quantized with {requested.split('_')[0]} "
            f"(packed weights and scales), but {model_id} is a {arch.torch_dtype} checkpoint with no "
            "quantization_config; vLLM fails to load it. Fix: serve a checkpoint made that way (e.g. "
            "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4), use engine.quantization fp8 (quantized "
            "at load), or remove engine.quantization."
        )
    if requested in ACCEPTED_FOR_CHECKPOINT.get(stored, frozenset({stored})):
        return None
    return (
        f"engine.quantization {requested!r} does not match the checkpoint's quantization_config "
        f'({stored!r}) of {model_id}; vLLM refuses to start ("Quantization method specified in the model '
        f'config ({stored}) does not match ..."). Fix: remove engine.quantization (vLLM reads the '
        "checkpoint's method) or set it to the checkpoint's method."
    )
