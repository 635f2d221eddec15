"""How the weights reach the GPUs, decided once: the mode, the volume, its throughput, the workload kind, the
replica counts and the startup budget that follows. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from config.delivery import (
    CacheVolume,
    DeliveryMode,
    Throughput,
    delivery_mode,
    effective_volume,
    most_replicas,
    read_throughput,
    workload_kind,
)
from config.stack import StackConfig
from preflight.delivery import DeliveryBudget, delivery_budget


@dataclass(frozen=True)
class DeliveryPlan:
    mode: DeliveryMode
    volume: CacheVolume | None  # None: the weights stream from object storage
    throughput: Throughput
    workload_kind: str  # Deployment, StatefulSet or LeaderWorkerSet
    most_replicas: int  # the replicas that can run at once: the autoscaler's maximum, else replicas
    weights_on_disk_gib: float
    budget: DeliveryBudget  # the first start's sum, term by term; budget.probe is the startup probe's
    hf_token_secret: str | None  # the Secret the download reads, when the hf_token secret is set


def resolve_delivery(cfg: StackConfig, weights_on_disk_gib: float, hf_token_secret: str | None) -> DeliveryPlan:
    return DeliveryPlan(
        mode=delivery_mode(cfg),
        volume=effective_volume(cfg),
        throughput=read_throughput(cfg),
        workload_kind=workload_kind(cfg),
        most_replicas=most_replicas(cfg),
        weights_on_disk_gib=weights_on_disk_gib,
        budget=delivery_budget(cfg, weights_on_disk_gib),
        hf_token_secret=hf_token_secret,
    )
