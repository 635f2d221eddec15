"""What would fit instead: the largest max_model_len or max_num_seqs, or the TP / GPU product needed."""

from __future__ import annotations

from dataclasses import replace

from catalog.gpus import GPUS
from preflight.kv_cache import KvCapacity, blocks_per_request, kv_capacity, kv_layout, largest_fitting_tokens
from preflight.memory import MemoryInputs, estimate_memory


def memory_fits(inputs: MemoryInputs, requests: int, tokens: int) -> bool:
    """Weights, KV budget, one max_model_len request and the concurrency target all fit."""
    memory = estimate_memory(inputs)
    if memory.kv_cache_gib_per_gpu <= 0:
        return False
    capacity = kv_capacity(inputs, memory.kv_cache_gib_per_gpu)
    per_request = blocks_per_request(inputs, kv_layout(inputs), tokens)
    return capacity.blocks_per_max_len_request <= capacity.num_gpu_blocks and \
        requests * per_request <= capacity.num_gpu_blocks


def suggestions(inputs: MemoryInputs, capacity: KvCapacity, requests: int, tokens: int,
                tp_sizes: list[int]) -> list[str]:
    found = []
    longest = largest_fitting_tokens(inputs, capacity.num_gpu_blocks) if capacity.num_gpu_blocks else 0
    if 0 < longest < inputs.max_model_len:
        found.append(f"engine.max_model_len {longest} is the longest single request this cache holds.")
    per_request = blocks_per_request(inputs, kv_layout(inputs), tokens)
    seqs = capacity.num_gpu_blocks // per_request if per_request else 0
    if 0 < seqs < requests:
        found.append(f"{seqs} concurrent requests of {tokens} tokens fit: set engine.max_num_seqs (or "
                     f"preflight.concurrency.requests) to {seqs}.")
    found += _parallel_or_gpu(inputs, requests, tokens, tp_sizes)
    if not inputs.kv_cache_dtype.startswith("fp8") and capacity.num_gpu_blocks:
        found.append("engine.kv_cache_dtype fp8 halves KV bytes per token (about twice the tokens), at a small "
                     "accuracy cost.")
    return found


def _parallel_or_gpu(inputs: MemoryInputs, requests: int, tokens: int, tp_sizes: list[int]) -> list[str]:
    found = []
    for tp in (size for size in tp_sizes if size > inputs.tensor_parallel_size):
        if memory_fits(replace(inputs, tensor_parallel_size=tp), requests, tokens):
            found.append(f"engine.tensor_parallel_size {tp} (gpu.count {tp * inputs.pipeline_parallel_size}) "
                         "fits with everything else unchanged.")
            break
    products = [gpu.name for gpu in GPUS.values() if gpu.memory_gib > inputs.gpu_memory_gib
                and memory_fits(replace(inputs, gpu_memory_gib=gpu.memory_gib), requests, tokens)]
    if products:
        found.append(f"gpu.product {' or '.join(products)} fits with the same parallelism.")
    return found
