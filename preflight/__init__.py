"""The preflight: GPU memory as vLLM accounts it, and whether the stack fits. Pure Python, no pulumi."""

from __future__ import annotations

from config.stack import StackConfig
from preflight.checks import margin_percent, risk_warnings
from preflight.delivery import delivery_budget, page_cache_warnings
from preflight.evaluate import evaluate
from preflight.memory import GIB, weights_on_disk_gib
from preflight.plain import plain_kv_estimate
from preflight.report import PreflightReport
from preflight.resolve import ResolvedEngine, resolve_engine
from preflight.suggest import suggestions

__all__ = ["PreflightReport", "ResolvedEngine", "resolve_engine", "run_preflight"]


def run_preflight(cfg: StackConfig) -> PreflightReport:
    """Estimate per-GPU memory for the stack and decide whether it may be deployed."""
    found = evaluate(cfg)
    resolved, memory, capacity, target = found.resolved, found.memory, found.capacity, found.target
    margin = margin_percent(capacity, target)
    weights = round(weights_on_disk_gib(resolved.architecture), 3)  # the checkpoint, whatever the runtime does
    reasons = found.reasons
    warnings = [
        *found.shortfall_warnings,
        *risk_warnings(cfg, resolved, margin, fits=not reasons),
        *page_cache_warnings(cfg, weights),
    ]
    fixes = [] if found.clean else suggestions(cfg, found)
    plain = plain_kv_estimate(
        resolved.architecture,
        found.inputs.dtype,
        found.inputs.kv_cache_dtype,
        target.requests,
        target.tokens_per_request,
        resolved.block_size,
    )
    return PreflightReport(
        fits=not reasons,
        reasons=reasons,
        warnings=tuple(warnings),
        suggestions=tuple(fix.text for fix in fixes),
        suggested_changes=tuple(fix.changes for fix in fixes),
        gpu=resolved.gpu.name,
        gpu_memory_gib=resolved.gpu.memory_gib,
        gpu_memory_utilization=resolved.gpu_memory_utilization,
        requested_gib=round(memory.requested_gib, 3),
        vllm_version=resolved.release.version,
        memory_era=resolved.release.era.value,
        tensor_parallel_size=resolved.tensor_parallel_size,
        pipeline_parallel_size=resolved.pipeline_parallel_size,
        gpus_per_replica=resolved.gpus_per_replica,
        max_model_len=resolved.max_model_len,
        max_num_seqs=resolved.max_num_seqs,
        max_num_batched_tokens=resolved.max_num_batched_tokens,
        block_size=resolved.block_size,
        kv_cache_dtype=cfg.engine.kv_cache_dtype,
        weights_on_disk_gib=weights,
        weights_gib_per_gpu=round(memory.weights_gib_per_gpu, 3),
        activation_gib=round(memory.activation_gib, 3),
        non_torch_gib=memory.non_torch_gib,
        cuda_graph_gib=round(memory.cuda_graph_gib, 3),
        draft_gib_per_gpu=round(memory.draft_gib_per_gpu, 3),
        kv_cache_gib_per_gpu=round(memory.kv_cache_gib_per_gpu, 3),
        per_token_kv_bytes=memory.per_token_kv_bytes,
        num_gpu_blocks=capacity.num_gpu_blocks,
        kv_cache_tokens=capacity.kv_cache_tokens,
        max_concurrency_at_max_model_len=round(capacity.max_concurrency_at_max_model_len, 2),
        target_requests=target.requests,
        target_tokens_per_request=target.tokens_per_request,
        target_kv_tokens=target.requests * target.tokens_per_request,
        margin_percent=round(margin, 1),
        plain_kv_bytes_per_token=plain.bytes_per_token,
        plain_kv_gib_for_target=round(plain.total_bytes / GIB, 3),
        resolved=resolved,
        startup=delivery_budget(cfg, weights),
        nnodes=resolved.nnodes,
    )
