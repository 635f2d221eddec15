"""The estimator's inputs from the engine group and the resolved engine."""

from __future__ import annotations

from collections.abc import Mapping

from catalog.models import MODELS
from config.engine import EngineConfig
from config.lora import LoraConfig
from preflight.lora import lora_shape
from preflight.memory import MemoryInputs
from preflight.quantization import runtime_quantization
from preflight.resolve import ResolvedEngine


def flashinfer_sampler(resolved: ResolvedEngine, extra_env: Mapping[str, str]) -> bool:
    """The sampler vLLM picks: VLLM_USE_FLASHINFER_SAMPLER=0/1 in vllm.extra_env, else the release's default
    (every catalog GPU has the compute capability and the > 16 SMs FlashInfer's sampler needs)."""
    value = extra_env.get("VLLM_USE_FLASHINFER_SAMPLER")
    if value is not None and value.strip() in ("0", "1"):
        return value.strip() == "1"
    return resolved.release.flashinfer_sampler_default


def tensor_parallel_on_nvlink(resolved: ResolvedEngine) -> bool:
    """Whether the TP group is one node's GPUs, all joined by NVLink: vLLM's TP ranks are contiguous, so the group
    spans nodes when it is larger than a node's share of the replica."""
    tp = resolved.tensor_parallel_size
    return tp <= resolved.gpus_per_node and resolved.gpu.fully_connected(tp)


def memory_inputs(
    engine: EngineConfig, resolved: ResolvedEngine, extra_env: Mapping[str, str], lora: LoraConfig
) -> MemoryInputs:
    speculative = engine.speculative
    draft = MODELS.get(speculative.model or "") if speculative and speculative.method == "draft_model" else None
    draft_tp = (speculative.draft_tensor_parallel_size if speculative else None) or resolved.tensor_parallel_size
    return MemoryInputs(
        arch=resolved.architecture,
        era=resolved.release.era,
        version=resolved.release.number,
        gpu_memory_gib=resolved.gpu.memory_gib,
        gpu_memory_utilization=resolved.gpu_memory_utilization,
        tensor_parallel_size=resolved.tensor_parallel_size,
        pipeline_parallel_size=resolved.pipeline_parallel_size,
        max_model_len=resolved.max_model_len,
        max_num_seqs=resolved.max_num_seqs,
        max_num_batched_tokens=resolved.max_num_batched_tokens,
        block_size=resolved.block_size,
        dtype=engine.dtype,
        quantization=runtime_quantization(resolved.architecture, engine.quantization),
        kv_cache_dtype=engine.kv_cache_dtype,
        enforce_eager=resolved.enforce_eager,
        fully_connected=tensor_parallel_on_nvlink(resolved),
        flashinfer_sampler=flashinfer_sampler(resolved, extra_env),
        draft=draft,
        draft_tensor_parallel_size=draft_tp,
        lora=lora_shape(lora),
    )
