"""How the weights reach the GPUs, decided once: the mode, the volume, its throughput, the workload kind, the
replica counts, the startup budget that follows, and the model cache's names, size and deadlines. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from config.delivery import (
    DEFAULT_THROUGHPUT,
    MIB_PER_GIB,
    CacheVolume,
    DeliveryMode,
    ObjectStorageConfig,
    Throughput,
    mode_for,
    volume_for,
)
from config.docker import docker_settings
from config.kubernetes import CacheConfig, ProbesConfig, SecurityConfig
from config.stack import StackConfig
from config.vllm import VllmConfig
from plan import cache
from plan.names import Names
from preflight.delivery import (
    DeliveryBudget,
    delivery_budget,
    draft_weights_on_disk_gib,
    mode_name,
    page_cache_warnings,
)

# A pod's own start around the download and the script's deadline: scheduling and the container start.
POD_START_SECONDS = 120


@dataclass(frozen=True)
class DeliveryPlan:
    mode: DeliveryMode
    volume: CacheVolume | None  # None: the weights stream from object storage
    throughput: Throughput
    workload_kind: str  # Deployment, StatefulSet or LeaderWorkerSet
    most_replicas: int  # the replicas that can run at once: the autoscaler's maximum, else replicas
    weights_on_disk_gib: float  # the model's checkpoint
    budget: DeliveryBudget  # the first start's sum, term by term; budget.probe is the startup probe's
    hf_token_secret: str | None  # the Secret the download reads, when the hf_token secret is set
    warnings: tuple[str, ...]  # the page-cache warning of a shared network volume
    # The groups the delivery renderers read as they are (components/render/cache.py, bucket_copy.py, probes.py)
    vllm: VllmConfig
    cache_config: CacheConfig
    probes: ProbesConfig
    security: SecurityConfig
    # The model cache (components/render/cache.py, bucket_copy.py)
    needs_download: bool  # from the Hub to a volume: not for a local_path model, nor one streamed from a bucket
    copies_to_bucket: bool  # object_storage with copy_from_hub: a Job copies the Hub snapshot to the bucket
    bucket: ObjectStorageConfig | None  # delivery.object_storage, with mode object_storage only
    model_uri: str | None  # what vLLM streams from the bucket
    downloads: cache.Downloads
    marker_path: str  # written by the download once every shard is on disk
    failure_marker_path: str  # written by a download that failed for good (401, 403, 404, ENOSPC, EACCES)
    cache_size_gib: int
    volume_key: str
    claim: str  # the existing claim, or the created one named after its content and spec
    creates_claim: bool  # a shared claim this stack creates (per-replica claims come from the StatefulSet)
    download_job: str
    copy_job: str
    download_image: str
    download_seconds: int  # one attempt's deadline, counted from the script's start: what stops a stalled attempt
    # The Job's activeDeadlineSeconds, an upper bound only: it counts from the Job's start, so it allows the
    # claim's binding, the image pull and the pod's start; the Job retries a stopped attempt, which resumes.
    download_deadline_seconds: int
    copy_seconds: int  # one bucket-copy attempt's deadline (the script's)
    copy_deadline_seconds: int  # every attempt: the script's deadline, the image pull and the pod's start
    claim_bind_timeout_seconds: int
    # One new pod's first start (image pull, download, startup budget) plus a margin: progressDeadlineSeconds (the
    # default 600 s would fail a large model's rollout); the download counts because the server waits for it (the
    # Job is not awaited, components/model_cache.py).
    rollout_seconds: int
    # A replica added after the first start: image pull on a new node, then the startup budget (the weights are
    # already on the volume). The not-ready alerts wait this out.
    new_replica_seconds: int
    # Pulumi waits for the whole rollout: with maxSurge 0 pods are replaced one after another.
    pulumi_timeout_seconds: int

    @property
    def compile_cache_persists(self) -> bool:
        """On a volume only this replica writes: a per-replica claim, or a single-replica ReadWriteOnce one.
        Several replicas writing one ReadWriteMany cache directory at once would race."""
        return self.volume is not None and self.volume.access_mode == "ReadWriteOnce"


def _most_replicas(cfg: StackConfig) -> int:
    return cfg.autoscaling.max_replica_count if cfg.autoscaling.enabled else cfg.replicas


def workload_kind(nnodes: int, mode: DeliveryMode) -> str:
    """The server's kind: a LeaderWorkerSet runs a replica across nodes (docs/multinode.md); a StatefulSet owns one
    claim per replica; otherwise a Deployment."""
    if nnodes > 1:
        return "LeaderWorkerSet"
    return "StatefulSet" if mode == "per_replica_volume" else "Deployment"


def _read_throughput(
    measured_gib_per_s: float | None, target: str, volume: CacheVolume | None, mode: DeliveryMode
) -> Throughput:
    """The load throughput of one replica: measured when given, else the mode's sourced default."""
    if measured_gib_per_s is not None:
        return Throughput(measured_gib_per_s * MIB_PER_GIB, "measured: probes.load_throughput_gib_per_s")
    if target == "docker":  # a local disk or Docker volume on the host
        return DEFAULT_THROUGHPUT["per_replica_volume"]
    if volume is not None and volume.access_mode == "ReadWriteOnce":  # a block disk, as per replica
        return DEFAULT_THROUGHPUT["per_replica_volume"]
    return DEFAULT_THROUGHPUT[mode]


