"""The startup budget as a sum the user can read, per delivery mode, and the page-cache check.

first start = image pull + download (first start only) + startup probe budget, where the probe budget is
(load + engine start + compile and CUDA graphs) x safety factor and load = weights on disk / the mode's read
throughput (plan/delivery.py decides both). Where vLLM's compile caches persist on the replica's own volume, a
restart of that replica compiles from them (CompileHit); the first start, a first-time ordinal and the probe do not
count on it. Pure; the report, the probes' annotations and the Pulumi timeouts use it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog.models import MODELS
from catalog.vllm_images import image_size
from catalog.vllm_releases import version_key
from config.delivery import CacheVolume, DeliveryMode, Throughput
from config.engine import SpeculativeConfig
from config.kubernetes import ProbesConfig, ServerConfig
from preflight.startup import FixedTerms, StartupBudget, startup_budget

_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}
# vLLM 0.33.0 prefetches a checkpoint on a network file system only when it fits in 90 % of the available
# (cgroup-limited) RAM (model_executor/model_loader/weight_utils.py, "Skipping auto-prefetch"; docs/sources.md §S2).
PREFETCH_RAM_SHARE = 0.9
PER_REPLICA: DeliveryMode = "per_replica_volume"  # a claim per replica (node-local ones too): a first-time ordinal's is empty
DOCKER_MODE = "docker host volume"  # the Docker target's mode in the report
AUTO_PREFETCH_SINCE = "0.33.0"  # the first release that prefetches from NFS by default (docs/model-delivery.md)
# The names of DeliveryBudget.terms, in their order: the report's rows, the cold start's and the phase check's.
IMAGE_PULL, DOWNLOAD, LOAD, ENGINE_START, COMPILE = "image pull", "download", "load", "engine start", "compile + graphs"


@dataclass(frozen=True)
class BudgetTerm:
    name: str
    seconds: float
    how: str  # the arithmetic behind the figure

    def render(self) -> str:
        return f"{self.name} {self.seconds:.0f} s ({self.how})"


@dataclass(frozen=True)
class CompileHit:
    """A restart of a replica on its own volume, which holds vLLM's compile caches (plan/delivery.py
    compile_cache_persists): torch.compile loads its artifacts, the CUDA graphs are captured again."""

    compile_seconds: float  # the compile and CUDA graphs term on the hit (FixedTerms.cuda_graph_hit_seconds)
    start_seconds: int  # the expected start with it
    used_for: str  # the start that uses it (the report's New replica row)
    model_info_seconds: float = 0.0  # the process start's model-info inspection it skips (FixedTerms)


def compile_hit_use(mode: str, node_local: bool) -> str:
    """Which start finds the compile cache: the one on the volume that replica wrote."""
    if node_local:
        return "a restart on the node holding its claim"
    if mode == PER_REPLICA:
        return "a returning ordinal"
    if mode == DOCKER_MODE:
        return "a restart on the Docker host"
    return "a restart of the single replica on its ReadWriteOnce claim"


@dataclass(frozen=True)
class DeliveryBudget:
    mode: str
    throughput: Throughput
    weights_gib: float  # every checkpoint the server reads: the model and any catalog draft model
    terms: tuple[BudgetTerm, ...]  # image pull, download, load, engine start, compile and CUDA graphs
    probe: StartupBudget  # what the startupProbe allows: (load + engine + compile) x safety factor
    first_start_seconds: int  # image pull + download + probe budget
    fixed: FixedTerms  # the engine start and compile terms, set or fitted, and the fitted phases that split them
    node_local: bool = False  # per-replica claims on one node's disk: a fresh node downloads again
    compile_hit: CompileHit | None = None  # a restart that compiles from the cache; None where none does

    def first_start_sum(self) -> str:
        pull, download = self.terms[0].seconds, self.download_seconds
        return (
            f"{self.first_start_seconds} s first start = {pull:.0f} s image pull + {download:.0f} s download x "
            f"{self.probe.safety_factor:g} + {self.probe.total_seconds} s startup probe"
        )

    @property
    def image_pull_seconds(self) -> int:
        return int(self.terms[0].seconds)

    @property
    def download_seconds(self) -> float:
        """The first start's download from the Hub (0 when the weights are already on a volume or in a bucket)."""
        return self.terms[1].seconds

    @property
    def expected_start_seconds(self) -> int:
        """A start on a node with the image and the weights in place: the probe's terms without the safety factor
        (the probe allows more before it kills the pod), or the set probes.startup_seconds."""
        probe = self.probe
        if probe.overridden:
            return probe.total_seconds
        return math.ceil(probe.load_seconds + probe.engine_start_seconds + probe.cuda_graph_seconds)

    @property
    def restart_seconds(self) -> int:
        """A replica's start on its own volume: the compile from its cache where it persists, else the expected
        start."""
        return self.expected_start_seconds if self.compile_hit is None else self.compile_hit.start_seconds

    @property
    def first_time_download_seconds(self) -> int:
        """What a replica adds besides the image when its claim is empty: a per-replica claim holds the weights only
        once its ordinal has started (the StatefulSet keeps it, whenScaled: Retain); a node-local one only on its
        own node, so a fresh node downloads them too."""
        return round(self.download_seconds) if self.mode == PER_REPLICA else 0

    @property
    def new_node_seconds(self) -> int:
        """A new replica on a node without the image (nor, per replica, the weights and compile cache): pull,
        download, start; a single replica's claim follows it, with its compile cache."""
        start = self.expected_start_seconds if self.mode == PER_REPLICA else self.restart_seconds
        return start + self.image_pull_seconds + self.first_time_download_seconds

    def _hit_note(self) -> str:
        hit = self.compile_hit
        if hit is None:
            return ""
        return (
            f"; {hit.used_for} compiles from the compile cache on its volume: {hit.compile_seconds:.0f} s compile + "
            f"CUDA graphs, {self.probe.cuda_graph_seconds:.0f} s on a first start"
            + (f", and skips the {hit.model_info_seconds:.0f} s model-info inspection" if hit.model_info_seconds else "")
        )

    def _added(self, parts: str) -> str:
        """What a new node adds to the start shown before it; per replica that start compiles in full."""
        if self.compile_hit is None or self.mode != PER_REPLICA:
            return f"+ {parts}"
        return f"{self.expected_start_seconds} s start compiling in full + {parts}"

    def new_replica_sum(self) -> str:
        """A replica added after the first start: on a node that has the image (and the weights: a shared volume,
        a bucket, or a returning ordinal's retained claim) its start, which the startup probe bounds; a new node
        pulls the image first (its own provisioning, e.g. Karpenter's, comes on top). Per replica, a first-time
        ordinal's claim is empty and a node-local claim's weights are only on its node: the replica downloads."""
        warm, pull, probe = self.restart_seconds, self.image_pull_seconds, self.probe.total_seconds
        download, hit = self.first_time_download_seconds, self._hit_note()
        if self.node_local:
            added = self._added(f"{pull} s image pull + {download} s download")
            return (
                f"{warm} s expected on the node holding its claim (weights and image there{hit}; the startup probe "
                f"allows {probe} s), {self.new_node_seconds} s on a fresh node ({added})"
            )
        if download:
            added = self._added(f"{pull} s image pull + {download} s download to its empty claim")
            return (
                f"{warm} s expected for a returning ordinal on a node with the image (its retained claim holds the "
                f"weights, whenScaled: Retain{hit}; the startup probe allows {probe} s), {self.new_node_seconds} s for "
                f"a first-time ordinal on a new node ({added})"
            )
        return (
            f"{warm} s expected on a node with the image (the startup probe allows {probe} s{hit}), "
            f"{self.new_node_seconds} s on a new node (+ {pull} s image pull)"
        )

    def explain(self) -> str:
        terms = "; ".join(term.render() for term in self.terms)
        return f"{self.first_start_sum()}; startup probe {self.probe.explain()}; terms: {terms}"


