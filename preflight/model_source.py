"""Turn the `model` group into one Architecture: from the catalog, inline, or a local config.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from catalog.models import INT4_G128_BYTES, MODELS, Architecture
from config.errors import ConfigError, ConfigIssue, show
from config.model import ArchitectureConfig, ModelConfig

PROJECT_DIR = Path(__file__).resolve().parent.parent
MAX_CONFIG_JSON_BYTES = 4 * 1024 * 1024  # Hugging Face config.json files are a few KB; multimodal ones < 100 KB


def resolve_architecture(model: ModelConfig) -> Architecture:
    """The architecture the preflight sizes. Raises ConfigError for an unreadable config_json."""
    if model.architecture is not None:
        return from_config(model.architecture)
    if model.config_json is not None:
        return _from_config_json(model.config_json, model.num_parameters)
    return MODELS[model.id]


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
    )
    params = arch.num_parameters or estimate_parameters(shape)
    return Architecture(**{**shape.__dict__, "num_parameters": params})


def _quantized_bytes(arch: ArchitectureConfig) -> float | None:
    """4-bit group-128 packing (AWQ/GPTQ layout) or one byte per weight for 8-bit and fp8 methods."""
    if arch.quantization is None:
        return None
    bits = arch.quantization_bits or 8
    return INT4_G128_BYTES if bits == 4 else 1.0


def quantization_fields(data: dict[str, Any]) -> dict[str, Any]:
    """`quantization` and `quantization_bits` from a config.json's quantization_config, if it has one."""
    config = data.get("quantization_config")
    if not isinstance(config, dict) or not config.get("quant_method"):
        return {}
    method = str(config["quant_method"])
    bits = config.get("bits") or config.get("w_bit")
    for group in (config.get("config_groups") or {}).values():  # compressed-tensors
        bits = bits or (group.get("weights") or {}).get("num_bits") if isinstance(group, dict) else bits
    if bits is None and "fp8" in method:
        bits = 8
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
    if isinstance(data.get("text_config"), dict):  # multimodal checkpoints nest the language model's config
        data = {**data, **data["text_config"]}
    known = set(ArchitectureConfig.model_fields)
    fields = {key: value for key, value in data.items() if key in known and value is not None}
    if isinstance(data.get("layer_types"), list):  # transformers >= 4.53 lists each layer's attention
        fields["num_sliding_window_layers"] = sum(1 for t in data["layer_types"] if t == "sliding_attention")
    fields.update(quantization_fields(data))
    if num_parameters:
        fields["num_parameters"] = num_parameters
    try:
        return from_config(ArchitectureConfig.model_validate(fields))
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
