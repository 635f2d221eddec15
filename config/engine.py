"""`engine`: vLLM engine arguments, named as vLLM names them (`vllm serve --help`, EngineArgs)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from catalog.models import MODELS
from config.base import ConfigGroup
from config.errors import model_hint, show
from config.syntax import ExtraArg, PositiveInt, Revision, ServedModelName

# vLLM --quantization values this program can size (weight bytes per parameter known).
Quantization = Literal["fp8", "awq", "awq_marlin", "gptq", "gptq_marlin", "bitsandbytes"]
KvCacheDtype = Literal["auto", "fp8", "fp8_e4m3", "fp8_e5m2"]
Dtype = Literal["auto", "half", "float16", "bfloat16", "float", "float32"]


class SpeculativeConfig(ConfigGroup):
    """Speculative decoding: rendered as --speculative-config (current) or --speculative-model (0.7.x)."""

    method: Literal["ngram", "draft_model"] = Field(description="ngram (prompt lookup) or a draft model.")
    num_speculative_tokens: PositiveInt = Field(description="Tokens proposed per step.")
    model: str | None = Field(None, description="Draft model (catalog id) for method draft_model.")
    revision: Revision | None = Field(None, description="Draft model revision to download.")
    prompt_lookup_max: PositiveInt | None = Field(None, description="ngram: longest n-gram to match.")
    prompt_lookup_min: PositiveInt | None = Field(None, description="ngram: shortest n-gram to match.")
    draft_tensor_parallel_size: PositiveInt | None = Field(
        None, description="Tensor parallel size of the draft model (1 or the target's)."
    )

    @field_validator("model")
    @classmethod
    def _draft_in_catalog(cls, value: str | None) -> str | None:
        if value is not None and value not in MODELS:
            hint = model_hint(value, list(MODELS))
            raise ValueError(
                f"draft model {show(value)} is not in the catalog{' (' + hint + ')' if hint else ''}; "
                "the preflight must size its weights and KV cache. Fix: pick a catalog model."
            )
        return value

    @model_validator(mode="after")
    def _draft_model_named(self) -> SpeculativeConfig:
        if self.method == "draft_model" and not self.model:
            raise ValueError(
                "method draft_model needs engine.speculative.model. "
                "Fix: name the draft model, e.g. meta-llama/Llama-3.1-8B-Instruct."
            )
        if self.method == "ngram" and self.model:
            raise ValueError(
                "method ngram takes no draft model. Fix: remove engine.speculative.model or set method: draft_model."
            )
        return self


class EngineConfig(ConfigGroup):
    """vLLM engine arguments. Every one is rendered explicitly, so the preflight and vLLM agree."""

    tensor_parallel_size: PositiveInt = Field(1, description="--tensor-parallel-size: GPUs each layer is split over.")
    pipeline_parallel_size: PositiveInt = Field(1, description="--pipeline-parallel-size: stages the layers are split into.")
    # Not PositiveInt: its own le (int32) would override this one (pydantic keeps the last Le of a field).
    nnodes: int = Field(
        1,
        gt=0,
        le=64,
        description="--nnodes: nodes one replica spans (vLLM's native multi-node mode, a LeaderWorkerSet "
        "group); must divide tensor_parallel_size x pipeline_parallel_size.",
    )
    max_model_len: PositiveInt | None = Field(
        None, description="--max-model-len: longest request (prompt + output); defaults to the model's maximum."
    )
    gpu_memory_utilization: float = Field(
        0.90, gt=0, le=1, description="--gpu-memory-utilization: share of each GPU's memory vLLM may use."
    )
    max_num_seqs: PositiveInt | None = Field(
        None, description="--max-num-seqs: requests in one batch; defaults to vLLM's choice for the GPU and version."
    )
    max_num_batched_tokens: PositiveInt | None = Field(
        None, description="--max-num-batched-tokens: tokens per scheduler step; defaults to vLLM's choice."
    )
    dtype: Dtype = Field("auto", description="--dtype for weights and activations.")
    quantization: Quantization | None = Field(
        None,
        description="--quantization method of the checkpoint; usually leave unset (vLLM reads the checkpoint's). "
        "For an AWQ or GPTQ checkpoint on Ampere, Ada, Hopper or newer, awq or gptq forces vLLM's slow kernel: "
        "use awq_marlin or gptq_marlin (what vLLM picks when unset).",
    )
    kv_cache_dtype: KvCacheDtype = Field("auto", description="--kv-cache-dtype; fp8 halves KV bytes per token.")
    block_size: Literal[8, 16, 32, 64, 128] | None = Field(
        None,
        description="--block-size: tokens per KV-cache block; rendered only when set (else vLLM picks: 16 on "
        "CUDA, 64 for FlashMLA).",
    )
    enable_prefix_caching: bool | None = Field(
        None, description="--enable-prefix-caching / --no-enable-prefix-caching; defaults to the version's default."
    )
    enforce_eager: bool = Field(False, description="--enforce-eager: no CUDA graphs (slower; for debugging OOM starts).")
    served_model_name: ServedModelName | None = Field(
        None, description="--served-model-name: the name clients send and the Prometheus model_name label."
    )
    attention_backend: str | None = Field(
        None, description="Attention backend (--attention-backend, or VLLM_ATTENTION_BACKEND on 0.7.x)."
    )
    speculative: SpeculativeConfig | None = Field(None, description="Speculative decoding.")
    extra_args: tuple[ExtraArg, ...] = Field(
        (), description="Escape hatch: more vllm serve flags. Flags this program renders are rejected here."
    )

    @property
    def gpus_per_replica(self) -> int:
        return self.tensor_parallel_size * self.pipeline_parallel_size

    @property
    def gpus_per_node(self) -> int:
        """GPUs each pod of a replica requests: all of them with one node, a share with several."""
        return self.gpus_per_replica // self.nnodes
