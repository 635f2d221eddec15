"""The capacity frontier: every catalog GPU x tensor-parallel size (x nodes) for the stack's model, max_model_len
and concurrency target, sized by the preflight's own evaluation (preflight/evaluate.py), priced per replica.

Each layout is the stack with only the GPU product and the parallelism changed (preflight/suggest.py
apply_changes), evaluated with the target's policy set to warn, so a layout vLLM can start is told apart from
one that also meets the target. A GPU with no single-node layout that starts gets the fewest nodes that do
(tensor parallel within a node, pipeline parallel across nodes, as preflight/suggest.py suggests it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catalog.gpus import GPUS
from catalog.models import Architecture
from catalog.prices import gpu_hour_price
from config.multinode import starts_native_multinode
from plan.cost import HOURS_PER_MONTH, CostPlan, usd_per_month
from preflight.checks import valid_tp_sizes
from preflight.evaluate import Evaluation, evaluate
from preflight.parts import SizingInputs
from preflight.suggest import MAX_SUGGESTED_NODES, apply_changes

WARN_ONLY: dict[str, Any] = {"preflight": {"concurrency": {"policy": "warn"}}}


@dataclass(frozen=True)
class Layout:
    gpu: str
    tensor_parallel_size: int
    pipeline_parallel_size: int
    nnodes: int
    starts: bool  # nothing blocks vLLM's start (weights, KV cache, one max_model_len request, structure)
    meets_target: bool  # starts and holds the concurrency target
    kv_cache_tokens: int
    max_concurrency_at_max_model_len: float
    usd_per_replica_month: float | None  # None: no price
    instance: str | None  # the priced instance type; None for the stack's own price or no price
    reason: str | None  # the first reason it does not start, or the target shortfall
    own: bool = False  # the stack's own layout

    @property
    def gpus(self) -> int:
        return self.tensor_parallel_size * self.pipeline_parallel_size

    @property
    def name(self) -> str:
        nodes = f" on {self.nnodes} nodes" if self.nnodes > 1 else ""
        return f"{self.gpu} x {self.gpus}{nodes}"

    def as_dict(self) -> dict[str, Any]:
        usd = self.usd_per_replica_month
        return {
            "gpu": self.gpu,
            "tensor_parallel_size": self.tensor_parallel_size,
            "pipeline_parallel_size": self.pipeline_parallel_size,
            "nnodes": self.nnodes,
            "gpus_per_replica": self.gpus,
            "starts": self.starts,
            "meets_target": self.meets_target,
            "kv_cache_tokens": self.kv_cache_tokens,
            "max_concurrency_at_max_model_len": round(self.max_concurrency_at_max_model_len, 2),
            "usd_per_replica_month": None if usd is None else round(usd, 2),
            "instance": self.instance,
            "own": self.own,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Frontier:
    profile: str  # cluster.profile, whose provider's table rows price the layouts
    max_model_len: int
    target_requests: int
    target_tokens_per_request: int
    layouts: tuple[Layout, ...]  # sorted: starting and priced by cost, then starting without a price, then the rest

    @property
    def own(self) -> Layout:
        return next(layout for layout in self.layouts if layout.own)

    @property
    def cheapest(self) -> Layout | None:
        """The cheapest priced layout that meets the target."""
        return next((x for x in self.layouts if x.meets_target and x.usd_per_replica_month is not None), None)

    @property
    def own_over_cheapest(self) -> float | None:
        """USD per replica-month the stack's own layout costs above the cheapest one; None when either has no price."""
        cheapest, own = self.cheapest, self.own.usd_per_replica_month
        if cheapest is None or own is None or cheapest.usd_per_replica_month is None:
            return None
        return own - cheapest.usd_per_replica_month

    def as_dict(self) -> dict[str, Any]:
        cheapest, over = self.cheapest, self.own_over_cheapest
        base = None if cheapest is None else cheapest.usd_per_replica_month
        return {
            "max_model_len": self.max_model_len,
            "concurrency_target": {"requests": self.target_requests, "tokens_per_request": self.target_tokens_per_request},
            "hours_per_month": HOURS_PER_MONTH,
            "cheapest_meeting_target": None if cheapest is None else cheapest.as_dict(),
            "own": self.own.as_dict(),
            "own_over_cheapest_usd_per_month": None if over is None else round(over, 2),
            "own_over_cheapest_percent": None if over is None or not base else round(over / base * 100, 1),
            "layouts": [layout.as_dict() for layout in self.layouts],
        }


def _product_changes(product: str, tp: int, nodes: int) -> dict[str, Any]:
    gpu = {"product": product, "also_accept": (), "memory_gib": None, "label": None, "count": None, "gpus_per_node": None}
    engine = {"tensor_parallel_size": tp, "pipeline_parallel_size": nodes, "nnodes": nodes}
    return {"gpu": gpu, "engine": engine, **WARN_ONLY}


def _layout(found: Evaluation, product: str, usd_per_gpu_hour: float | None, instance: str | None, own: bool) -> Layout:
    resolved = found.resolved
    reasons = found.reasons or found.shortfall_warnings
    return Layout(
        gpu=product,
        tensor_parallel_size=resolved.tensor_parallel_size,
        pipeline_parallel_size=resolved.pipeline_parallel_size,
        nnodes=resolved.nnodes,
        starts=not found.reasons,
        meets_target=found.clean,
        kv_cache_tokens=found.capacity.kv_cache_tokens,
        max_concurrency_at_max_model_len=found.capacity.max_concurrency_at_max_model_len,
        usd_per_replica_month=usd_per_month(resolved.gpus_per_replica, usd_per_gpu_hour),
        instance=instance,
        reason=reasons[0] if reasons else None,
        own=own,
    )


