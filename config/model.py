"""`model`: which model to serve, from the catalog or described inline."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from catalog.models import MODELS
from config.base import ConfigGroup
from config.errors import show
from config.syntax import HubRepoId, MountPath, NonNegativeInt, Revision
from config.syntax import Quantity as PositiveInt


class ArchitectureConfig(ConfigGroup):
    """A model's architecture with the keys of its Hugging Face `config.json`."""

    num_hidden_layers: PositiveInt = Field(description="Transformer layers.")
    num_attention_heads: PositiveInt = Field(description="Query heads per layer.")
    num_key_value_heads: PositiveInt | None = Field(
        None, description="KV heads per layer (grouped-query attention); defaults to num_attention_heads."
    )
    head_dim: PositiveInt | None = Field(None, description="Per-head size; defaults to hidden_size / num_attention_heads.")
    hidden_size: PositiveInt = Field(description="Model width.")
    intermediate_size: PositiveInt = Field(description="MLP width (per expert for MoE models).")
    vocab_size: PositiveInt = Field(description="Vocabulary size.")
    max_position_embeddings: PositiveInt = Field(description="Longest context the model supports.")
    num_parameters: PositiveInt | None = Field(
        None, description="Total parameters (from the model card); estimated from the shape when omitted."
    )
    torch_dtype: Literal["bfloat16", "float16", "float32"] = Field("bfloat16", description="Dtype the checkpoint is stored in.")
    tie_word_embeddings: bool = Field(False, description="The LM head shares the input embedding.")
    sliding_window: PositiveInt | None = Field(None, description="Sliding-window size, for models that use one.")
    num_sliding_window_layers: NonNegativeInt = Field(
        0, description="How many layers use the sliding window (the rest attend to the full context)."
    )
    num_local_experts: PositiveInt | None = Field(None, description="Experts per MoE layer.")
    num_experts_per_tok: PositiveInt | None = Field(None, description="Experts each token is routed to.")
    kv_lora_rank: PositiveInt | None = Field(None, description="MLA latent rank (DeepSeek-V2/V3 style).")
    qk_rope_head_dim: PositiveInt | None = Field(None, description="MLA rotary head size.")
    quantization: str | None = Field(
        None,
        description=(
            "The checkpoint's quantization_config.quant_method (awq, gptq, fp8, compressed-tensors, "
            "...); omit for a 16-bit checkpoint. Sizes the download and the GPU weights."
        ),
    )
    quantization_bits: Literal[4, 8] | None = Field(
        None, description="Bits per quantized weight in the checkpoint (quantization_config bits); 8 for fp8."
    )

    @model_validator(mode="after")
    def _layers_add_up(self) -> ArchitectureConfig:
        if self.num_sliding_window_layers > self.num_hidden_layers:
            raise ValueError(
                f"num_sliding_window_layers ({self.num_sliding_window_layers}) exceeds num_hidden_layers "
                f"({self.num_hidden_layers}). Fix: give at most num_hidden_layers sliding-window layers."
            )
        if self.num_sliding_window_layers and self.sliding_window is None:
            raise ValueError(
                "num_sliding_window_layers is set but sliding_window is not. "
                "Fix: set sliding_window to the model's window size."
            )
        if self.quantization and self.quantization_bits is None and "fp8" not in self.quantization:
            raise ValueError(
                f"quantization {self.quantization!r} needs quantization_bits (4 or 8, the "
                "quantization_config's bits). Fix: copy it from the checkpoint's config.json."
            )
        if (self.kv_lora_rank is None) != (self.qk_rope_head_dim is None):
            raise ValueError(
                "multi-head latent attention needs both kv_lora_rank and qk_rope_head_dim "
                "(the latent cache holds kv_lora_rank + qk_rope_head_dim values per token and layer). "
                "Fix: copy both from the model's config.json, or neither for a non-MLA model."
            )
        return self


class ModelConfig(ConfigGroup):
    """The model to serve."""

    id: HubRepoId = Field(min_length=1, description="Hugging Face repository id, e.g. meta-llama/Llama-3.1-70B-Instruct.")
    revision: Revision | None = Field(
        None, description="Git revision (commit sha or tag) to download and serve; pin it in production."
    )
    architecture: ArchitectureConfig | None = Field(None, description="Architecture inline, for a model outside the catalog.")
    config_json: str | None = Field(
        None, description="Path to the model's config.json (relative to the project), for a model outside the catalog."
    )
    num_parameters: PositiveInt | None = Field(
        None, description="Total parameters, with config_json (config.json does not carry it)."
    )
    local_path: MountPath | None = Field(
        None, description="Path of a model already on the cache volume; nothing is downloaded."
    )
    trust_remote_code: bool = Field(False, description="vLLM --trust-remote-code.")

    @model_validator(mode="after")
    def _one_architecture_source(self) -> ModelConfig:
        if self.architecture is not None and self.config_json is not None:
            raise ValueError("give either model.architecture or model.config_json, not both. Fix: remove one of them.")
        if self.num_parameters is not None and self.config_json is None:
            raise ValueError(
                "model.num_parameters goes with model.config_json. Fix: put num_parameters inside model.architecture instead."
            )
        if self.architecture is None and self.config_json is None and self.id not in MODELS:
            raise ValueError(_unknown_model_message(self.id))
        return self


def _unknown_model_message(model_id: str) -> str:
    from config.errors import model_hint

    hint = model_hint(model_id, list(MODELS))
    catalog = ", ".join(MODELS)
    return (
        f"{show(model_id)} is not in the catalog and no architecture was given"
        f"{' (' + hint + ')' if hint else ''}. Fix: use a catalog model ({catalog}), or describe it "
        "with model.architecture (config.json keys) or model.config_json."
    )