@dataclass(frozen=True)
class ImagePull:
    """The vLLM image's pull on a node without it; a node that has it pulls nothing."""

    seconds: int
    how: str


def image_pull(set_seconds: int | None, version: str, registry_mib_per_s: float) -> ImagePull:
    """`server.image_pull_seconds` when set, else the release's compressed image over the registry's rate."""
    if set_seconds is not None:
        return ImagePull(set_seconds, "server.image_pull_seconds")
    size = image_size(version)
    seconds = math.ceil(size.gib * 1024 / registry_mib_per_s)
    how = f"{size.gib:g} GiB compressed ({size.source}) / {registry_mib_per_s:g} MiB/s server.registry_throughput_mib_per_s"
    return ImagePull(seconds, how)


def draft_weights_on_disk_gib(speculative: SpeculativeConfig | None) -> float:
    """The draft checkpoint's size when it is a catalog model; 0 otherwise (not sized)."""
    arch = MODELS.get(speculative.model) if speculative is not None and speculative.model else None
    return 0.0 if arch is None else arch.num_parameters * _DTYPE_BYTES[arch.torch_dtype] / 2**30


def mode_name(target: str, mode: str) -> str:
    return DOCKER_MODE if target == "docker" else mode


def download_seconds(weights_gib: float, download_gib_per_s: float, downloads: bool) -> float:
    """Hub to volume on the first start; nothing for a model already on a volume or in a bucket."""
    return weights_gib / download_gib_per_s if downloads else 0.0


