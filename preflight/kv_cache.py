"""From KV memory to blocks, tokens and concurrency, as vLLM's KV-cache manager does it.

Uniform models (every layer full attention): num_blocks = available // page // layers, and the cache holds
num_blocks x block_size tokens (v1/core/kv_cache_utils.py get_num_blocks). Hybrid models (sliding-window
plus full layers, V1 only) share one pool between groups of `group_size` layers; a sliding-window layer
needs only its window per request (SlidingWindowSpec.max_memory_usage_bytes). V0 gave every layer the
full context (worker/cache_engine.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog.vllm_versions import MemoryEra
from preflight.memory import (
    GIB,
    MemoryInputs,
    draft_kv_bytes_per_token,
    kv_bytes_per_element,
    kv_bytes_per_token_per_layer,
    layers_per_stage,
)


@dataclass(frozen=True)
class KvLayout:
    """How this GPU's layers are grouped in the KV pool."""

    full_layers: int
    sliding_layers: int
    group_size: int  # layers whose pages make up one block of the shared pool
    full_groups: int
    sliding_groups: int

    @property
    def groups(self) -> int:
        return self.full_groups + self.sliding_groups


@dataclass(frozen=True)
class KvCapacity:
    """Every capacity figure from one pool: its blocks, the bytes of one block, and what a request occupies."""

    num_gpu_blocks: int
    block_bytes: int  # one pool block on this GPU: group_size layers' pages (and the draft's layers)
    kv_groups: int  # KV-cache groups sharing the pool (1 for a uniform model)
    kv_cache_tokens: int  # what vLLM logs as "GPU KV cache size: N tokens" (blocks / groups x block_size)
    blocks_per_max_len_request: int
    max_concurrency_at_max_model_len: float
    longest_request_tokens: int  # the longest single request the pool holds (sliding windows stay small)

    def gib_for_blocks(self, blocks: int) -> float:
        """GiB per GPU that `blocks` pool blocks take: the same bytes the pool was cut into."""
        return blocks * self.block_bytes / GIB


def kv_layout(inputs: MemoryInputs) -> KvLayout:
    stage_layers = layers_per_stage(inputs.arch.num_hidden_layers, inputs.pipeline_parallel_size)
    share = inputs.arch.num_sliding_window_layers / inputs.arch.num_hidden_layers
    sliding = round(stage_layers * share)
    # V0 gave sliding layers the full context; with a draft model we size as uniform too (conservative).
    hybrid_aware = inputs.era not in (MemoryEra.V0_LEGACY, MemoryEra.V0) and inputs.draft is None
    if not hybrid_aware or sliding == 0 or sliding == stage_layers:
        return KvLayout(stage_layers, 0, stage_layers, 1, 0)
    full = stage_layers - sliding
    small, large = min(full, sliding), max(full, sliding)
    group_size = large if large < 1.25 * small else small  # kv_cache_utils: fewer padding layers
    return KvLayout(full, sliding, group_size, math.ceil(full / group_size), math.ceil(sliding / group_size))


def blocks_per_request(inputs: MemoryInputs, layout: KvLayout, tokens: int) -> int:
    """Blocks of the shared pool that one request of `tokens` tokens occupies."""
    block = inputs.block_size
    full = layout.full_groups * math.ceil(tokens / block)
    if not layout.sliding_groups:
        return full
    window = inputs.arch.sliding_window or tokens
    span = min(window - 1 + inputs.max_num_batched_tokens, tokens)
    return full + layout.sliding_groups * (math.ceil(span / block) + 1)


def kv_capacity(inputs: MemoryInputs, kv_cache_gib: float) -> KvCapacity:
    layout = kv_layout(inputs)
    element = kv_bytes_per_element(inputs.dtype, inputs.kv_cache_dtype)
    layer_page = inputs.block_size * kv_bytes_per_token_per_layer(inputs.arch, inputs.tensor_parallel_size, element)
    # One pool block holds group_size layers' pages; a draft model's layers ride along in every block.
    block_bytes = layer_page * layout.group_size + inputs.block_size * draft_kv_bytes_per_token(inputs)
    available = max(kv_cache_gib, 0.0) * GIB
    num_blocks = int(available // block_bytes)
    tokens = num_blocks // layout.groups * inputs.block_size
    per_request = blocks_per_request(inputs, layout, inputs.max_model_len)
    concurrency = num_blocks / per_request if per_request else 0.0
    longest = largest_fitting_tokens(inputs, num_blocks)
    return KvCapacity(num_blocks, block_bytes, layout.groups, tokens, per_request, concurrency, longest)


def largest_fitting_tokens(inputs: MemoryInputs, num_blocks: int) -> int:
    """The longest single request the pool can hold (vLLM's "estimated maximum model length"). A request takes at
    least one block per block_size tokens of its full-attention layers, so num_blocks x block_size bounds it."""
    layout = kv_layout(inputs)
    low, high = 0, num_blocks * inputs.block_size
    while low < high:  # blocks_per_request grows with tokens, so bisect
        middle = (low + high + 1) // 2
        if blocks_per_request(inputs, layout, middle) <= num_blocks:
            low = middle
        else:
            high = middle - 1
    return low