def _table_layout(stack: SizingInputs, profile: str, product: str, tp: int, nodes: int) -> Layout:
    found = evaluate(apply_changes(stack, _product_changes(product, tp, nodes)))
    price = gpu_hour_price(product, found.resolved.gpus_per_node, profile)
    usd, instance = (None, None) if price is None else (price.usd_per_gpu_hour, price.row.instance)
    return _layout(found, product, usd, instance, own=False)


def _product_layouts(stack: SizingInputs, profile: str, arch: Architecture, product: str) -> list[Layout]:
    """Every single-node tensor-parallel size, or when none starts the fewest nodes that do."""
    sizes = valid_tp_sizes(arch, GPUS[product].gpus_per_node)
    single = [_table_layout(stack, profile, product, tp, 1) for tp in sizes]
    if any(layout.starts for layout in single) or not _spans_nodes(stack):
        return single
    for nodes in range(2, min(MAX_SUGGESTED_NODES, arch.num_hidden_layers) + 1):
        spanning = _table_layout(stack, profile, product, sizes[-1], nodes)
        if spanning.starts:
            return [*single, spanning]
    return single


def _spans_nodes(stack: SizingInputs) -> bool:
    return stack.target == "kubernetes" and starts_native_multinode(stack.vllm.version)


def _order(layout: Layout) -> tuple[int, float, str, int, int]:
    usd = layout.usd_per_replica_month
    rank = 0 if layout.starts and usd is not None else 1 if layout.starts else 2
    return rank, usd if rank == 0 and usd is not None else 0.0, layout.gpu, layout.gpus, layout.nnodes


def resolve_frontier(stack: SizingInputs, cost: CostPlan) -> Frontier:
    """The layouts of every catalog GPU, the stack's own among them (priced with the stack's own price), the
    others with the table's rows for the cluster profile's provider (cost.profile)."""
    own_found = evaluate(apply_changes(stack, WARN_ONLY))
    own_price = None if cost.price is None else cost.price.usd_per_gpu_hour
    own = _layout(own_found, stack.gpu.product, own_price, None if cost.price is None else cost.price.instance, True)
    key = (own.gpu, own.tensor_parallel_size, own.pipeline_parallel_size, own.nnodes)
    others = [
        layout
        for product in GPUS
        for layout in _product_layouts(stack, cost.profile, own_found.resolved.architecture, product)
        if (layout.gpu, layout.tensor_parallel_size, layout.pipeline_parallel_size, layout.nnodes) != key
    ]
    target = own_found.target
    return Frontier(
        profile=cost.profile,
        max_model_len=own_found.resolved.max_model_len,
        target_requests=target.requests,
        target_tokens_per_request=target.tokens_per_request,
        layouts=tuple(sorted([own, *others], key=_order)),
    )


def frontier_summary(frontier: Frontier) -> list[tuple[str, str]]:
    """The report's frontier rows: the cheapest layout that meets the target, and the stack's own against it."""
    cheapest, own, over = frontier.cheapest, frontier.own, frontier.own_over_cheapest
    if cheapest is None:
        priced = any(layout.usd_per_replica_month is not None for layout in frontier.layouts)
        why = "meets the concurrency target" if priced else f"has a price on cluster.profile {frontier.profile}"
        return [("Cheapest layout", f"no catalog layout {why} (catalog/prices.py)")]
    rows = [("Cheapest layout", f"{cheapest.name} at {_usd(cheapest)} per replica (meets the target)")]
    if cheapest.own:
        return [*rows, ("This stack", "is the cheapest layout that meets the target")]
    if over is None:
        return [*rows, ("This stack", f"{own.name}: no price, so no comparison")]
    base = cheapest.usd_per_replica_month or 0.0
    share = f" ({over / base * 100:+.1f} %)" if base else ""
    verb = "more" if over >= 0 else "less"
    met = "" if own.meets_target else ", and misses the target"
    return [*rows, ("This stack", f"{own.name} at {_usd(own)}: {abs(over):,.0f} USD/month {verb}{share}{met}")]


def frontier_rows(frontier: Frontier) -> list[str]:
    """One line per layout, in the frontier's order (`python -m preflight STACK --frontier`)."""
    return [_row(layout) for layout in frontier.layouts]


def _usd(layout: Layout) -> str:
    usd = layout.usd_per_replica_month
    return "no price" if usd is None else f"{usd:,.0f} USD/month"


def _row(layout: Layout) -> str:
    mark = " (this stack)" if layout.own else ""
    head = f"{layout.name}{mark}: {_usd(layout)}"
    if not layout.starts:
        return f"{head}, does not start: {(layout.reason or '').split(';')[0]}"
    figures = f"{layout.kv_cache_tokens:,} KV tokens, {layout.max_concurrency_at_max_model_len:.2f} at max_model_len"
    target = "meets the target" if layout.meets_target else "misses the target"
    return f"{head}, {figures}, {target}"
