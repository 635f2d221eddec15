"""Turn the `model` group into one Architecture: from the catalog, inline, or a local config.json."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from catalog.models import INT4_G128_BYTES, MODELS, Architecture
from config.errors import ConfigError, ConfigIssue, show
from config.model import ArchitectureConfig, ModelConfig
from preflight.checkpoint import checkpoint_bytes
from preflight.hub import hub_facts

PROJECT_DIR = Path(__file__).resolve().parent.parent
MAX_CONFIG_JSON_BYTES = 4 * 1024 * 1024  # Hugging Face config.json files are a few KB; multimodal ones < 100 KB


def resolve_architecture(model: ModelConfig) -> Architecture:
    """The architecture the preflight sizes: inline, a local config.json, the catalog, else the Hub (its
    config.json and safetensors headers at model.revision, preflight/hub.py). Raises ConfigError when it
    cannot be read."""
    if model.architecture is not None:
        return from_config(model.architecture)
    if model.config_json is not None:
        return _from_config_json(model.config_json, model.num_parameters)
    if model.id in MODELS:
        return MODELS[model.id]
    return from_hub(model.id, model.revision)


def from_hub(repo_id: str, revision: str | None) -> Architecture:
    """The architecture from the Hub's facts: config.json for the shape, the headers for the exact bytes."""
    facts = hub_facts(repo_id, revision)
    try:
        shape = from_config_dict(facts.config, None)
    except ValueError as error:
        raise ConfigError(
            [
                ConfigIssue(
                    "model.id",
                    f"{show(repo_id)}'s config.json on the Hub lacks what the preflight needs: {error}".replace("\n", " "),
                    "describe it with model.architecture (config.json keys).",
                )
            ]
        ) from None
    read = replace(shape, source=facts.source, gated=facts.gated, commit=facts.sha)
    if not facts.tensors:  # no safetensors weights (.bin only): the parameters are estimated from the shape
        return replace(read, source=f"{facts.source}, config.json only (no safetensors headers)")
    params = sum(math.prod(tensor.shape) for tensor in facts.tensors)
    return replace(read, num_parameters=params, checkpoint=checkpoint_bytes(facts.tensors, shape.num_hidden_layers))


def from_config(arch: ArchitectureConfig) -> Architecture:
    kv_heads = arch.num_key_value_heads or arch.num_attention_heads
    head_dim = arch.head_dim or arch.hidden_size // arch.num_attention_heads
    shape = Architecture(
        arch.num_hidden_layers,
        arch.num_attention_heads,
        kv_heads,
        head_dim,
        arch.hidden_size,
        arch.intermediate_size,
        arch.vocab_size,
        arch.max_position_embeddings,
        num_parameters=1,
        torch_dtype=arch.torch_dtype,
        tie_word_embeddings=arch.tie_word_embeddings,
        sliding_window=arch.sliding_window,
        num_sliding_window_layers=arch.num_sliding_window_layers,
        num_local_experts=arch.num_local_experts,
        num_experts_per_tok=arch.num_experts_per_tok,
        kv_lora_rank=arch.kv_lora_rank,
        qk_rope_head_dim=arch.qk_rope_head_dim,
        quantization=arch.quantization,
        quantized_linear_bytes=_quantized_bytes(arch),
        fp8_weights=arch.quantization in FP8_METHODS,
        multimodal=arch.multimodal,
    )
    params = arch.num_parameters or estimate_parameters(shape)
    return Architecture(**{**shape.__dict__, "num_parameters": params})


def _quantized_bytes(arch: ArchitectureConfig) -> float | None:
    """4-bit group-128 packing (AWQ/GPTQ layout) or one byte per weight for 8-bit and fp8 methods."""
    if arch.quantization is None:
        return None
    bits = arch.quantization_bits or 8
    return INT4_G128_BYTES if bits == 4 else 1.0


# The quant_methods whose checkpoints store FP8 linear weights (vLLM's Fp8Config and FBGEMMFp8Config). A
# compressed-tensors checkpoint says it per scheme (stores_fp8_weights).
FP8_METHODS = frozenset({"fp8", "fbgemm_fp8"})


