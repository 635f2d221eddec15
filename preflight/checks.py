"""The preflight's rules: what blocks a stack, what only warns. Each message names the key, value and fix."""

from __future__ import annotations

from dataclasses import dataclass

from catalog.gpus import GPUS
from catalog.models import Architecture
from config.errors import show
from config.gpu import GpuConfig
from preflight.kv_cache import KvCapacity, blocks_per_request, kv_layout
from preflight.memory import MemoryEstimate, MemoryInputs
from preflight.parts import SizingInputs
from preflight.quantization import quantization_reason
from preflight.resolve import ResolvedEngine


@dataclass(frozen=True)
class ConcurrencyTarget:
    requests: int
    tokens_per_request: int
    blocks: int  # pool blocks the target occupies on one GPU
    policy: str


def concurrency_target(stack: SizingInputs, resolved: ResolvedEngine, inputs: MemoryInputs) -> ConcurrencyTarget:
    target = stack.preflight.concurrency
    requests = target.requests or resolved.max_num_seqs
    tokens = resolved.max_model_len if target.mode == "strict" else target.average_request_tokens
    tokens = min(tokens, resolved.max_model_len)
    blocks = requests * blocks_per_request(inputs, kv_layout(inputs), tokens)
    return ConcurrencyTarget(requests, tokens, blocks, target_policy(stack))


def target_policy(stack: SizingInputs) -> str:
    """A target the user asked for blocks; vLLM's own default max_num_seqs only warns (vLLM starts anyway)."""
    if stack.preflight.concurrency.policy is not None:
        return stack.preflight.concurrency.policy
    asked = stack.preflight.concurrency.requests is not None or stack.engine.max_num_seqs is not None
    return "block" if asked else "warn"


def _hub_commit(resolved: ResolvedEngine) -> str:
    """The commit the model's Hub facts were read at: what main held then."""
    commit = resolved.architecture.commit
    return f" (main was {commit} when the Hub was read)" if commit else ""


def structural_reasons(stack: SizingInputs, resolved: ResolvedEngine) -> list[str]:
    """Rules vLLM or the scheduler enforce regardless of memory."""
    reasons = _parallelism_reasons(stack, resolved)
    arch, mml = resolved.architecture, resolved.max_model_len
    quantization = quantization_reason(arch, stack.engine.quantization, stack.model.id)
    if quantization:
        reasons.append(quantization)
    if mml > arch.max_position_embeddings:
        reasons.append(
            f"engine.max_model_len ({mml}) exceeds the model's max_position_embeddings "
            f"({arch.max_position_embeddings}); vLLM refuses to start. Fix: set engine.max_model_len to at most "
            f"{arch.max_position_embeddings}."
        )
    if resolved.max_num_batched_tokens < resolved.max_num_seqs:
        reasons.append(
            f"engine.max_num_batched_tokens ({resolved.max_num_batched_tokens}) is below engine.max_num_seqs "
            f"({resolved.max_num_seqs}); vLLM's scheduler config rejects that. Fix: raise max_num_batched_tokens "
            f"to at least {resolved.max_num_seqs} or lower max_num_seqs."
        )
    v0_without_chunking = resolved.release.is_v0_engine and mml <= 32768
    if v0_without_chunking and resolved.max_num_batched_tokens < mml:
        reasons.append(
            f"engine.max_num_batched_tokens ({resolved.max_num_batched_tokens}) is below engine.max_model_len "
            f"({mml}); vLLM {resolved.release.version} (V0, no chunked prefill) refuses that. Fix: raise "
            f"max_num_batched_tokens to {mml} or remove it."
        )
    return reasons


def _parallelism_reasons(stack: SizingInputs, resolved: ResolvedEngine) -> list[str]:
    arch, tp, pp = resolved.architecture, resolved.tensor_parallel_size, resolved.pipeline_parallel_size
    per_node = node_gpu_limit(stack.gpu)
    reasons = []
    if arch.num_attention_heads % tp:
        reasons.append(
            f"engine.tensor_parallel_size ({tp}) does not divide the model's {arch.num_attention_heads} attention "
            f"heads; vLLM refuses to start. Fix: use one of {', '.join(map(str, valid_tp_sizes(arch, per_node)))}."
        )
    elif not arch.uses_mla and _kv_heads_split_badly(arch.num_key_value_heads, tp):
        reasons.append(
            f"engine.tensor_parallel_size ({tp}) cannot split or replicate the model's {arch.num_key_value_heads} "
            f"KV heads evenly. Fix: use one of {', '.join(map(str, valid_tp_sizes(arch, per_node)))}."
        )
    if pp > arch.num_hidden_layers:
        reasons.append(
            f"engine.pipeline_parallel_size ({pp}) exceeds the model's {arch.num_hidden_layers} layers. "
            f"Fix: use at most {arch.num_hidden_layers} stages."
        )
    reasons += _node_fit_reasons(resolved, per_node)
    return reasons


