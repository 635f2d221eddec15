"""Resolve every engine setting to the value vLLM will use, so flags, preflight and thresholds agree.

Defaults vLLM would pick itself (max_num_seqs, max_num_batched_tokens, prefix caching, max_model_len) are
computed here once and then rendered explicitly as flags.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.gpus import GpuProduct
from catalog.models import Architecture
from catalog.vllm_versions import RELEASES, VllmRelease, default_batch_limits
from config.gpu import GpuConfig
from preflight.model_source import resolve_architecture
from preflight.parts import SizingInputs


@dataclass(frozen=True)
class ResolvedEngine:
    release: VllmRelease
    architecture: Architecture
    gpu: GpuProduct  # the acceptable product with the least memory: the one the preflight sizes for
    tensor_parallel_size: int
    pipeline_parallel_size: int
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int
    gpu_memory_utilization: float
    block_size: int
    enable_prefix_caching: bool
    enforce_eager: bool
    served_model_name: str
    nnodes: int = 1  # nodes one replica spans (--nnodes)

    @property
    def gpus_per_replica(self) -> int:
        return self.tensor_parallel_size * self.pipeline_parallel_size

    @property
    def gpus_per_node(self) -> int:
        return self.gpus_per_replica // self.nnodes


def smallest_gpu(gpu: GpuConfig) -> GpuProduct:
    return min((gpu.spec_for(name) for name in gpu.products), key=lambda product: product.memory_gib)


def vllm_block_size(release: VllmRelease, arch: Architecture, gpu: GpuProduct) -> int:
    """The KV block size vLLM picks when --block-size is absent: CacheConfig.DEFAULT_BLOCK_SIZE 16, unless the
    chosen attention backend does not support it: FlashMLA (MLA models on the V1 engine, Hopper/Blackwell)
    supports only 64 (vllm 0.33.0 config/cache.py:185, v1/attention/backend.py:155
    get_preferred_block_size, v1/attention/backends/mla/flashmla.py:57; older releases forced it in
    platforms/cuda.py: "Forcing kv cache block size to 64 for FlashMLA backend", calibration notes docs/sources.md §S4)."""
    flash_mla = arch.uses_mla and not release.is_v0_engine and gpu.family in ("hopper", "blackwell")
    return 64 if flash_mla else 16


def resolve_engine(stack: SizingInputs) -> ResolvedEngine:
    release = RELEASES[stack.vllm.version]
    arch = resolve_architecture(stack.model)
    gpu = smallest_gpu(stack.gpu)
    engine = stack.engine
    max_model_len = engine.max_model_len or arch.max_position_embeddings
    any_a100 = any(stack.gpu.spec_for(name).is_a100 for name in stack.gpu.products)
    seqs_default, tokens_default = default_batch_limits(
        release.number,
        gpu.memory_gib,
        any_a100,
        max_model_len,
        device_name=gpu.gfd_product.replace("-", " "),
        release=release.version,
        chunked_prefill_allowed=not arch.num_sliding_window_layers and engine.speculative is None,
    )
    prefix = release.prefix_caching_default if engine.enable_prefix_caching is None else engine.enable_prefix_caching
    return ResolvedEngine(
        release=release,
        architecture=arch,
        gpu=gpu,
        tensor_parallel_size=engine.tensor_parallel_size,
        pipeline_parallel_size=engine.pipeline_parallel_size,
        max_model_len=max_model_len,
        max_num_seqs=engine.max_num_seqs or seqs_default,
        max_num_batched_tokens=engine.max_num_batched_tokens or tokens_default,
        gpu_memory_utilization=engine.gpu_memory_utilization,
        block_size=engine.block_size or vllm_block_size(release, arch, gpu),
        enable_prefix_caching=prefix,
        enforce_eager=engine.enforce_eager,
        served_model_name=stack.served_model_name,
        nnodes=engine.nnodes,
    )
