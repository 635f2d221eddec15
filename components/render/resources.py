"""Container resources: requests equal limits (Guaranteed QoS, so a GPU pod is the last to be evicted). Pure."""

from __future__ import annotations

import math
from typing import Any

from cluster.selectors import GPU_RESOURCE
from config.stack import StackConfig
from preflight.delivery import server_memory_limit_gib, shm_gib


def memory_quantity(gib: float) -> str:
    """GiB as a Kubernetes quantity in whole MiB, e.g. 0.125 -> '128Mi', 16 -> '16Gi'."""
    mib = math.ceil(gib * 1024)
    return f"{mib // 1024}Gi" if mib % 1024 == 0 else f"{mib}Mi"


def container_resources(cpu: str, memory_gib: float, gpus: int = 0) -> dict[str, Any]:
    amounts: dict[str, Any] = {"cpu": cpu, "memory": memory_quantity(memory_gib)}
    if gpus:
        amounts[GPU_RESOURCE] = str(gpus)  # extended resources: requests must equal limits
    return {"requests": dict(amounts), "limits": dict(amounts)}


def server_cpu(cfg: StackConfig) -> str:
    return cfg.server.cpu or str(2 + 4 * cfg.engine.gpus_per_node)


def shm_size_gib(cfg: StackConfig) -> float:
    """NCCL moves tensor-parallel traffic through /dev/shm; 2 GiB per GPU unless set."""
    return shm_gib(cfg.server, cfg.engine.gpus_per_node)


def server_memory_gib(cfg: StackConfig) -> float:
    """Process memory plus /dev/shm: a memory-backed emptyDir is charged to the container's memory limit.
    One formula with the preflight's page-cache check (preflight/delivery.py)."""
    return server_memory_limit_gib(cfg.server, cfg.engine.gpus_per_node)


def render_server_resources(cfg: StackConfig) -> dict[str, Any]:
    return container_resources(server_cpu(cfg), server_memory_gib(cfg), cfg.engine.gpus_per_node)
