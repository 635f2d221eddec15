"""The preflight: GPU memory as vLLM accounts it, and whether the stack fits. Pure Python, no pulumi."""

from __future__ import annotations

from collections.abc import Callable

from preflight.checks import margin_percent, risk_warnings
from preflight.delivery import DeliveryBudget
from preflight.evaluate import evaluate
from preflight.memory import weights_on_disk_gib
from preflight.parts import SizingInputs
from preflight.plain import plain_kv_estimate
from preflight.report import PreflightReport, Verdict
from preflight.resolve import ResolvedEngine, resolve_engine
from preflight.suggest import suggestions

__all__ = ["PreflightReport", "ResolvedEngine", "SizingInputs", "StartupFigures", "resolve_engine", "run_preflight"]

# The startup budget and the page-cache warnings (preflight/delivery.py) of a checkpoint of so many GiB on disk,
# bound to the stack's delivery by the plan: the preflight sizes the checkpoint, the delivery times it.
StartupFigures = Callable[[float], tuple[DeliveryBudget, list[str]]]


def run_preflight(stack: SizingInputs, startup: StartupFigures) -> PreflightReport:
    """Estimate per-GPU memory for the stack and decide whether it may be deployed."""
    found = evaluate(stack)
    resolved, memory, capacity, target = found.resolved, found.memory, found.capacity, found.target
    margin = margin_percent(capacity, target)
    weights = round(weights_on_disk_gib(resolved.architecture), 3)  # the checkpoint, whatever the runtime does
    reasons = found.reasons
    budget, page_cache_warnings = startup(weights)
    warnings = [
        *found.shortfall_warnings,
        *risk_warnings(stack, resolved, margin, fits=not reasons),
        *page_cache_warnings,
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
        startup=budget,
    )