def _download_gib_per_s(cfg: StackConfig) -> float:
    if cfg.target == "docker":  # the container downloads on its first start
        return docker_settings(cfg.docker).cache.download_throughput_gib_per_s
    return cfg.cache.download_throughput_gib_per_s


def _budget(cfg: StackConfig, mode: DeliveryMode, throughput: Throughput, weights_gib: float, from_hub: bool) -> DeliveryBudget:
    return delivery_budget(
        mode=mode_name(cfg.target, mode),
        throughput=throughput,
        weights_gib=weights_gib,
        downloads=from_hub,
        from_bucket=mode == "object_storage",
        download_gib_per_s=_download_gib_per_s(cfg),
        probes=cfg.probes,
        engine=cfg.engine,
        # Ranks on different nodes spawn and load in parallel; a multi-node group then waits for every rank to
        # join and NCCL to initialise (docs/multinode.md).
        group_init_seconds=cfg.multinode.group_init_seconds if cfg.engine.nnodes > 1 else 0,
        image_pull_seconds=cfg.server.image_pull_seconds,
    )


def resolve_delivery(cfg: StackConfig, weights_on_disk_gib: float, names: Names, hf_token_secret: str | None) -> DeliveryPlan:
    """The delivery of a parsed stack. `weights_on_disk_gib`: the model's checkpoint (the preflight's); `names`:
    the instance's object names; `hf_token_secret`: the Secret the downloads mount, when the token is set."""
    most, nnodes, store = _most_replicas(cfg), cfg.engine.nnodes, cfg.cache
    mode = mode_for(cfg.delivery.mode, nnodes, most, store.storage_class_name, store.existing_claim)
    volume = volume_for(mode, most, nnodes, store.access_mode, store.storage_class_name)
    throughput = _read_throughput(cfg.probes.load_throughput_gib_per_s, cfg.target, volume, mode)
    weights = weights_on_disk_gib + draft_weights_on_disk_gib(cfg.engine.speculative)
    # Docker downloads on its first start whatever the mode; Kubernetes streams object storage instead.
    from_hub = cfg.model.local_path is None and (cfg.target == "docker" or mode != "object_storage")
    budget = _budget(cfg, mode, throughput, weights, from_hub)
    kubernetes_volume = volume if cfg.target == "kubernetes" else None
    bucket = cfg.delivery.object_storage if mode == "object_storage" else None
    pairs = cache.downloads(cfg.model.id, cfg.model.revision, cfg.engine.speculative)
    size = cache.cache_size_gib(store.size_gib, weights, store.headroom_percent)
    key = cache.volume_key(pairs, size, volume)
    claim = store.existing_claim or names.cache_claim(key)
    pull = cfg.server.image_pull_seconds
    download = cache.download_seconds(weights, store.download_throughput_gib_per_s)
    copy = cache.copy_seconds(weights_on_disk_gib, store.download_throughput_gib_per_s)
    rollout = budget.first_start_seconds + POD_START_SECONDS
    return DeliveryPlan(
        mode=mode,
        volume=volume,
        throughput=throughput,
        workload_kind=workload_kind(nnodes, mode),
        most_replicas=most,
        weights_on_disk_gib=weights_on_disk_gib,
        budget=budget,
        hf_token_secret=hf_token_secret,
        vllm=cfg.vllm,
        cache_config=store,
        probes=cfg.probes,
        security=cfg.security,
        warnings=tuple(page_cache_warnings(kubernetes_volume, weights, cfg.server, cfg.engine.gpus_per_node)),
        needs_download=from_hub,
        copies_to_bucket=bucket is not None and bucket.copy_from_hub,
        bucket=bucket,
        model_uri=bucket.model_uri(cfg.model.revision) if bucket else None,
        downloads=pairs,
        marker_path=cache.marker_path(pairs),
        failure_marker_path=cache.failure_marker_path(pairs),
        cache_size_gib=size,
        volume_key=key,
        claim=claim,
        creates_claim=store.existing_claim is None and mode == "shared_volume",
        download_job=cache.download_job_name(names, claim, pairs),
        copy_job=cache.copy_job_name(names, bucket.uri if bucket else "", pairs),
        download_image=cfg.delivery.download_image or cfg.vllm.image_ref,
        download_seconds=download,
        download_deadline_seconds=download + cfg.delivery.claim_bind_timeout_seconds + pull + POD_START_SECONDS,
        copy_seconds=copy,
        copy_deadline_seconds=copy + pull + POD_START_SECONDS,
        claim_bind_timeout_seconds=cfg.delivery.claim_bind_timeout_seconds,
        rollout_seconds=rollout,
        new_replica_seconds=pull + budget.probe.total_seconds + POD_START_SECONDS,
        pulumi_timeout_seconds=rollout * max(1, most),
    )