def stores_fp8_weights(data: dict[str, Any]) -> bool:
    """Whether a config.json's quantization_config stores FP8 linear weights: an FP8 method, or a compressed-tensors
    scheme of 8-bit float weights (llm-compressor's FP8 and FP8_DYNAMIC: `weights: {num_bits: 8, type: float}`)."""
    config = data.get("quantization_config")
    if not isinstance(config, dict):
        return False
    method = config.get("quant_method")
    if not isinstance(method, str):
        return False
    if method in FP8_METHODS:
        return True
    schemes = weight_schemes(config) if method == "compressed-tensors" else []
    return any(scheme.get("type") == "float" and scheme.get("num_bits") == 8 for scheme in schemes)


def weight_schemes(config: dict[str, Any]) -> list[dict[str, Any]]:
    """The `weights` scheme of each compressed-tensors config group, leaving out whatever is not shaped as one (a
    config.json from the Hub is read as it is: a list where a mapping belongs must not raise)."""
    groups = config.get("config_groups")
    if not isinstance(groups, dict):
        return []
    schemes = [group.get("weights") for group in groups.values() if isinstance(group, dict)]
    return [scheme for scheme in schemes if isinstance(scheme, dict)]


def quantization_fields(data: dict[str, Any]) -> dict[str, Any]:
    """`quantization` and `quantization_bits` from a config.json's quantization_config, if it has one."""
    config = data.get("quantization_config")
    if not isinstance(config, dict) or not config.get("quant_method"):
        return {}
    method = str(config["quant_method"])
    bits = config.get("bits") or config.get("w_bit")
    for scheme in weight_schemes(config):  # compressed-tensors
        bits = bits or scheme.get("num_bits")
    if bits is None and "fp8" in method:
        bits = 8
    if bits is None and method == "mxfp4":  # gpt-oss: 4-bit E2M1 values, one E8M0 scale per 32
        bits = 4
    return {"quantization": method, "quantization_bits": bits}


def estimate_parameters(arch: Architecture) -> int:
    """Parameters of a Llama-style decoder from its shape (attention, gated MLP or experts, norms, embeddings)."""
    q_and_o = 2 * arch.hidden_size * arch.num_attention_heads * arch.head_dim
    k_and_v = 2 * arch.hidden_size * arch.num_key_value_heads * arch.head_dim
    experts = arch.num_local_experts or 1
    mlp = 3 * arch.hidden_size * arch.intermediate_size * experts
    router = arch.hidden_size * experts if arch.num_local_experts else 0
    per_layer = q_and_o + k_and_v + mlp + router + 2 * arch.hidden_size
    embeddings = arch.embedding_parameters * (1 if arch.tie_word_embeddings else 2)
    return arch.num_hidden_layers * per_layer + embeddings + arch.hidden_size


def _unreadable(path: Path, reason: str) -> ConfigIssue:
    return ConfigIssue(
        "model.config_json",
        f"cannot read {show(str(path))} ({reason}).",
        "point it at the model's config.json, relative to the project.",
    )


def _from_config_json(path_text: str, num_parameters: int | None) -> Architecture:
    path = Path(path_text)
    path = path if path.is_absolute() else PROJECT_DIR / path
    from reading.files import FileReadError, read_text
    from reading.numbers import loads

    try:
        data: dict[str, Any] = loads(read_text(path, MAX_CONFIG_JSON_BYTES, "a config.json is a few kilobytes"))  # type: ignore[assignment]
    except FileReadError as error:
        raise ConfigError([_unreadable(path, error.reason)]) from None
    except (ValueError, RecursionError) as error:  # not JSON, a number out of bounds, nested too deeply
        raise ConfigError([_unreadable(path, f"not a JSON config.json: {str(error)[:120] or 'nested too deeply'}")]) from None
    if not isinstance(data, dict):
        raise ConfigError(
            [
                ConfigIssue(
                    "model.config_json",
                    f"{show(str(path))} holds a JSON {type(data).__name__}, not the mapping of a config.json.",
                    "point it at the model's config.json, relative to the project.",
                )
            ]
        )
    try:
        return from_config_dict(data, num_parameters)
    except ValueError as error:
        raise ConfigError(
            [
                ConfigIssue(
                    "model.config_json",
                    f"{show(str(path))} lacks what the preflight needs: {error}".replace("\n", " "),
                    "use model.architecture instead.",
                )
            ]
        ) from None