def _node_fit_reasons(resolved: ResolvedEngine, per_node: int) -> list[str]:
    """One pod of a replica takes all GPUs of its share on one node; vLLM needs --nnodes to divide TP x PP."""
    tp, pp, nnodes = resolved.tensor_parallel_size, resolved.pipeline_parallel_size, resolved.nnodes
    total = tp * pp
    if total % nnodes:
        return [
            f"engine.nnodes ({nnodes}) does not divide the {total} GPUs of a replica (tensor_parallel_size {tp} "
            f"x pipeline_parallel_size {pp}); vLLM refuses to start. Fix: set engine.nnodes to a divisor of {total}."
        ]
    if total // nnodes <= per_node:
        return []
    if nnodes == 1:
        return [
            f"a replica needs {total} GPUs (tensor_parallel_size {tp} x pipeline_parallel_size {pp}) but a "
            f"{resolved.gpu.name} node has {per_node}. Fix: use at most {per_node} GPUs per replica, a larger GPU, "
            "gpu.gpus_per_node if your nodes have more, or span nodes with engine.nnodes (see the suggestions)."
        ]
    return [
        f"each of the {nnodes} nodes of a replica needs {total // nnodes} GPUs ({total} / engine.nnodes) but a "
        f"{resolved.gpu.name} node has {per_node}. Fix: raise engine.nnodes to {-(-total // per_node)} or more, "
        "or set gpu.gpus_per_node if your nodes have more."
    ]


def _kv_heads_split_badly(kv_heads: int, tp: int) -> bool:
    return (kv_heads % tp != 0) if kv_heads >= tp else (tp % kv_heads != 0)


def node_gpu_limit(gpu: GpuConfig) -> int:
    return gpu.gpus_per_node or min(gpu.spec_for(name).gpus_per_node for name in gpu.products)


def valid_tp_sizes(arch: Architecture, per_node: int) -> list[int]:
    sizes = [tp for tp in range(1, per_node + 1) if arch.num_attention_heads % tp == 0]
    return [tp for tp in sizes if arch.uses_mla or not _kv_heads_split_badly(arch.num_key_value_heads, tp)]


def memory_reasons(
    inputs: MemoryInputs, memory: MemoryEstimate, capacity: KvCapacity, target: ConcurrencyTarget
) -> tuple[list[str], list[str]]:
    """(reasons to block, warnings) from the memory figures."""
    if memory.loaded_gib_per_gpu >= memory.requested_gib:
        return [_weights_message(inputs, memory)], []
    if memory.kv_cache_gib_per_gpu <= 0:
        return [_no_kv_message(memory)], []
    if capacity.blocks_per_max_len_request > capacity.num_gpu_blocks:
        return [_one_request_message(inputs, memory, capacity)], []
    if memory.after_profiling_gib > inputs.gpu_memory_gib - memory.requested_gib:
        return [_after_profiling_message(inputs, memory)], []
    if target.blocks > capacity.num_gpu_blocks:
        message = _target_message(inputs, memory, capacity, target)
        return ([message], []) if target.policy == "block" else ([], [message])
    return [], []


def _weights_message(inputs: MemoryInputs, memory: MemoryEstimate) -> str:
    need = memory.loaded_gib_per_gpu
    return (
        f"the weights need {need:.2f} GiB per GPU but vLLM may use only {memory.requested_gib:.2f} GiB "
        f"({inputs.gpu_memory_gib:.2f} GiB x engine.gpu_memory_utilization {inputs.gpu_memory_utilization}); "
        f"short by {need - memory.requested_gib:.2f} GiB before any KV cache. Fix: more GPUs per replica "
        f"(engine.tensor_parallel_size), a larger GPU, or a quantized checkpoint."
    )


def _no_kv_message(memory: MemoryEstimate) -> str:
    return (
        f"no memory is left for the KV cache: {memory.requested_gib:.2f} GiB requested - "
        f"{memory.loaded_gib_per_gpu:.2f} GiB weights - {memory.activation_gib:.2f} "
        f"GiB activation peak - {memory.non_torch_gib:.2f} GiB non-torch - {memory.cuda_graph_gib:.2f} GiB "
        f"CUDA graphs = {memory.kv_cache_gib_per_gpu:.2f} GiB per GPU; short by "
        f'{-memory.kv_cache_gib_per_gpu:.2f} GiB. vLLM fails with "No available memory for the cache blocks". '
        "Fix: more GPUs per replica (engine.tensor_parallel_size), a larger GPU, a higher "
        "engine.gpu_memory_utilization, or a lower engine.max_num_batched_tokens / max_num_seqs (smaller "
        "activation peak)."
    )