def delivery_budget(
    *,
    mode: str,
    throughput: Throughput,
    weights_gib: float,
    downloads: bool,
    from_bucket: bool,
    copy_job: bool = False,
    download_gib_per_s: float,
    probes: ProbesConfig,
    fixed: FixedTerms,
    group_init_seconds: int,
    image_pull: ImagePull,
    node_local: bool = False,
    compile_cache_persists: bool = False,
) -> DeliveryBudget:
    """`mode`: the mode's name in the report (mode_name); `weights_gib`: every checkpoint the server reads;
    `downloads`: whether the first start fetches them from the Hub; `from_bucket`: object storage holds them;
    `copy_job`: a Job copies them there first; `fixed`: the pod's engine start and compile terms
    (preflight/startup.py fixed_terms); `group_init_seconds`: a multi-node group's wait for every rank (0 on one
    node); `compile_cache_persists`: vLLM's compile caches live on the volume only this replica writes
    (plan/delivery.py), so its restart compiles from them."""
    probe = startup_budget(
        weights_gib,
        throughput.gib_per_s,
        engine_start_seconds=fixed.engine_start_seconds + group_init_seconds,
        cuda_graph_seconds=fixed.cuda_graph_seconds,
        safety_factor=probes.safety_factor,
        period_seconds=probes.startup_period_seconds,
        override_seconds=probes.startup_seconds,
        allowance=fixed.allowance(group_init_seconds),
    )
    download = round(download_seconds(weights_gib, download_gib_per_s, downloads), 3)
    how = _download_how(weights_gib, download, download_gib_per_s, from_bucket, copy_job)
    group = " + multinode.group_init_seconds" if group_init_seconds else ""
    terms = (
        BudgetTerm(IMAGE_PULL, float(image_pull.seconds), image_pull.how),
        BudgetTerm(DOWNLOAD, download, how),
        BudgetTerm(LOAD, round(probe.load_seconds, 3), f"{weights_gib:.1f} GiB / {throughput.mib_per_s:g} MiB/s"),
        BudgetTerm(ENGINE_START, probe.engine_start_seconds, fixed.engine_start_how + group),
        BudgetTerm(COMPILE, probe.cuda_graph_seconds, fixed.cuda_graph_how),
    )
    first = image_pull.seconds + math.ceil(download * probe.safety_factor) + probe.total_seconds
    hit = _compile_hit(probe, fixed, compile_hit_use(mode, node_local)) if compile_cache_persists else None
    return DeliveryBudget(mode, throughput, weights_gib, terms, probe, first, fixed, node_local, hit)


def _compile_hit(probe: StartupBudget, fixed: FixedTerms, used_for: str) -> CompileHit | None:
    """The restart's compile from the cache; None when it changes nothing (a set or eager term, a set startup)."""
    if probe.overridden or fixed.cuda_graph_hit_seconds >= probe.cuda_graph_seconds:
        return None
    # The same VLLM_CACHE_ROOT holds vLLM's model-info cache, so the restart skips that inspection too.
    engine_start = probe.engine_start_seconds - fixed.model_info_miss_seconds
    start = math.ceil(probe.load_seconds + engine_start + fixed.cuda_graph_hit_seconds)
    return CompileHit(fixed.cuda_graph_hit_seconds, start, used_for, fixed.model_info_miss_seconds)


def shm_gib(server: ServerConfig, gpus_per_node: int) -> float:
    """/dev/shm: NCCL moves tensor-parallel traffic through it; 2 GiB per GPU unless set."""
    return server.shm_size_gib or 2.0 * gpus_per_node


def _download_how(weights: float, download: float, download_gib_per_s: float, from_bucket: bool, copy_job: bool) -> str:
    if download:
        return f"{weights:.1f} GiB / {download_gib_per_s:g} GiB/s, first start only"
    if copy_job:
        return "none: the copy Job (delivery.object_storage.copy_from_hub) fills the bucket before the server starts"
    if from_bucket:
        return "none: the bucket already holds the copy"
    return "none: model.local_path is already on the volume"


def server_memory_limit_gib(server: ServerConfig, gpus_per_node: int) -> float:
    """The server container's memory limit: process memory (16 + 12 per GPU unless set) plus /dev/shm, which a
    memory-backed emptyDir charges to the same limit."""
    return (server.memory_gib or 16.0 + 12.0 * gpus_per_node) + shm_gib(server, gpus_per_node)


def page_cache_warnings(
    volume: CacheVolume | None, weights_gib: float, server: ServerConfig, gpus_per_node: int, vllm_version: str
) -> list[str]:
    """A shared network volume is read fast only through the page cache; the limit must leave room for it.
    `volume`: the Kubernetes model volume (None on Docker or object storage); `weights_gib`: every checkpoint.
    Only releases that prefetch from a network file system on their own skip it for want of memory."""
    if volume is None or volume.access_mode != "ReadWriteMany":  # block disks are not read through NFS prefetch
        return []
    if version_key(vllm_version) < version_key(AUTO_PREFETCH_SINCE):
        return []
    limit = server_memory_limit_gib(server, gpus_per_node)
    if weights_gib <= PREFETCH_RAM_SHARE * limit:
        return []
    needed = weights_gib / PREFETCH_RAM_SHARE
    shm = shm_gib(server, gpus_per_node)
    return [
        f"delivery: the server's memory limit ({limit:g} GiB) is below the {needed:.1f} GiB (the {weights_gib:.1f} GiB "
        f"checkpoint / 0.9) vLLM {vllm_version} needs to prefetch from a network file system: it then skips the prefetch "
        '(weight_utils.py "Skipping auto-prefetch") and reads the shared volume lazily, far below its '
        f"throughput. Fix: set server.memory_gib to at least {math.ceil(needed - shm)} (the limit adds "
        f"{shm:g} GiB of /dev/shm), or use delivery.mode per_replica_volume or object_storage."
    ]
