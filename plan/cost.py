"""What the stack costs: GPUs, GPU-hours and USD per month at the fewest and the most replicas.

The price is the stack's own (the `cost` group) when it sets one, else the catalog's on-demand table
(catalog/prices.py): the cheapest listed instance per GPU-hour that holds one pod's GPUs. A replica is billed
for its GPUs' share of the instance (replicas are assumed to pack nodes; a node left half empty costs the
whole instance). No price is a price of None, never a guess (docs/cost.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from catalog.prices import gpu_hour_price
from config.cost import CostConfig
from config.gpu import GpuConfig
from config.observability import AutoscalingConfig
from preflight.checks import node_gpu_limit
from preflight.resolve import ResolvedEngine

# 365 days x 24 hours / 12 months: the month AWS, GCP and Azure pricing calculators bill (docs/cost.md).
HOURS_PER_MONTH = 730


@dataclass(frozen=True)
class Price:
    usd_per_hour: float
    unit: Literal["gpu", "instance"]
    instance: str | None  # the priced instance type, when the table's
    source: str
    as_of: str  # YYYY-MM-DD
    gpus_per_instance: int  # 1 for a price per GPU-hour

    @property
    def usd_per_gpu_hour(self) -> float:
        return self.usd_per_hour / self.gpus_per_instance

    def as_dict(self) -> dict[str, Any]:
        return {
            "usd_per_hour": self.usd_per_hour,
            "unit": self.unit,
            "instance": self.instance,
            "source": self.source,
            "as_of": self.as_of,
        }


@dataclass(frozen=True)
class ReplicaCost:
    replicas: int
    gpus: int
    nodes: int  # replicas x nodes per replica
    gpu_hours_per_month: float
    usd_per_month: float | None  # None: no price

    def as_dict(self) -> dict[str, Any]:
        return {
            "replicas": self.replicas,
            "gpus": self.gpus,
            "gpu_hours_per_month": self.gpu_hours_per_month,
            "usd_per_month": None if self.usd_per_month is None else round(self.usd_per_month, 2),
        }


@dataclass(frozen=True)
class CostPlan:
    profile: str  # cluster.profile: which provider's table rows price the stack
    product: str  # the GPU product priced (gpu.product)
    price: Price | None
    gpus_per_replica: int
    nnodes: int  # nodes per replica
    min_replicas: ReplicaCost
    max_replicas: ReplicaCost

    @property
    def usd_per_replica_month(self) -> float | None:
        return usd_per_month(self.gpus_per_replica, None if self.price is None else self.price.usd_per_gpu_hour)

    def as_dict(self) -> dict[str, Any]:
        return {
            "price": None if self.price is None else self.price.as_dict(),
            "min_replicas": self.min_replicas.as_dict(),
            "max_replicas": self.max_replicas.as_dict(),
        }


def usd_per_month(gpus: int, usd_per_gpu_hour: float | None) -> float | None:
    """What `gpus` GPUs cost a month (HOURS_PER_MONTH) at a price per GPU-hour; None without a price."""
    return None if usd_per_gpu_hour is None else gpus * usd_per_gpu_hour * HOURS_PER_MONTH


def replica_bounds(replicas: int, autoscaling: AutoscalingConfig) -> tuple[int, int]:
    """The fewest and the most replicas that run: KEDA's bounds when it scales, else the fixed count."""
    if autoscaling.enabled:
        return autoscaling.min_replica_count, autoscaling.max_replica_count
    return replicas, replicas


