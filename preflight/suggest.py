"""What would fit instead: the largest max_model_len or max_num_seqs, the TP size, GPU product or settings needed.

Every suggestion is checked by re-running the whole preflight on the config with its change applied, so a
suggestion is only offered when that change alone makes the stack fit and meet its concurrency target. The
change is kept as data (`changes`, a nested mapping of stack keys) next to the sentence users read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from catalog.gpus import GPUS
from config.multinode import starts_native_multinode
from preflight.checks import node_gpu_limit, valid_tp_sizes
from preflight.evaluate import Evaluation, evaluate
from preflight.parts import SizingInputs

MAX_GPU_SUGGESTIONS = 3
MAX_SUGGESTED_NODES = 8  # nodes per replica tried for a multi-node layout
HIGHEST_SUGGESTED_UTILIZATION = 0.95  # above it the preflight warns


@dataclass(frozen=True)
class Suggestion:
    text: str
    changes: dict[str, Any]  # e.g. {"engine": {"max_model_len": 4096}}


def apply_changes(group: Any, changes: dict[str, Any]) -> Any:
    """A copy of a config group, or of the SizingInputs holding them, with nested changes applied (both are frozen)."""
    updates = {
        key: apply_changes(getattr(group, key), value)
        if isinstance(value, dict) and isinstance(getattr(group, key), BaseModel)
        else value
        for key, value in changes.items()
    }
    if isinstance(group, SizingInputs):
        return dataclasses.replace(group, **updates)
    return group.model_copy(update=updates)


def fits_with(stack: SizingInputs, changes: dict[str, Any]) -> bool:
    return evaluate(apply_changes(stack, changes)).clean


def suggestions(stack: SizingInputs, current: Evaluation) -> list[Suggestion]:
    tensor_parallel = _tensor_parallel(stack, current)
    found = [
        _longest_max_model_len(stack, current),
        _most_requests(stack, current),
        tensor_parallel,
        _utilization(stack, current),
        _fp8_kv_cache(stack, current),
        None if tensor_parallel else _multinode(stack, current),
    ]
    return [s for s in found if s is not None] + _gpu_products(stack, current)


def largest(lowest: int, highest: int, fits: Callable[[int], bool]) -> int | None:
    """The largest n in [lowest, highest] for which fits(n) holds, when it holds up to some limit."""
    if highest < lowest or not fits(lowest):
        return None
    low, high = lowest, highest
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(middle) else (low, middle - 1)
    return low


def _longest_max_model_len(stack: SizingInputs, current: Evaluation) -> Suggestion | None:
    """The longest max_model_len that fits, never below the target's request length (that would only shrink
    the target). When one request does not fit and the target fails too, the length the cache holds comes
    with the most concurrent requests that then fit."""
    floor = min(current.target.tokens_per_request, current.resolved.max_model_len - 1)
    top = current.resolved.max_model_len - 1
    length = largest(floor, top, lambda n: fits_with(stack, {"engine": {"max_model_len": n}}))
    if length is not None:
        return Suggestion(
            f"engine.max_model_len {length} is the longest that fits with everything else unchanged.",
            {"engine": {"max_model_len": length}},
        )
    if current.capacity.blocks_per_max_len_request <= current.capacity.num_gpu_blocks:
        return None  # one request fits; the request count is the lever (_most_requests)
    length = min(current.capacity.longest_request_tokens, top)
    own_target = stack.preflight.concurrency.requests is not None
    count = (
        largest(1, current.target.requests, lambda n: fits_with(stack, _with_length(length, _requests_change(own_target, n))))
        if length > 0
        else None
    )
    if count is None:
        return None
    key = "preflight.concurrency.requests" if own_target else "engine.max_num_seqs"
    return Suggestion(
        f"engine.max_model_len {length} with {key} {count} fits: the longest request this cache "
        f"holds, and {count} concurrent request{'s' if count != 1 else ''} of "
        f"{min(length, current.target.tokens_per_request)} tokens.",
        _with_length(length, _requests_change(own_target, count)),
    )


def _with_length(length: int, changes: dict[str, Any]) -> dict[str, Any]:
    engine = {**changes.get("engine", {}), "max_model_len": length}
    return {**changes, "engine": engine}


def _most_requests(stack: SizingInputs, current: Evaluation) -> Suggestion | None:
    """Fewer concurrent requests: the target's own count when the stack sets one, else max_num_seqs."""
    own_target = stack.preflight.concurrency.requests is not None
    key = "preflight.concurrency.requests" if own_target else "engine.max_num_seqs"
    top = current.target.requests if own_target else current.resolved.max_num_seqs
    count = largest(1, top - 1, lambda n: fits_with(stack, _requests_change(own_target, n)))
    if count is None:
        return None
    return Suggestion(
        f"{key} {count}: {count} concurrent requests of {current.target.tokens_per_request} tokens fit.",
        _requests_change(own_target, count),
    )


def _requests_change(own_target: bool, count: int) -> dict[str, Any]:
    return {"preflight": {"concurrency": {"requests": count}}} if own_target else {"engine": {"max_num_seqs": count}}


