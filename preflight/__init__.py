"""The preflight: GPU memory as vLLM accounts it, and whether the stack fits. Pure Python, no pulumi."""

from __future__ import annotations

from preflight.checks import margin_percent, risk_warnings
from preflight.evaluate import evaluate
from preflight.memory import weights_on_disk_gib
from preflight.parts import SizingInputs
from preflight.plain import plain_kv_estimate
from preflight.report import PreflightReport, Verdict
from preflight.resolve import ResolvedEngine, resolve_engine
from preflight.suggest import suggestions

__all__ = ["PreflightReport", "ResolvedEngine", "SizingInputs", "resolve_engine", "run_preflight"]


def run_preflight(stack: SizingInputs) -> PreflightReport:
    """Estimate per-GPU memory for the stack and decide whether it may be deployed. The delivery's startup
    budget and page-cache warnings are the plan's (plan/__init__.py adds them to the report)."""
    found = evaluate(stack)
    resolved, memory, capacity, target = found.resolved, found.memory, found.capacity, found.target
    margin = margin_percent(capacity, target)
    weights = round(weights_on_disk_gib(resolved.architecture), 3)  # the checkpoint, whatever the runtime does
    reasons = found.reasons
    warnings = [
        *found.shortfall_warnings,
        *risk_warnings(stack, resolved, margin, fits=not reasons),
    ]
    fixes = [] if found.clean else suggestions(stack, found)
    plain = plain_kv_estimate(
        resolved.architecture,
        found.inputs.dtype,
        found.inputs.kv_cache_dtype,
        target.requests,
        target.tokens_per_request,
        resolved.block_size,
    )
    verdict = Verdict(
        fits=not reasons,
        reasons=reasons,
        warnings=tuple(warnings),
        suggestions=tuple(fix.text for fix in fixes),
        suggested_changes=tuple(fix.changes for fix in fixes),
    )
    return PreflightReport(
        verdict=verdict,
        resolved=resolved,
        kv_cache_dtype=stack.engine.kv_cache_dtype,
        memory=memory,
        weights_on_disk_gib=weights,
        capacity=capacity,
        target=target,
        margin_percent=margin,
        plain=plain,
    )
