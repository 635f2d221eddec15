"""How the weights reach the GPUs, decided once: the mode, the volume, its throughput, the workload kind, the
replica counts, the startup budget that follows, and the model cache's names, size and deadlines. Pure."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from catalog.aws_endpoints import s3_region, sts_endpoint
from catalog.storage import NODE_LOCAL_MEDIA, WELL_KNOWN_CLASSES, ClassSpec, volume_throughput
from config.delivery import (
    DEFAULT_THROUGHPUT,
    MIB_PER_GIB,
    CacheVolume,
    DeliveryMode,
    NodeLocalMedium,
    ObjectStorageConfig,
    Throughput,
    WorkloadIdentity,
    mode_for,
    volume_for,
)
from config.docker import docker_settings
from config.kubernetes import CacheConfig, ProbesConfig
from config.stack import StackConfig
from config.vllm import VllmConfig
from plan import cache
from plan.egress import hub_access_env
from plan.lora import lora_downloads
from plan.names import Names, namespace_name
from plan.security import PodSecurity, resolve_pod_security
from preflight.delivery import (
    DeliveryBudget,
    ImagePull,
    delivery_budget,
    draft_weights_on_disk_gib,
    image_pull,
    mode_name,
    page_cache_warnings,
)
from preflight.resolve import ResolvedEngine
from preflight.startup import fixed_terms

# The ServiceAccount annotation each identity's webhook or agent reads (docs/sources.md §S8).
IDENTITY_ANNOTATIONS: dict[str, WorkloadIdentity] = {
    "eks.amazonaws.com/role-arn": "irsa",
    "iam.gke.io/gcp-service-account": "gke-workload-identity",
    "azure.workload.identity/client-id": "azure-workload-identity",
}


# A pod's own start around the download and the script's deadline: scheduling and the container start.
POD_START_SECONDS = 120


def bucket_identity(bucket: ObjectStorageConfig | None) -> WorkloadIdentity | None:
    """The identity the bucket is read with: the one named, else the one its ServiceAccount annotation names."""
    if bucket is None:
        return None
    if bucket.workload_identity is not None:
        return bucket.workload_identity
    return next((IDENTITY_ANNOTATIONS[key] for key in bucket.service_account_annotations if key in IDENTITY_ANNOTATIONS), None)


def exchanges_irsa_token(bucket: ObjectStorageConfig) -> bool:
    """An s3:// bucket with an endpoint_url read with IRSA's web identity: no Secret's keys, which both SDKs' chains
    take first. botocore then sends the token exchange to AWS_ENDPOINT_URL, the bucket's endpoint, since it applies
    that variable to its STS client too (the streamer's aws-sdk-cpp does not): docs/sources.md §S12."""
    return (
        bucket_identity(bucket) == "irsa"
        and bucket.credentials_secret is None
        and bucket.scheme == "s3"
        and bucket.endpoint_url is not None
    )


def sts_endpoint_url(bucket: ObjectStorageConfig | None) -> str | None:
    """Where boto3 exchanges IRSA's token (AWS_ENDPOINT_URL_STS) when `exchanges_irsa_token`: the one stated, else
    the STS of the region an AWS S3 endpoint names; None otherwise, or when no region can be read (refused:
    validation/delivery.py)."""
    if bucket is None or not exchanges_irsa_token(bucket):
        return None
    if bucket.sts_endpoint_url:
        return bucket.sts_endpoint_url
    region = s3_region(bucket.endpoint_url or "")
    return sts_endpoint(region) if region else None


# EBS gp3 allows 0.25 MiB/s per provisioned IOPS (docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html);
# 3,000 IOPS is its baseline, and a volume gets at most 500 IOPS per GiB: EC2 refuses a smaller one ("Iops to volume
# size ratio ... maximum is 500"), and the EBS CSI driver caps the ratio only from 6 GiB on
# (kubernetes-sigs/aws-ebs-csi-driver/pkg/cloud/cloud.go@fb9a46fc:78 gp3MaxIOPSPerGB).
GP3_MIB_PER_IOPS = 0.25
GP3_BASELINE_IOPS = 3000
GP3_MAX_IOPS_PER_GIB = 500


@dataclass(frozen=True)
class CreatedStorageClass:
    """The StorageClass this stack creates for its model volume (cache.provisioned_throughput_mib_per_s)."""

    name: str
    spec: ClassSpec


def gp3_iops(throughput_mib_per_s: int) -> int:
    """The IOPS a gp3 volume needs to be provisioned at this throughput."""
    return max(GP3_BASELINE_IOPS, math.ceil(throughput_mib_per_s / GP3_MIB_PER_IOPS))


def gp3_min_size_gib(throughput_mib_per_s: int) -> int:
    """The smallest gp3 volume that may carry those IOPS."""
    return math.ceil(gp3_iops(throughput_mib_per_s) / GP3_MAX_IOPS_PER_GIB)


def created_storage_class(instance: str, throughput_mib_per_s: int | None) -> CreatedStorageClass | None:
    """An EBS gp3 class with the asked throughput and the IOPS it needs; named after both, so a change creates a
    new class beside the old (a StorageClass's parameters cannot be updated)."""
    if throughput_mib_per_s is None:
        return None
    parameters = {"type": "gp3", "throughput": str(throughput_mib_per_s), "iops": str(gp3_iops(throughput_mib_per_s))}
    return CreatedStorageClass(f"{instance}-gp3-{throughput_mib_per_s}", ClassSpec("ebs.csi.aws.com", parameters))


MODEL_VOLUME = "model-cache"  # the pod volume, and the StatefulSet's claim template, holding the model cache


@dataclass(frozen=True)
class DeliveryPlan:
    mode: DeliveryMode
    volume: CacheVolume | None  # None: the weights stream from object storage
    throughput: Throughput
    storage_class: CreatedStorageClass | None  # the class this stack creates for the volume, when asked
    workload_kind: str  # Deployment, StatefulSet or LeaderWorkerSet
    most_replicas: int  # the replicas that can run at once: the autoscaler's maximum, else replicas
    weights_on_disk_gib: float  # the model's checkpoint
    budget: DeliveryBudget  # the first start's sum, term by term; budget.probe is the startup probe's
    # The Secret every pod fetching from the Hub mounts (the download, the bucket copy, the adapters' init
    # container), when the hf_token secret is set; None when nothing fetches from the Hub: nothing mounts it, and the
    # program renders it exactly when this is set.
    hf_token_secret: str | None
    hub_env: dict[str, str]  # vllm.extra_env's mirror and proxy variables, on every container fetching from the Hub
    # hf_xet's buffers within cache.download_memory_gib and its chunk cache off, on the same containers
    xet_env: dict[str, str]
    warnings: tuple[str, ...]  # the page-cache warning of a shared network volume
    node_local: NodeLocalMedium | None  # delivery.node_local: each claim lives on one node's disk (per_replica_volume)
    # The groups the delivery renderers read as they are (components/render/cache.py, bucket_copy.py, probes.py)
    vllm: VllmConfig
    cache_config: CacheConfig
    probes: ProbesConfig
    security: PodSecurity  # the user and groups every pod of the stack runs as (plan/security.py)
    # The model cache (components/render/cache.py, bucket_copy.py)
    needs_download: bool  # from the Hub to a volume: not for a local_path model, nor one streamed from a bucket
    copies_to_bucket: bool  # object_storage with copy_from_hub: a Job copies the Hub snapshot to the bucket
    # A Job fills the cache (the Hub download to a shared volume, or the bucket copy): its ServiceAccount, Job and
    # model-cache NetworkPolicy are rendered. Not for per-replica downloads (each pod's init container), a local_path
    # model, nor a bucket filled by something else: a policy there would select no pod.
    runs_fill_job: bool
    bucket: ObjectStorageConfig | None  # delivery.object_storage, with mode object_storage only
    workload_identity: WorkloadIdentity | None  # what the server (and the copy Job) read the bucket with
    sts_endpoint_url: str | None  # IRSA with an endpoint_url: where boto3 exchanges the token (AWS_ENDPOINT_URL_STS)
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
    copy_seconds_per_gib: float  # each file's deadline in the copy: its GiB times this (at least a minute)
    copy_deadline_seconds: int  # every attempt: the script's deadline, the image pull and the pod's start
    claim_bind_timeout_seconds: int
    accept_replacement_outage: bool  # per_replica_volume: a claim-template change may replace the StatefulSet
    # One new pod's first start (image pull, download, startup budget) plus a margin: progressDeadlineSeconds (the
    # default 600 s would fail a large model's rollout); the download counts because the server waits for it (the
    # Job is not awaited, components/model_cache.py).
    rollout_seconds: int
    # A replica added after the first start: image pull on a new node, then the startup budget (the weights are
    # already on the volume; on a node-local class a fresh node downloads them first). The not-ready alerts wait
    # this out.
    new_replica_seconds: int
    # The whole rollout, pods replaced one after another (maxSurge 0): the rollout gate's deadline, and Pulumi's
    # own update timeout of a LeaderWorkerSet (plan/rollout_gate.py).
    pulumi_timeout_seconds: int
    compile_cache_persists: bool  # vLLM's compile caches on the model volume (compile_cache_persists)


def compile_cache_persists(target: str, volume: CacheVolume | None) -> bool:
    """vLLM's compile caches (VLLM_CACHE_ROOT, TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR) live on the model volume
    only where one replica writes it: the Docker host's volume, a per-replica claim, a single-replica ReadWriteOnce
    one. Several replicas writing one ReadWriteMany cache directory at once would race. There a replica's restart
    compiles from the cache (preflight/delivery.py CompileHit)."""
    return target == "docker" or (volume is not None and volume.access_mode == "ReadWriteOnce")


def workload_kind(nnodes: int, mode: DeliveryMode) -> str:
    """The server's kind: a LeaderWorkerSet runs a replica across nodes (docs/multinode.md); a StatefulSet owns one
    claim per replica; otherwise a Deployment."""
    if nnodes > 1:
        return "LeaderWorkerSet"
    return "StatefulSet" if mode == "per_replica_volume" else "Deployment"


def readers_at_once(volume: CacheVolume | None, most: int) -> int:
    """The replicas that read one model volume at the same time. A ReadWriteMany claim is one file system whose
    limit is the file system's, not each client's (catalog/storage.py): every replica it serves can be loading
    together (the first start, a restart after an outage or a node pool upgrade, a scale-up while others still load),
    and they share its rate. A claim of its own, a bucket or a host disk has one reader."""
    return most if volume is not None and volume.access_mode == "ReadWriteMany" else 1


def _shared(found: Throughput, readers: int) -> Throughput:
    """A volume's rate split between the replicas reading it at once."""
    if readers <= 1:
        return found
    each = math.floor(found.mib_per_s / readers * 10) / 10
    return Throughput(each, f"{found.source}; shared by the {readers} replicas that can load at once: {each:g} MiB/s each")


def _read_throughput(
    measured_gib_per_s: float | None,
    target: str,
    volume: CacheVolume | None,
    classes: dict[str, ClassSpec],
    profile_class: str | None,
    size_gib: int,
    node_local: NodeLocalMedium | None = None,
    readers: int = 1,
) -> tuple[Throughput, tuple[str, ...]]:
    """The load throughput of one replica and its warning: measured when given, else the volume's class (named,
    or the profile's default class) from catalog/storage.py, or the stated node-local medium's, split between the
    `readers` that load from it at once (readers_at_once); an unknown class gets a conservative figure."""
    if measured_gib_per_s is not None:
        return Throughput(measured_gib_per_s * MIB_PER_GIB, "measured: probes.load_throughput_gib_per_s"), ()
    if target == "docker":  # a local disk or Docker volume on the host
        return DEFAULT_THROUGHPUT["docker"], ()
    if volume is None:  # streamed from the bucket
        return DEFAULT_THROUGHPUT["object_storage"], ()
    name = volume.storage_class_name or profile_class
    # A node-local class says nothing of the disk behind it: the stated medium decides.
    found = NODE_LOCAL_MEDIA[node_local] if node_local else volume_throughput(classes.get(name or ""), size_gib)
    source = f"class {name}: {found.source}" if name else f"the cluster's default class: {found.source}"
    throughput = _shared(Throughput(found.mib_per_s, source), readers)
    if found.known:
        return throughput, ()
    named = f"StorageClass {name}" if name else "the cluster's default StorageClass (cache.storage_class_name is unset)"
    named += f" (delivery.node_local: {node_local})" if node_local else ""
    return throughput, (
        f"delivery: the read throughput of {named} is not known (catalog/storage.py); the startup budget assumes "
        f"{found.mib_per_s:g} MiB/s. Fix: set probes.load_throughput_gib_per_s to the figure measured on it "
        "(the checkpoint's GiB over the seconds of a start-up log's `Loading weights took` line), or "
        "cache.storage_class_name to a class the catalog knows.",
    )


def node_loss_warnings(node_local: NodeLocalMedium | None, statefulset: str, namespace: str) -> tuple[str, ...]:
    """What a lost node means for a node-local claim: its replica waits, then downloads again elsewhere."""
    if node_local is None:
        return ()
    return (
        f"delivery: delivery.node_local ({node_local}) pins each replica to the node holding its claim: a lost or "
        "replaced node (spot reclaim, consolidation, a node pool upgrade) leaves its replica Pending until the claim "
        f"is deleted (kubectl delete pvc -n {namespace} {MODEL_VOLUME}-{statefulset}-<ordinal>, then the pod); the "
        "new claim binds on another node and the replica downloads the weights there (the report's fresh-node time).",
    )


def reads_with_node_credentials(bucket: ObjectStorageConfig) -> bool:
    """Neither a Secret nor a workload identity: each cloud SDK's chain ends at the node's own role, served by the
    instance metadata service (docs/sources.md §S12)."""
    return bucket.credentials_secret is None and bucket_identity(bucket) is None


def node_credentials_warnings(bucket: ObjectStorageConfig | None, policy_enabled: bool) -> tuple[str, ...]:
    """A bucket read with the node's role, with the egress policy off (with it on, validation/delivery.py refuses
    the stack)."""
    if bucket is None or policy_enabled or not reads_with_node_credentials(bucket):
        return ()
    return (
        f"delivery: the server reads {bucket.shown_uri} with the node's own credentials (the instance metadata "
        "service), which every pod on the node shares: annotate the server's ServiceAccount "
        "(delivery.object_storage.service_account_annotations) or name delivery.object_storage.workload_identity "
        "to scope the read to the server.",
    )


def _download_gib_per_s(cfg: StackConfig) -> float:
    if cfg.target == "docker":  # the container downloads on its first start
        return docker_settings(cfg.docker).cache.download_throughput_gib_per_s
    return cfg.cache.download_throughput_gib_per_s


def node_local_medium(cfg: StackConfig, mode: DeliveryMode) -> NodeLocalMedium | None:
    """delivery.node_local where it applies: per-replica claims on Kubernetes (the config checks refuse the rest)."""
    return cfg.delivery.node_local if cfg.target == "kubernetes" and mode == "per_replica_volume" else None


def _budget(
    cfg: StackConfig,
    engine: ResolvedEngine,
    mode: DeliveryMode,
    throughput: Throughput,
    weights_gib: float,
    from_hub: bool,
    node_local: bool,
    persists: bool,
) -> DeliveryBudget:
    return delivery_budget(
        mode=mode_name(cfg.target, mode),
        throughput=throughput,
        weights_gib=weights_gib,
        downloads=from_hub,
        from_bucket=mode == "object_storage",
        copy_job=mode == "object_storage"
        and cfg.delivery.object_storage is not None
        and cfg.delivery.object_storage.copy_from_hub,
        download_gib_per_s=_download_gib_per_s(cfg),
        probes=cfg.probes,
        fixed=fixed_terms(cfg.probes, engine),
        # Ranks on different nodes spawn and load in parallel; a multi-node group then waits for every rank to
        # join and NCCL to initialise (docs/multinode.md).
        group_init_seconds=cfg.multinode.group_init_seconds if cfg.engine.nnodes > 1 else 0,
        image_pull=_image_pull(cfg),
        node_local=node_local,
        compile_cache_persists=persists,
    )


def rollout_seconds(budget: DeliveryBudget) -> int:
    """One new pod's first start plus its start: the Deployment's progressDeadlineSeconds (DeliveryPlan.rollout_seconds),
    which validation/delivery.py holds to an int32."""
    return budget.first_start_seconds + POD_START_SECONDS


def _image_pull(cfg: StackConfig) -> ImagePull:
    return image_pull(cfg.server.image_pull_seconds, cfg.vllm.version, cfg.server.registry_throughput_mib_per_s)


def resolve_delivery(
    cfg: StackConfig,
    engine: ResolvedEngine,
    weights_on_disk_gib: float,
    names: Names,
    hf_token_secret: str | None,
    most: int,
) -> DeliveryPlan:
    """The delivery of a parsed stack. `engine`: the values vLLM runs with (the fixed start-up terms follow its model,
    parallelism and batch limits); `weights_on_disk_gib`: the model's checkpoint (the preflight's); `names`:
    the instance's object names; `hf_token_secret`: the token's Secret, when the token is set; `most`:
    the most replicas that run at once (plan/cost.py replica_bounds)."""
    nnodes, store = cfg.engine.nnodes, cfg.cache
    mode = mode_for(cfg.delivery.mode, nnodes, most, store.storage_class_name, store.existing_claim)
    volume = volume_for(mode, most, nnodes, store.access_mode, store.storage_class_name)
    created = created_storage_class(names.instance, store.provisioned_throughput_mib_per_s) if volume else None
    classes = dict(WELL_KNOWN_CLASSES)
    if created is not None and volume is not None:
        volume, classes[created.name] = replace(volume, storage_class_name=created.name), created.spec
    weights = weights_on_disk_gib + draft_weights_on_disk_gib(cfg.engine.speculative)
    size = cache.cache_size_gib(store.size_gib, weights, store.headroom_percent)
    if store.provisioned_throughput_mib_per_s and store.size_gib is None:  # a small model's claim: what its IOPS need
        size = max(size, gp3_min_size_gib(store.provisioned_throughput_mib_per_s))
    profile_class = cfg.cluster.defaults.storage_class
    measured = cfg.probes.load_throughput_gib_per_s
    node_local = node_local_medium(cfg, mode)
    readers = readers_at_once(volume, most)
    throughput, throughput_warnings = _read_throughput(
        measured, cfg.target, volume, classes, profile_class, size, node_local, readers
    )
    # Docker downloads on its first start whatever the mode; Kubernetes streams object storage instead.
    from_hub = cfg.model.local_path is None and (cfg.target == "docker" or mode != "object_storage")
    persists = compile_cache_persists(cfg.target, volume)
    budget = _budget(cfg, engine, mode, throughput, weights, from_hub, node_local is not None, persists)
    kubernetes_volume = volume if cfg.target == "kubernetes" else None
    bucket = cfg.delivery.object_storage if mode == "object_storage" else None
    pairs = cache.downloads(cfg.model.id, cfg.model.revision, cfg.engine.speculative, lora_downloads(cfg.lora, mode))
    copies = bucket is not None and bucket.copy_from_hub
    # With object storage the server pod's init container fetches the Hub adapters (plan/lora.py).
    hub_adapters_in_pod = mode == "object_storage" and any(adapter.id is not None for adapter in cfg.lora.adapters)
    # Docker hands the token to its one container as before (components/render/docker.py).
    reads_hub = cfg.target == "docker" or from_hub or copies or hub_adapters_in_pod
    key = cache.volume_key(pairs, size, volume)
    claim = store.existing_claim or names.cache_claim(key)
    pull = budget.image_pull_seconds
    download = cache.download_seconds(weights, store.download_throughput_gib_per_s)
    copy = cache.copy_seconds(weights_on_disk_gib, store.download_throughput_gib_per_s)
    rollout = rollout_seconds(budget)
    # A first-time ordinal's claim is empty (and a fresh node has no copy of a node-local claim): it downloads first.
    refetch = math.ceil(budget.first_time_download_seconds * budget.probe.safety_factor)
    return DeliveryPlan(
        mode=mode,
        volume=volume,
        throughput=throughput,
        storage_class=created,
        workload_kind=workload_kind(nnodes, mode),
        most_replicas=most,
        weights_on_disk_gib=weights_on_disk_gib,
        budget=budget,
        hf_token_secret=hf_token_secret if reads_hub else None,
        hub_env=hub_access_env(cfg.vllm.extra_env),
        xet_env=cache.xet_download_env(store.download_memory_gib),
        vllm=cfg.vllm,
        cache_config=store,
        probes=cfg.probes,
        security=resolve_pod_security(cfg.security, cfg.cluster.defaults),
        warnings=throughput_warnings
        + node_loss_warnings(node_local, names.server, namespace_name(cfg.namespace, names.instance))
        + node_credentials_warnings(bucket if cfg.target == "kubernetes" else None, cfg.network_policy.enabled)
        + tuple(page_cache_warnings(kubernetes_volume, weights, cfg.server, cfg.engine.gpus_per_node, cfg.vllm.version)),
        node_local=node_local,
        needs_download=from_hub,
        copies_to_bucket=copies,
        runs_fill_job=copies or (from_hub and mode != "per_replica_volume"),
        bucket=bucket,
        workload_identity=bucket_identity(bucket),
        sts_endpoint_url=sts_endpoint_url(bucket),
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
        copy_seconds_per_gib=cache.copy_seconds_per_gib(store.download_throughput_gib_per_s),
        copy_deadline_seconds=copy + pull + POD_START_SECONDS,
        claim_bind_timeout_seconds=cfg.delivery.claim_bind_timeout_seconds,
        accept_replacement_outage=cfg.delivery.accept_replacement_outage,
        rollout_seconds=rollout,
        new_replica_seconds=pull + refetch + budget.probe.total_seconds + POD_START_SECONDS,
        pulumi_timeout_seconds=rollout * max(1, most),
        compile_cache_persists=persists,
    )
