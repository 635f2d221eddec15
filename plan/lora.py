"""LoRA adapters, decided once: where each one is on the server's disk, what fetches it, and vLLM's flags. Pure.

On a model volume (delivery.mode shared_volume or per_replica_volume) the Hub adapters are downloaded with the
base model, by the same script into the same cache (plan/cache.py downloads), and vLLM loads each from its
snapshot folder, named after the pinned commit (the server runs offline). With delivery.mode object_storage
there is no volume: an init container of the server pod fetches every adapter, from the Hub or from the bucket,
into the pod's model-cache emptyDir (components/render/delivery.py). The flags come from the release's table
(catalog/vllm_flags.py); the buffers they size are charged by the preflight (preflight/lora.py).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from config.delivery import DeliveryMode
from config.lora import LoraAdapter, LoraConfig
from plan.names import HF_HOME
from preflight.lora import lora_shape

# With delivery.mode object_storage: a folder of the server pod's model-cache emptyDir (HF_HOME).
ADAPTERS_DIR = f"{HF_HOME}/lora-adapters"
# The emptyDir's room per adapter: rank 64 on every projection of a 70B model is about 1.5 GiB in 16 bits.
ADAPTER_GIB = 2
RUNTIME_LORA_ENV = "VLLM_ALLOW_RUNTIME_LORA_UPDATING"


@dataclass(frozen=True)
class AdapterPlan:
    name: str  # what clients send as `model`
    path: str  # the folder vLLM loads it from
    repo: str | None  # Hub repository and commit, or None
    revision: str | None
    uri: str | None  # the bucket folder, or None


@dataclass(frozen=True)
class LoraPlan:
    adapters: tuple[AdapterPlan, ...]
    fetched_in_pod: bool  # object_storage: the server pod's init container fetches them
    runtime_loading: bool

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(adapter.name for adapter in self.adapters)


def hub_snapshot(cache_dir: str, repo: str, revision: str) -> str:
    """huggingface_hub's cache layout: $HF_HOME/hub/models--<org>--<name>/snapshots/<commit>."""
    return posixpath.join(cache_dir, "hub", "models--" + repo.replace("/", "--"), "snapshots", revision)


def _adapter(adapter: LoraAdapter, in_pod: bool, cache_dir: str) -> AdapterPlan:
    if in_pod or adapter.id is None or adapter.revision is None:
        path = posixpath.join(ADAPTERS_DIR, adapter.name.replace("/", "--"))
    else:
        path = hub_snapshot(cache_dir, adapter.id, adapter.revision)
    return AdapterPlan(adapter.name, path, adapter.id, adapter.revision, adapter.uri)


def resolve_lora(lora: LoraConfig, mode: DeliveryMode | None, cache_dir: str = HF_HOME) -> LoraPlan | None:
    """None without adapters and runtime loading. `mode`: delivery.mode as configured."""
    if not lora.enabled:
        return None
    in_pod = mode == "object_storage"
    adapters = tuple(_adapter(adapter, in_pod, cache_dir) for adapter in lora.adapters)
    return LoraPlan(adapters=adapters, fetched_in_pod=in_pod and bool(adapters), runtime_loading=lora.runtime_loading)


def lora_downloads(lora: LoraConfig, mode: DeliveryMode | None) -> tuple[tuple[str, str | None], ...]:
    """The Hub adapters the model cache's download fetches with the base (not with object_storage)."""
    if mode == "object_storage":
        return ()
    return tuple((a.id, a.revision) for a in lora.adapters if a.id is not None)


def lora_flags(lora: LoraConfig, plan: LoraPlan | None) -> list[str]:
    shape = lora_shape(lora)
    if plan is None or shape is None:
        return []
    flags = ["--enable-lora", "--max-loras", str(shape.max_loras), "--max-lora-rank", str(shape.max_lora_rank)]
    if lora.max_cpu_loras is not None:
        flags += ["--max-cpu-loras", str(lora.max_cpu_loras)]
    if plan.adapters:  # name=path: the form every release parses (later ones also take JSON)
        flags += ["--lora-modules", *(f"{adapter.name}={adapter.path}" for adapter in plan.adapters)]
    return flags  # validation checks every flag against the release's table


def lora_env(plan: LoraPlan | None) -> dict[str, str]:
    """validation/lora.py refuses runtime_loading on a release without it (catalog/vllm_flags.py)."""
    if plan is None or not plan.runtime_loading:
        return {}
    return {RUNTIME_LORA_ENV: "True"}  # envs.py reads "1" or "true", case-insensitive