# transformers' defaults for keys a nested text_config may leave out (gemma-3's has no vocab_size and no
# max_position_embeddings): transformers src/transformers/models/gemma3/configuration_gemma3.py
# Gemma3TextConfig.__init__ (vocab_size 262_208, max_position_embeddings 131_072, sliding_window_pattern 6).
TEXT_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {"vocab_size": 262208, "max_position_embeddings": 131072, "sliding_window_pattern": 6},
}
# Other spellings of the same fact: Qwen3-MoE's `num_experts`, DeepSeek's `n_routed_experts`.
CONFIG_ALIASES = {"num_experts": "num_local_experts", "n_routed_experts": "num_local_experts"}


# The config.json keys of a checkpoint's non-text encoder (Gemma3, Mistral3, Llama4, LLaVA: `vision_config`; Qwen2-Audio:
# `audio_config`): vLLM serves such a checkpoint as multimodal (ModelConfig.is_multimodal_model) unless told otherwise.
ENCODER_CONFIG_KEYS = ("vision_config", "audio_config")


def from_config_dict(data: dict[str, Any], num_parameters: int | None) -> Architecture:
    """The architecture a config.json describes. Raises ValueError (pydantic's) when a key it needs is missing."""
    multimodal = any(isinstance(data.get(key), dict) for key in ENCODER_CONFIG_KEYS)
    if isinstance(data.get("text_config"), dict):  # multimodal checkpoints nest the language model's config
        text = data["text_config"]
        data = {**TEXT_DEFAULTS.get(str(text.get("model_type")), {}), **data, **text}
    known = set(ArchitectureConfig.model_fields)
    fields = {key: value for key, value in data.items() if key in known and value is not None}
    for alias, key in CONFIG_ALIASES.items():
        if data.get(alias) is not None and key not in fields:
            fields[key] = data[alias]
    if "torch_dtype" not in fields and data.get("dtype") in ("bfloat16", "float16", "float32"):
        fields["torch_dtype"] = data["dtype"]  # transformers >= 4.56 writes `dtype`
    derived = derived_max_model_len(data)
    if derived is not None:
        fields["max_position_embeddings"] = derived
    sliding = _sliding_layers(data)
    if sliding is not None:
        fields["num_sliding_window_layers"] = sliding
    fields.update(quantization_fields(data))
    if num_parameters:
        fields["num_parameters"] = num_parameters
    shape = from_config(ArchitectureConfig.model_validate({**fields, "multimodal": multimodal}))
    return replace(shape, fp8_weights=stores_fp8_weights(data))


ROPE_KEEPS_LENGTH = ("su", "longrope", "llama3")  # RoPE types whose factor vLLM does not multiply the length by


def derived_max_model_len(data: dict[str, Any]) -> int | None:
    """The longest context vLLM derives from config.json: max_position_embeddings scaled by the RoPE factor
    (yarn: original_max_position_embeddings x factor), except for the types that keep it and for gemma-3, whose
    length is scaled already (vllm-project/vllm vllm/config/model.py@0052a5b8 _get_and_verify_max_len)."""
    length, rope = data.get("max_position_embeddings"), data.get("rope_scaling") or data.get("rope_parameters")
    if not isinstance(length, int) or not isinstance(rope, dict) or "gemma3" in str(data.get("model_type")):
        return None
    kind = rope.get("rope_type") or rope.get("type")
    factor = rope.get("factor", 1.0)
    if kind in ROPE_KEEPS_LENGTH or not isinstance(factor, (int, float)):
        return None
    original = rope.get("original_max_position_embeddings") if kind == "yarn" else None
    return int((original if isinstance(original, int) else length) * factor)


def _sliding_layers(data: dict[str, Any]) -> int | None:
    """Layers with a sliding window: `layer_types` (transformers >= 4.53), else gemma-3's `sliding_window_pattern`
    (every Nth layer attends fully, Gemma3TextConfig), else None (the config does not say)."""
    if isinstance(data.get("layer_types"), list):
        return sum(1 for kind in data["layer_types"] if kind == "sliding_attention")
    pattern, layers = data.get("sliding_window_pattern"), data.get("num_hidden_layers")
    if isinstance(pattern, int) and pattern > 0 and isinstance(layers, int) and data.get("sliding_window"):
        return layers - layers // pattern
    return None
