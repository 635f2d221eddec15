"""Container resources: requests equal limits (Guaranteed QoS, so a GPU pod is the last to be evicted). Pure."""

from __future__ import annotations

import math
from typing import Any

from plan.server import Resources


def memory_quantity(gib: float) -> str:
    """GiB as a Kubernetes quantity in whole MiB, e.g. 0.125 -> '128Mi', 16 -> '16Gi'."""
    mib = math.ceil(gib * 1024)
    return f"{mib // 1024}Gi" if mib % 1024 == 0 else f"{mib}Mi"


def container_resources(cpu: str, memory_gib: float, gpus: int = 0, gpu_resource: str = "") -> dict[str, Any]:
    amounts: dict[str, Any] = {"cpu": cpu, "memory": memory_quantity(memory_gib)}
    if gpus:
        amounts[gpu_resource] = str(gpus)  # extended resources: requests must equal limits
    return {"requests": dict(amounts), "limits": dict(amounts)}


def render_server_resources(resources: Resources) -> dict[str, Any]:
    return container_resources(resources.cpu, resources.memory_gib, resources.gpus, resources.gpu_resource)
