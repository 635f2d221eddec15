"""The startup budget as a sum the user can read, per delivery mode, and the page-cache check.

first start = image pull + download (first start only) + startup probe budget, where the probe budget is
(load + engine start + compile and CUDA graphs) x safety factor and load = weights on disk / the mode's read
throughput (config/delivery.py). Pure; the report, the probes' annotations and the Pulumi timeouts use it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog.models import MODELS
from config.delivery import Throughput, delivery_mode, effective_volume, read_throughput
from config.docker import docker_settings
from config.stack import StackConfig
from preflight.startup import StartupBudget, startup_budget

_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}
# vLLM 0.33.0 prefetches a checkpoint on a network file system only when it fits in 90 % of the available
# (cgroup-limited) RAM (model_executor/model_loader/weight_utils.py, "Skipping auto-prefetch"; docs/sources.md §S2).
PREFETCH_RAM_SHARE = 0.9


@dataclass(frozen=True)
class BudgetTerm:
    name: str
    seconds: float
    how: str  # the arithmetic behind the figure

    def render(self) -> str:
        return f"{self.name} {self.seconds:.0f} s ({self.how})"


@dataclass(frozen=True)
class DeliveryBudget:
    mode: str
    throughput: Throughput
    weights_gib: float  # every checkpoint the server reads: the model and any catalog draft model
    terms: tuple[BudgetTerm, ...]  # image pull, download, load, engine start, compile and CUDA graphs
    probe: StartupBudget  # what the startupProbe allows: (load + engine + compile) x safety factor
    first_start_seconds: int  # image pull + download + probe budget

    def first_start_sum(self) -> str:
        pull, download = self.terms[0].seconds, self.terms[1].seconds
        return (
            f"{self.first_start_seconds} s first start = {pull:.0f} s image pull + {download:.0f} s download x "
            f"{self.probe.safety_factor:g} + {self.probe.total_seconds} s startup probe"
        )

    def explain(self) -> str:
        terms = "; ".join(term.render() for term in self.terms)
        return f"{self.first_start_sum()}; startup probe {self.probe.explain()}; terms: {terms}"


def draft_weights_on_disk_gib(cfg: StackConfig) -> float:
    """The draft checkpoint's size when it is a catalog model; 0 otherwise (not sized)."""
    spec = cfg.engine.speculative
    arch = MODELS.get(spec.model) if spec is not None and spec.model else None
    return 0.0 if arch is None else arch.num_parameters * _DTYPE_BYTES[arch.torch_dtype] / 2**30


def download_throughput_gib_per_s(cfg: StackConfig) -> float:
    if cfg.target == "docker":  # the container downloads on its first start
        return docker_settings(cfg).cache.download_throughput_gib_per_s
    return cfg.cache.download_throughput_gib_per_s


def mode_name(cfg: StackConfig) -> str:
    return "docker host volume" if cfg.target == "docker" else delivery_mode(cfg)


def download_seconds(cfg: StackConfig, weights_gib: float) -> float:
    """Hub to volume on the first start; nothing for a model already on a volume or in a bucket."""
    if cfg.model.local_path is not None or (cfg.target == "kubernetes" and delivery_mode(cfg) == "object_storage"):
        return 0.0
    return weights_gib / download_throughput_gib_per_s(cfg)


def delivery_budget(cfg: StackConfig, weights_on_disk_gib: float) -> DeliveryBudget:
    probes, throughput = cfg.probes, read_throughput(cfg)
    weights = weights_on_disk_gib + draft_weights_on_disk_gib(cfg)
    # Ranks on different nodes spawn and load in parallel; a multi-node group then waits for every rank to join
    # and NCCL to initialise (docs/multinode.md).
    group_init = cfg.multinode.group_init_seconds if cfg.engine.nnodes > 1 else 0
    probe = startup_budget(
        weights,
        throughput.gib_per_s,
        cfg.engine.gpus_per_node,
        cfg.engine.enforce_eager,
        engine_start_seconds=probes.engine_start_seconds + group_init,
        per_gpu_start_seconds=probes.per_gpu_start_seconds,
        cuda_graph_capture_seconds=probes.cuda_graph_capture_seconds,
        safety_factor=probes.safety_factor,
        period_seconds=probes.startup_period_seconds,
        override_seconds=probes.startup_seconds,
    )
    download = round(download_seconds(cfg, weights), 3)
    terms = (
        BudgetTerm("image pull", float(cfg.server.image_pull_seconds), "server.image_pull_seconds"),
        BudgetTerm("download", download, _download_how(cfg, weights, download)),
        BudgetTerm("load", round(probe.load_seconds, 3), f"{weights:.1f} GiB / {throughput.mib_per_s:g} MiB/s"),
        BudgetTerm(
            "engine start",
            probe.engine_start_seconds,
            "probes.engine_start_seconds + per extra GPU of a pod" + (" + multinode.group_init_seconds" if group_init else ""),
        ),
        BudgetTerm(
            "compile + graphs",
            probe.cuda_graph_seconds,
            "0 with enforce_eager" if cfg.engine.enforce_eager else "probes.cuda_graph_capture_seconds",
        ),
    )
    first = cfg.server.image_pull_seconds + math.ceil(download * probe.safety_factor) + probe.total_seconds
    return DeliveryBudget(mode_name(cfg), throughput, weights, terms, probe, first)


def shm_gib(cfg: StackConfig) -> float:
    """/dev/shm: NCCL moves tensor-parallel traffic through it; 2 GiB per GPU unless set."""
    return cfg.server.shm_size_gib or 2.0 * cfg.engine.gpus_per_node


def _download_how(cfg: StackConfig, weights: float, download: float) -> str:
    if download:
        return f"{weights:.1f} GiB / {download_throughput_gib_per_s(cfg):g} GiB/s, first start only"
    if delivery_mode(cfg) == "object_storage":
        return "none: the bucket holds the copy (delivery.object_storage.copy_from_hub runs a Job before the server)"
    return "none: model.local_path is already on the volume"


def server_memory_limit_gib(cfg: StackConfig) -> float:
    """The server container's memory limit: process memory (16 + 12 per GPU unless set) plus /dev/shm, which a
    memory-backed emptyDir charges to the same limit."""
    return (cfg.server.memory_gib or 16.0 + 12.0 * cfg.engine.gpus_per_node) + shm_gib(cfg)


def page_cache_warnings(cfg: StackConfig, weights_on_disk_gib: float) -> list[str]:
    """A shared network volume is read fast only through the page cache; the limit must leave room for it."""
    volume = effective_volume(cfg) if cfg.target == "kubernetes" else None
    if volume is None or volume.access_mode != "ReadWriteMany":  # block disks are not read through NFS prefetch
        return []
    weights = weights_on_disk_gib + draft_weights_on_disk_gib(cfg)
    limit = server_memory_limit_gib(cfg)
    if weights <= PREFETCH_RAM_SHARE * limit:
        return []
    needed = weights / PREFETCH_RAM_SHARE
    shm = shm_gib(cfg)
    return [
        f"delivery: the server's memory limit ({limit:g} GiB) is below the {needed:.1f} GiB (the {weights:.1f} GiB "
        "checkpoint / 0.9) vLLM 0.33.0 needs to prefetch from a network file system: it then skips the prefetch "
        '(weight_utils.py "Skipping auto-prefetch") and reads the shared volume lazily, far below its '
        f"throughput. Fix: set server.memory_gib to at least {math.ceil(needed - shm)} (the limit adds "
        f"{shm:g} GiB of /dev/shm), or use delivery.mode per_replica_volume or object_storage."
    ]