def _one_request_message(inputs: MemoryInputs, memory: MemoryEstimate, capacity: KvCapacity) -> str:
    need = capacity.gib_for_blocks(capacity.blocks_per_max_len_request)
    longest = capacity.longest_request_tokens
    return (
        f"one request of engine.max_model_len {inputs.max_model_len} tokens needs {need:.2f} GiB of KV cache "
        f"per GPU but {memory.kv_cache_gib_per_gpu:.2f} GiB is available; short by "
        f"{need - memory.kv_cache_gib_per_gpu:.2f} GiB, and vLLM refuses to start. Fix: lower "
        f"engine.max_model_len (this cache holds {longest} tokens), or give the KV cache more memory: more GPUs "
        "per replica, a larger GPU, or engine.kv_cache_dtype fp8."
    )


def _after_profiling_message(inputs: MemoryInputs, memory: MemoryEstimate) -> str:
    outside = inputs.gpu_memory_gib - memory.requested_gib
    highest = (inputs.gpu_memory_gib - memory.after_profiling_gib) / inputs.gpu_memory_gib
    return (
        f"vLLM fills engine.gpu_memory_utilization {inputs.gpu_memory_utilization} with the KV cache and then "
        f"captures CUDA graphs outside it (about {memory.after_profiling_gib:.2f} GiB per GPU), but only "
        f"{outside:.2f} GiB of the {inputs.gpu_memory_gib:.2f} GiB GPU is outside the budget; short by "
        f"{memory.after_profiling_gib - outside:.2f} GiB, so start-up runs out of memory after profiling. Fix: "
        f"engine.gpu_memory_utilization {int(highest * 100) / 100} or lower, engine.enforce_eager true, or a vLLM "
        "release that subtracts the graphs (0.20.0 or newer)."
    )


