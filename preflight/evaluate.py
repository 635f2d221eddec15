"""One pass of the preflight's accounting and rules over a config, without the report or the suggestions.

`run_preflight` reports it; the suggestions re-run it on changed configs, so every fix they offer is one
that passes the same rules when applied.
"""

from __future__ import annotations

from dataclasses import dataclass

from preflight.checks import ConcurrencyTarget, concurrency_target, memory_reasons, structural_reasons
from preflight.inputs import memory_inputs
from preflight.kv_cache import KvCapacity, kv_capacity
from preflight.memory import MemoryEstimate, MemoryInputs, estimate_memory
from preflight.parts import SizingInputs
from preflight.resolve import ResolvedEngine, resolve_engine


@dataclass(frozen=True)
class Evaluation:
    resolved: ResolvedEngine
    inputs: MemoryInputs
    memory: MemoryEstimate
    capacity: KvCapacity
    target: ConcurrencyTarget
    reasons: tuple[str, ...]  # what blocks the stack
    shortfall_warnings: tuple[str, ...]  # a concurrency shortfall under policy warn

    @property
    def clean(self) -> bool:
        """Nothing blocks and the concurrency target is met."""
        return not self.reasons and not self.shortfall_warnings


def evaluate(stack: SizingInputs) -> Evaluation:
    resolved = resolve_engine(stack)
    inputs = memory_inputs(stack.engine, resolved, stack.vllm.extra_env, stack.lora)
    memory = estimate_memory(inputs)
    capacity = kv_capacity(inputs, memory.kv_cache_gib_per_gpu)
    target = concurrency_target(stack, resolved, inputs)
    blocked_by_memory, soft = memory_reasons(inputs, memory, capacity, target)
    reasons = structural_reasons(stack, resolved) + blocked_by_memory
    return Evaluation(resolved, inputs, memory, capacity, target, tuple(reasons), tuple(soft))
