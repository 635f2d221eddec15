"""`model`: which model to serve, from the catalog or described inline."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from config.base import ConfigGroup
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
    multimodal: bool = Field(
        False,
        description="The checkpoint has a vision or audio encoder (config.json's vision_config or audio_config): "
        "vLLM builds and warms its processor at start-up, which the start-up fit counts.",
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

    @model_validator(mode="after")
    def _shape_is_possible(self) -> ArchitectureConfig:
        """Shapes no checkpoint has, which would size a model vLLM cannot build. The rules are the ones vLLM's
        attention and MoE layers assume: query heads grouped evenly over the key/value heads, a per-head size
        that divides the width when head_dim is not given, top-k within the experts."""
        for problem in _impossible_shape(self):
            raise ValueError(problem)
        return self


def _impossible_shape(arch: ArchitectureConfig) -> list[str]:
    heads, kv_heads = arch.num_attention_heads, arch.num_key_value_heads or arch.num_attention_heads
    problems = []
    if heads % kv_heads:
        problems.append(
            f"num_attention_heads ({heads}) is not a multiple of num_key_value_heads ({kv_heads}): each key/value "
            "head serves a whole group of query heads. Fix: copy both from the model's config.json."
        )
    if arch.head_dim is None and arch.hidden_size % heads:
        problems.append(
            f"hidden_size ({arch.hidden_size}) is not a multiple of num_attention_heads ({heads}), and head_dim is "
            "not given. Fix: set head_dim from the model's config.json."
        )
    if arch.num_experts_per_tok is not None and arch.num_experts_per_tok > (arch.num_local_experts or 0):
        problems.append(
            f"num_experts_per_tok ({arch.num_experts_per_tok}) exceeds num_local_experts "
            f"({arch.num_local_experts}). Fix: set num_local_experts, and route to at most that many experts."
        )
    if arch.num_parameters is not None and arch.num_parameters < arch.vocab_size * arch.hidden_size:
        problems.append(
            f"num_parameters ({arch.num_parameters:,}) is fewer than the embedding alone holds (vocab_size x "
            f"hidden_size = {arch.vocab_size * arch.hidden_size:,}). Fix: give the total parameter count (the "
            "model card's), e.g. 8030261248."
        )
    return problems


class ModelConfig(ConfigGroup):
    """The model to serve."""

    id: HubRepoId = Field(min_length=1, description="Hugging Face repository id, e.g. meta-llama/Llama-3.1-70B-Instruct.")
    revision: Revision | None = Field(
        None, description="Git revision (commit sha or tag) to download and serve; pin it in production."
    )
    architecture: ArchitectureConfig | None = Field(
        None, description="Architecture inline, for a model outside the catalog (else read from the Hub)."
    )
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
        return self