def _target_message(inputs: MemoryInputs, memory: MemoryEstimate, capacity: KvCapacity, target: ConcurrencyTarget) -> str:
    need = capacity.gib_for_blocks(target.blocks)
    per_request = max(target.blocks // target.requests, 1)
    fitting = capacity.num_gpu_blocks // per_request
    head = (
        f"concurrency target: {target.requests} requests x {target.tokens_per_request} tokens need "
        f"{need:.2f} GiB of KV cache per GPU ({target.blocks} blocks) but the cache holds "
        f"{memory.kv_cache_gib_per_gpu:.2f} GiB ({capacity.num_gpu_blocks} blocks); short by "
        f"{need - memory.kv_cache_gib_per_gpu:.2f} GiB. About {fitting} such requests fit; the rest queue or are "
        "preempted."
    )
    if target.policy == "warn":  # vLLM starts anyway; a target nobody asked for only warns
        return (
            f"{head} vLLM starts anyway. To hold them all give the KV cache more memory; to admit only what "
            f"fits set engine.max_num_seqs {fitting}."
        )
    return (
        f"{head} Fix: lower engine.max_num_seqs (or preflight.concurrency.requests), give the KV cache more "
        "memory, or set preflight.concurrency.policy warn to accept the queueing."
    )


def risk_warnings(stack: SizingInputs, resolved: ResolvedEngine, margin_percent: float, fits: bool) -> list[str]:
    warnings = []
    util = resolved.gpu_memory_utilization
    if util > 0.95:
        warnings.append(
            f"engine.gpu_memory_utilization {util} leaves under 5 % of each GPU for the CUDA "
            "context, other processes and fragmentation; start-up OOMs are likely."
        )
    weight_only = fp8_weight_only_warning(stack.engine.quantization, stack.model.id, resolved)
    if weight_only:
        warnings.append(weight_only)
    slow_kernel = slow_kernel_warning(stack.engine.quantization, resolved)
    if slow_kernel:
        warnings.append(slow_kernel)
    if fits and 0 <= margin_percent < stack.preflight.min_margin_percent:  # below 0 the target warning said it
        warnings.append(
            f"only {margin_percent:.1f} % of the KV cache is left after the concurrency target "
            f"(preflight.min_margin_percent {stack.preflight.min_margin_percent})."
        )
    if stack.model.revision is None and stack.model.local_path is None:
        warnings.append(_unpinned_revision(stack, resolved))
    if len(stack.gpu.products) > 1:
        warnings.append(
            f"sized for the smallest acceptable GPU, {resolved.gpu.name} "
            f"({resolved.gpu.memory_gib} GiB); larger ones get a bigger KV cache."
        )
    return warnings


def _unpinned_revision(stack: SizingInputs, resolved: ResolvedEngine) -> str:
    """A bucket copy serves what was copied into it; a Hub download takes what the main branch holds then."""
    bucket = stack.delivery.object_storage if stack.delivery.mode == "object_storage" else None
    if bucket is not None and not bucket.copy_from_hub:
        return (
            f"model.revision is not pinned: every replica streams the copy in {bucket.uri}, but nothing records "
            f"which commit of {stack.model.id} it holds. Fix: set model.revision to the commit you copied there."
        )
    return (
        f"model.revision is not pinned: the cache takes whatever {stack.model.id}'s main branch holds when it is "
        f"downloaded, so replicas and re-deploys can serve different weights. Fix: set model.revision to a commit "
        f"sha{_hub_commit(resolved)}."
    )


def fp8_weight_only_warning(requested: str | None, model_id: str, resolved: ResolvedEngine) -> str | None:
    """FP8 weights, quantized at load (engine.quantization fp8) or stored so in the checkpoint, on a GPU without FP8
    tensor cores: vLLM repacks them for its Marlin kernel and computes in 16 bits ("Your GPU does not have native
    support for FP8 computation ... Weight-only FP8 compression will be used leveraging the Marlin kernel",
    vllm-project/vllm vllm/model_executor/layers/quantization/utils/marlin_utils_fp8.py
    @ee52d9901d368da35a80048c299ccb53e78a9a01:96). Another requested method is refused elsewhere
    (preflight/quantization.py)."""
    if resolved.gpu.native_fp8:
        return None
    native = ", ".join(sorted({gpu.family for gpu in GPUS.values() if gpu.native_fp8}))
    consequence = (
        f"{resolved.gpu.name} has no FP8 tensor cores, so vLLM runs them weight-only (W8A16) through its Marlin kernel: "
        "the memory saving holds, the compute speed-up does not (prefill and large batches run at 16-bit speed)."
    )
    fix = f"Fix: a GPU with FP8 tensor cores ({native}) in gpu.product"
    if requested == "fp8":
        return (
            f"engine.quantization fp8 quantizes the weights to FP8 at load, but {consequence} {fix}, or remove "
            "engine.quantization."
        )
    if requested in (None, resolved.architecture.quantization) and resolved.architecture.fp8_weights:
        return (
            f"model.id {show(model_id)} stores FP8 weights, but {consequence} {fix}, or a 16-bit or INT8/INT4 "
            "checkpoint of the model."
        )
    return None


# GPU families of compute capability 8.0 and newer: every one runs vLLM's Marlin kernels. awq_marlin needs 8.0
# (AWQMarlinConfig.get_min_capability, vllm-project/vllm vllm/model_executor/layers/quantization/awq_marlin.py
# @0322f292b76d6c0727efd7af9f463884230e938a:123), gptq_marlin 7.5 (GPTQMarlinConfig.get_min_capability,
# gptq_marlin.py@00161ce01fe64fdae0ec8ff1ae198c7b9befbdad).
MARLIN_FAMILIES = frozenset({"ampere", "ada-lovelace", "hopper", "blackwell"})
MARLIN_METHODS = {"awq": "awq_marlin", "gptq": "gptq_marlin"}


def slow_kernel_warning(requested: str | None, resolved: ResolvedEngine) -> str | None:
    """engine.quantization awq (or gptq) on a checkpoint of that method, on a GPU the Marlin kernel runs on.

    Left unset, vLLM upgrades such a checkpoint to awq_marlin / gptq_marlin itself; named explicitly, it keeps
    the unoptimized kernel and only logs "... you specified quantization=awq explicitly, so forcing awq"
    (override_quantization_method, awq_marlin.py@0322f292b76d6c0727efd7af9f463884230e938a:165).
    """
    marlin = MARLIN_METHODS.get(requested or "")
    if requested is None or marlin is None or resolved.architecture.quantization != requested:
        return None
    if resolved.gpu.family not in MARLIN_FAMILIES:
        return None
    return (
        f"engine.quantization {requested} forces vLLM's slow {requested.upper()} kernel on {resolved.gpu.name}: "
        f"vLLM would run this checkpoint with the much faster {marlin} kernel, but an explicit {requested} "
        f'keeps the unoptimized one ("... so forcing {requested}"). Fix: set engine.quantization {marlin}, or '
        "remove engine.quantization (vLLM picks it from the checkpoint)."
    )


def margin_percent(capacity: KvCapacity, target: ConcurrencyTarget) -> float:
    if capacity.num_gpu_blocks <= 0:
        return -100.0
    return (capacity.num_gpu_blocks - target.blocks) / capacity.num_gpu_blocks * 100