def stack_price(cost: CostConfig, gpu: GpuConfig, gpus_per_node: int, profile: str) -> Price | None:
    """The stack's own price when it sets one, else the table's for gpu.product on the cluster profile's provider
    (catalog/prices.py PROFILE_PROVIDERS); None when neither has one."""
    key = cost.price_key
    if key is not None:
        as_of = cost.price_as_of.isoformat() if cost.price_as_of else ""
        source = cost.price_source or f"the stack's cost.{key}"
        if key == "usd_per_gpu_hour":
            return Price(cost.usd_per_gpu_hour or 0.0, "gpu", None, source, as_of, 1)
        return Price(cost.usd_per_instance_hour or 0.0, "instance", None, source, as_of, node_gpu_limit(gpu))
    found = gpu_hour_price(gpu.product, gpus_per_node, profile)
    if found is None:
        return None
    row = found.row
    source = f"{row.provider.upper()} {row.region} on-demand, {row.source}"
    return Price(row.usd_per_hour, "instance", row.instance, source, row.as_of, found.gpus_per_instance)


def _replica_cost(replicas: int, resolved: ResolvedEngine, price: Price | None) -> ReplicaCost:
    gpus = replicas * resolved.gpus_per_replica
    usd = usd_per_month(gpus, None if price is None else price.usd_per_gpu_hour)
    return ReplicaCost(replicas, gpus, replicas * resolved.nnodes, float(gpus * HOURS_PER_MONTH), usd)


def resolve_cost(cost: CostConfig, gpu: GpuConfig, resolved: ResolvedEngine, bounds: tuple[int, int], profile: str) -> CostPlan:
    """`bounds`: the fewest and the most replicas (replica_bounds); `profile`: cluster.profile."""
    price = stack_price(cost, gpu, resolved.gpus_per_node, profile)
    fewest, most = bounds
    return CostPlan(
        profile=profile,
        product=gpu.product,
        price=price,
        gpus_per_replica=resolved.gpus_per_replica,
        nnodes=resolved.nnodes,
        min_replicas=_replica_cost(fewest, resolved, price),
        max_replicas=_replica_cost(most, resolved, price),
    )


def cost_rows(cost: CostPlan) -> list[tuple[str, str]]:
    """(label, value) rows of the text report."""
    return [("Price", _price_text(cost)), *(_replica_row(label, part, cost) for label, part in _bounds(cost))]


def _bounds(cost: CostPlan) -> list[tuple[str, ReplicaCost]]:
    if cost.min_replicas == cost.max_replicas:
        return [("Cost", cost.min_replicas)]
    return [("Cost, min replicas", cost.min_replicas), ("Cost, max replicas", cost.max_replicas)]


def _price_text(cost: CostPlan) -> str:
    price = cost.price
    if price is None:
        return (
            f"no price for {cost.product} on cluster.profile {cost.profile} in catalog/prices.py; set cost.usd_per_gpu_hour "
            "(or cost.usd_per_instance_hour) with cost.price_as_of"
        )
    per = f"per {price.instance} ({_count(price.gpus_per_instance, 'GPU')})" if price.instance else f"per {price.unit}-hour"
    gpu_hour = "" if price.unit == "gpu" else f" = {price.usd_per_gpu_hour:,.2f} USD per GPU-hour"
    return f"{price.usd_per_hour:,.2f} USD/h {per}{gpu_hour}, as of {price.as_of} ({price.source})"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _replica_row(label: str, part: ReplicaCost, cost: CostPlan) -> tuple[str, str]:
    nodes = f" ({_count(part.nodes, 'node')})" if cost.nnodes > 1 else ""
    shape = f"{_count(part.replicas, 'replica')} x {_count(cost.gpus_per_replica, 'GPU')} = {_count(part.gpus, 'GPU')}{nodes}"
    hours = f"{part.gpu_hours_per_month:,.0f} GPU-hours/month ({HOURS_PER_MONTH} h)"
    if part.usd_per_month is None:
        return label, f"{shape}, {hours}, no price"
    per_node = ""
    if cost.nnodes > 1 and part.nodes:
        per_node = f", {part.usd_per_month / part.nodes:,.0f} USD/month per node"
    return label, f"{shape}, {hours} = {part.usd_per_month:,.0f} USD/month{per_node}"
