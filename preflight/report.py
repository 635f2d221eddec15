"""The preflight's verdict as data: every figure with its unit, reasons to block, warnings, and fixes."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from preflight.delivery import DeliveryBudget
from preflight.resolve import ResolvedEngine


class Sizing(Protocol):
    """The preflight -> components seam: the only figures components read. A PreflightReport is one; so is
    any small object with these four (tests/test_stack.py builds every stack from such an object)."""

    @property
    def resolved(self) -> ResolvedEngine: ...  # the engine values rendered as flags (and max_num_seqs, utilization)

    @property
    def weights_on_disk_gib(self) -> float: ...  # cache volume, download and load budgets

    @property
    def kv_cache_tokens(self) -> int: ...  # KEDA and alert capacity

    @property
    def target_tokens_per_request(self) -> int: ...  # the concurrency target KEDA scales on


@dataclass(frozen=True)
class PreflightReport:
    fits: bool
    reasons: tuple[str, ...]  # why the stack is blocked (empty when it fits)
    warnings: tuple[str, ...]
    suggestions: tuple[str, ...]  # what would fit instead
    suggested_changes: tuple[dict[str, Any], ...]  # each suggestion as stack keys, e.g. {"engine": {...}}
    gpu: str
    gpu_memory_gib: float  # total per GPU as CUDA reports it
    gpu_memory_utilization: float
    requested_gib: float  # gpu_memory_gib x gpu_memory_utilization
    vllm_version: str
    memory_era: str
    tensor_parallel_size: int
    pipeline_parallel_size: int
    gpus_per_replica: int
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int
    block_size: int
    kv_cache_dtype: str
    weights_on_disk_gib: float  # checkpoint size, for the cache volume and load time
    weights_gib_per_gpu: float  # the largest pipeline stage's share on one GPU
    activation_gib: float
    non_torch_gib: float
    cuda_graph_gib: float  # subtracted only where the version does (>= 0.21, not with enforce_eager)
    draft_gib_per_gpu: float  # speculative-decoding draft weights
    kv_cache_gib_per_gpu: float
    per_token_kv_bytes: int  # per GPU, summed over this GPU's layers
    num_gpu_blocks: int
    kv_cache_tokens: int
    max_concurrency_at_max_model_len: float
    target_requests: int
    target_tokens_per_request: int
    target_kv_tokens: int
    margin_percent: float  # KV tokens left after the concurrency target, as a share of capacity
    plain_kv_bytes_per_token: int  # whole model, all layers and heads (the capacity-guide figure)
    plain_kv_gib_for_target: float
    resolved: ResolvedEngine = field(repr=False, compare=False)
    startup: DeliveryBudget | None = None  # the startup budget term by term, for the delivery mode
    nnodes: int = 1  # nodes one replica spans (a LeaderWorkerSet group when > 1)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields (the resolved engine is left out; its values are already here)."""
        data = asdict(self)
        data.pop("resolved")
        data["reasons"] = list(self.reasons)
        data["warnings"] = list(self.warnings)
        data["suggestions"] = list(self.suggestions)
        data["suggested_changes"] = list(self.suggested_changes)
        return data