def _tensor_parallel(stack: SizingInputs, current: Evaluation) -> Suggestion | None:
    pp = current.resolved.pipeline_parallel_size
    for tp in valid_tp_sizes(current.resolved.architecture, node_gpu_limit(stack.gpu)):
        changes: dict[str, Any] = {"engine": {"tensor_parallel_size": tp}}
        if stack.gpu.count is not None:
            changes["gpu"] = {"count": tp * pp}
        if tp != current.resolved.tensor_parallel_size and fits_with(stack, changes):
            return Suggestion(
                f"engine.tensor_parallel_size {tp} (gpu.count {tp * pp}) fits with everything else unchanged.", changes
            )
    return None


def _multinode(stack: SizingInputs, current: Evaluation) -> Suggestion | None:
    """No layout fits one node: span nodes the way vLLM recommends, tensor parallel within a node and pipeline
    parallel across nodes (docs/multinode.md), with the fewest nodes that fit."""
    if stack.target != "kubernetes" or stack.engine.nnodes != 1 or not starts_native_multinode(stack.vllm.version):
        return None
    sizes = valid_tp_sizes(current.resolved.architecture, node_gpu_limit(stack.gpu))
    layers = current.resolved.architecture.num_hidden_layers
    for nodes in range(2, min(MAX_SUGGESTED_NODES, layers) + 1):
        changes = _multinode_changes(stack, sizes[-1], nodes)
        if changes is None:
            return None
        if fits_with(stack, changes):
            cache = "".join(f" and cache.{key} {value}" for key, value in changes.get("cache", {}).items())
            return Suggestion(
                f"engine.nnodes {nodes} with engine.tensor_parallel_size {sizes[-1]} and engine.pipeline_parallel_size "
                f"{nodes}{cache} fits: one replica spans {nodes} nodes of {sizes[-1]} GPUs (a LeaderWorkerSet group).",
                changes,
            )
    return None


def _multinode_changes(stack: SizingInputs, tp: int, nodes: int) -> dict[str, Any] | None:
    """The layout, and a ReadWriteMany copy every node of a group mounts: the stack's own class or claim, a bucket,
    or the profile's usual ReadWriteMany class. None when none is known (the change alone could not be deployed)."""
    changes: dict[str, Any] = {"engine": {"tensor_parallel_size": tp, "pipeline_parallel_size": nodes, "nnodes": nodes}}
    if stack.gpu.count is not None:
        changes["gpu"] = {"count": tp * nodes}
    cache: dict[str, Any] = {}
    if stack.cache.access_mode == "ReadWriteOnce":
        cache["access_mode"] = "ReadWriteMany"
    shared = stack.cache.existing_claim or stack.delivery.mode == "object_storage"
    if not (shared or stack.cache.storage_class_name):
        if stack.rwx_storage_class is None:
            return None
        cache["storage_class_name"] = stack.rwx_storage_class
    if stack.delivery.mode == "per_replica_volume":
        changes["delivery"] = {"mode": "shared_volume"}
    return {**changes, "cache": cache} if cache else changes


def _utilization(stack: SizingInputs, current: Evaluation) -> Suggestion | None:
    now = current.resolved.gpu_memory_utilization
    steps = range(round(now * 100) + 1, round(HIGHEST_SUGGESTED_UTILIZATION * 100) + 1)
    for share in (step / 100 for step in steps):
        changes = {"engine": {"gpu_memory_utilization": share}}
        if fits_with(stack, changes):
            return Suggestion(f"engine.gpu_memory_utilization {share} fits with everything else unchanged.", changes)
    return None


def _fp8_kv_cache(stack: SizingInputs, current: Evaluation) -> Suggestion | None:
    changes = {"engine": {"kv_cache_dtype": "fp8"}}
    if current.inputs.kv_cache_dtype.startswith("fp8") or not fits_with(stack, changes):
        return None
    return Suggestion(
        "engine.kv_cache_dtype fp8 fits: it halves KV bytes per token (about twice the tokens), at a small accuracy cost.",
        changes,
    )


def _gpu_products(stack: SizingInputs, current: Evaluation) -> list[Suggestion]:
    """Larger GPUs, smallest first. vLLM picks other batch defaults on some (1024 sequences on H100/H200), so
    when those break the fit, the current limits are pinned explicitly."""
    found: list[Suggestion] = []
    pinned = {"max_num_seqs": current.resolved.max_num_seqs, "max_num_batched_tokens": current.resolved.max_num_batched_tokens}
    alone = " alone (no gpu.also_accept)" if stack.gpu.also_accept else ""
    for gpu in sorted(GPUS.values(), key=lambda gpu: (gpu.memory_gib, gpu.name)):
        if gpu.memory_gib <= current.inputs.gpu_memory_gib or len(found) == MAX_GPU_SUGGESTIONS:
            continue
        changes: dict[str, Any] = {"gpu": {"product": gpu.name, "also_accept": (), "memory_gib": None, "label": None}}
        if fits_with(stack, changes):
            found.append(Suggestion(f"gpu.product {gpu.name}{alone} fits with the same parallelism.", changes))
        elif fits_with(stack, {**changes, "engine": pinned}):
            found.append(
                Suggestion(
                    f"gpu.product {gpu.name}{alone} fits with the same parallelism if engine.max_num_seqs "
                    f"{pinned['max_num_seqs']} and engine.max_num_batched_tokens {pinned['max_num_batched_tokens']} "
                    "are set (vLLM's defaults differ on that GPU).",
                    {**changes, "engine": pinned},
                )
            )
    return found
