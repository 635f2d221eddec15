"""The preflight's verdict as data: the source objects of each figure, nested by section, with the verdict.

The sections are the objects the accounting produced (the resolved engine, the memory estimate, the KV
capacity, the concurrency target, the plain estimate, the startup budget), not copies of their fields;
`as_dict` rounds them once for JSON and text, so every printed figure comes from one place.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from preflight.checks import ConcurrencyTarget
from preflight.delivery import DeliveryBudget
from preflight.kv_cache import KvCapacity
from preflight.memory import GIB, MemoryEstimate
from preflight.plain import PlainKvEstimate
from preflight.resolve import ResolvedEngine


class Sizing(Protocol):
    """The preflight -> components seam: the only figures components read. A PreflightReport is one; so is
    any small object with these four (tests/test_stack.py builds every stack from such an object)."""

    @property
    def resolved(self) -> ResolvedEngine: ...  # the engine values rendered as flags (and max_num_seqs, utilization)

    @property
    def weights_on_disk_gib(self) -> float: ...  # cache volume, download and load budgets

    # The two Sizing figures that live in a section, read through to it (components see only Sizing).
    @property
    def kv_cache_tokens(self) -> int: ...  # KEDA and alert capacity

    @property
    def target_tokens_per_request(self) -> int: ...  # the concurrency target KEDA scales on


@dataclass(frozen=True)
class Verdict:
    fits: bool
    reasons: tuple[str, ...]  # why the stack is blocked (empty when it fits)
    warnings: tuple[str, ...]
    suggestions: tuple[str, ...]  # what would fit instead
    suggested_changes: tuple[dict[str, Any], ...]  # each suggestion as stack keys, e.g. {"engine": {...}}


@dataclass(frozen=True)
class PreflightReport:
    verdict: Verdict
    resolved: ResolvedEngine = field(repr=False, compare=False)  # the gpu and engine sections
    kv_cache_dtype: str  # as configured (the engine section)
    memory: MemoryEstimate
    weights_on_disk_gib: float  # checkpoint size, for the cache volume and load time (rounded to 3 places)
    capacity: KvCapacity
    target: ConcurrencyTarget
    margin_percent: float  # KV tokens left after the concurrency target, as a share of capacity
    plain: PlainKvEstimate  # whole model, all layers and heads (the capacity-guide figure)
    startup: DeliveryBudget | None = None  # the startup budget term by term, for the delivery mode

    # The two Sizing figures that live in a section, read through to it (components see only Sizing).
    @property
    def kv_cache_tokens(self) -> int:
        return self.capacity.kv_cache_tokens

    @property
    def target_tokens_per_request(self) -> int:
        return self.target.tokens_per_request

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready sections, every GiB figure rounded to 3 places (the text prints these same values)."""
        data = {
            "verdict": _verdict_dict(self.verdict),
            "gpu": _gpu_dict(self),
            "engine": _engine_dict(self.resolved, self.kv_cache_dtype),
            "memory": _memory_dict(self.memory, self.weights_on_disk_gib),
            "capacity": _capacity_dict(self.capacity),
            "target": _target_dict(self),
            "startup": None if self.startup is None else asdict(self.startup),
        }
        checkpoint = self.resolved.architecture.checkpoint
        if checkpoint is not None:  # read from safetensors headers (a model from the Hub): how it is stored
            source = self.resolved.architecture.source
            data["checkpoint"] = {"source": source, "bytes": checkpoint.total_bytes, "formats": list(checkpoint.formats)}
        return data


def _verdict_dict(verdict: Verdict) -> dict[str, Any]:
    data = asdict(verdict)
    return {key: list(value) if isinstance(value, tuple) else value for key, value in data.items()}


def _gpu_dict(report: PreflightReport) -> dict[str, Any]:
    gpu = report.resolved.gpu
    return {
        "name": gpu.name,
        "interconnect": gpu.interconnect,  # nvswitch / nvlink-bridge / pcie / none: which TP buffers vLLM sets up
        "memory_gib": gpu.memory_gib,  # total per GPU as CUDA reports it
        "gpu_memory_utilization": report.resolved.gpu_memory_utilization,
        "requested_gib": round(report.memory.requested_gib, 3),  # memory_gib x gpu_memory_utilization
    }


def _engine_dict(resolved: ResolvedEngine, kv_cache_dtype: str) -> dict[str, Any]:
    return {
        "vllm_version": resolved.release.version,
        "memory_era": resolved.release.era.value,
        "tensor_parallel_size": resolved.tensor_parallel_size,
        "pipeline_parallel_size": resolved.pipeline_parallel_size,
        "gpus_per_replica": resolved.gpus_per_replica,
        "nnodes": resolved.nnodes,  # nodes one replica spans (a LeaderWorkerSet group when > 1)
        "max_model_len": resolved.max_model_len,
        "max_num_seqs": resolved.max_num_seqs,
        "max_num_batched_tokens": resolved.max_num_batched_tokens,
        "block_size": resolved.block_size,
        "kv_cache_dtype": kv_cache_dtype,
    }


def _memory_dict(memory: MemoryEstimate, weights_on_disk_gib: float) -> dict[str, Any]:
    figures: dict[str, Any] = {
        "weights_on_disk_gib": weights_on_disk_gib,
        "weights_gib_per_gpu": round(memory.weights_gib_per_gpu, 3),  # the largest pipeline stage's share
        "activation_gib": round(memory.activation_gib, 3),
        "sampler": memory.sampler,  # flashinfer / pytorch (the release default or VLLM_USE_FLASHINFER_SAMPLER)
        "non_torch_gib": memory.non_torch_gib,
        "cuda_graph_gib": round(memory.cuda_graph_gib, 3),  # subtracted only where the version does (>= 0.20)
        "after_profiling_gib": round(memory.after_profiling_gib, 3),  # graphs captured outside the budget (< 0.20)
        "draft_gib_per_gpu": round(memory.draft_gib_per_gpu, 3),  # speculative-decoding draft weights
        "kv_cache_gib_per_gpu": round(memory.kv_cache_gib_per_gpu, 3),
        "per_token_kv_bytes": memory.per_token_kv_bytes,  # per GPU, summed over this GPU's layers
    }
    if memory.lora is not None:  # only with LoRA adapters, so the other stacks' reports keep their keys
        figures["lora"] = {
            "gib_per_gpu": round(memory.lora_gib_per_gpu, 3),  # allocated at load, before the KV cache
            "max_loras": memory.lora.max_loras,
            "max_lora_rank": memory.lora.max_lora_rank,
        }
    return figures


def _capacity_dict(capacity: KvCapacity) -> dict[str, Any]:
    return {
        "num_gpu_blocks": capacity.num_gpu_blocks,
        "kv_cache_tokens": capacity.kv_cache_tokens,  # vLLM's "GPU KV cache size": blocks / kv_groups x block
        "kv_groups": capacity.kv_groups,
        "max_concurrency_at_max_model_len": round(capacity.max_concurrency_at_max_model_len, 2),
        "longest_request_tokens": capacity.longest_request_tokens,  # sliding-window layers keep only their window
    }


def _target_dict(report: PreflightReport) -> dict[str, Any]:
    target = report.target
    return {
        "requests": target.requests,
        "tokens_per_request": target.tokens_per_request,
        "kv_tokens": target.requests * target.tokens_per_request,
        "margin_percent": round(report.margin_percent, 1),
        "plain_kv_bytes_per_token": report.plain.bytes_per_token,
        "plain_kv_gib_for_target": round(report.plain.total_bytes / GIB, 3),
    }
