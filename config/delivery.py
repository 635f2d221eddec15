"""`delivery`: how the weights get from the Hub to the GPUs, and the read throughput each way assumes.

Three modes (docs/model-delivery.md has the table "which mode for which cluster"):
- shared_volume: one claim, filled once by a download Job, read by every replica. ReadWriteMany needs a
  storage class that offers it (EFS, Filestore, Azure Files, CephFS); the clouds' default classes are
  ReadWriteOnce only (docs/sources.md §S2 item 1).
- per_replica_volume: each replica owns a ReadWriteOnce claim (StatefulSet volumeClaimTemplates), filled by
  its own init container and kept across restarts; works on every cloud's default class.
- object_storage: vLLM streams the safetensors from s3:// / gs:// / az:// with `--load-format
  runai_streamer` (vllm-project/vllm vllm/transformers_utils/runai_utils.py: SUPPORTED_SCHEMES).

Pure: used by the config checks, the preflight's startup budget and the renderers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import Field, PositiveInt

from config.base import ConfigGroup

if TYPE_CHECKING:
    from config.stack import StackConfig

DeliveryMode = Literal["shared_volume", "per_replica_volume", "object_storage"]
AccessMode = Literal["ReadWriteMany", "ReadWriteOnce"]
MIB_PER_GIB = 1024


@dataclass(frozen=True)
class Throughput:
    """A read throughput per replica and where the figure comes from."""

    mib_per_s: float
    source: str

    @property
    def gib_per_s(self) -> float:
        return self.mib_per_s / MIB_PER_GIB


# Defaults per mode, each the low end of what was reported (docs/sources.md §S2). A measured
# figure (probes.load_throughput_gib_per_s) always wins.
DEFAULT_THROUGHPUT: dict[str, Throughput] = {
    "shared_volume": Throughput(
        100.0,
        "EFS provisioned at 100 MiB/s, vllm-project/production-stack tutorials/terraform/eks/storage.tf "
        "(docs/sources.md §S2); Filestore/Azure Files/NFS give about 100-250 MiB/s per client",
    ),
    "per_replica_volume": Throughput(
        298.0,
        "Llama-3-8B (15 GB) read in 47.99 s from an EBS gp3 volume, run.ai/blog/"
        "run-ai-model-streamer-performance-benchmarks (docs/sources.md §S2)",
    ),
    "object_storage": Throughput(
        1024.0,
        "Run:ai streamer: 124.96 GiB in 14.29 s over 8 readers (~1.1 GiB/s each), "
        "marin-community/marin#7136 (docs/sources.md §S2)",
    ),
}


class ObjectStorageConfig(ConfigGroup):
    """An existing copy of the Hub snapshot in a bucket, streamed by vLLM's Run:ai loader."""

    uri: str = Field(
        pattern=r"^(s3|gs|az)://[^/\s]+(/\S*)?$",
        description="The folder holding config.json, tokenizer and *.safetensors, e.g. s3://models/llama-70b/.",
    )
    credentials_secret: str | None = Field(
        None,
        description="Secret whose keys become the server's environment (AWS_ACCESS_KEY_ID, ...); "
        "leave unset with workload identity.",
    )
    service_account_annotations: dict[str, str] = Field(
        default_factory=dict,
        description="Workload identity on the server's ServiceAccount, e.g. "
        "{eks.amazonaws.com/role-arn: ...} or {iam.gke.io/gcp-service-account: ...}.",
    )
    endpoint_url: str | None = Field(
        None, description="S3-compatible endpoint (AWS_ENDPOINT_URL), e.g. a MinIO or Ceph RGW address."
    )
    copy_from_hub: bool = Field(
        False,
        description="Run a Job that copies the Hub snapshot (model.id at the pinned model.revision) once to "
        "<uri>/<revision>/, which the server then reads; false: uri already holds the copy.",
    )

    def model_uri(self, revision: str | None) -> str:
        """What vLLM streams: the uri, or its per-revision folder the copy Job fills (a new revision never
        mixes its shards with the old one's, which vLLM would load together)."""
        if not self.copy_from_hub or revision is None:
            return self.uri
        return f"{self.uri.rstrip('/')}/{revision}/"


class DeliveryConfig(ConfigGroup):
    """How weights reach the GPUs; the startup budget reads with this mode's throughput."""

    mode: DeliveryMode | None = Field(
        None,
        description="shared_volume, per_replica_volume or object_storage. Unset: shared_volume when at most "
        "one replica can run or cache.storage_class_name is set, else per_replica_volume.",
    )
    object_storage: ObjectStorageConfig | None = Field(None, description="The bucket copy, for mode object_storage.")
    claim_bind_timeout_seconds: PositiveInt = Field(
        600, description="How long `pulumi up` waits for the cache claim to bind before failing (not the download)."
    )
    download_image: str | None = Field(
        None,
        description="Image of the download Job / init container (needs python3 and huggingface_hub); "
        "defaults to the vLLM image, already pulled on the GPU nodes.",
    )


@dataclass(frozen=True)
class CacheVolume:
    """The model volume's effective access mode and storage class (None: the cluster's default class)."""

    access_mode: AccessMode
    storage_class_name: str | None


def most_replicas(cfg: StackConfig) -> int:
    return cfg.autoscaling.max_replica_count if cfg.autoscaling.enabled else cfg.replicas


def delivery_mode(cfg: StackConfig) -> DeliveryMode:
    """The configured mode, or the one that works on the cluster's default class."""
    if cfg.delivery.mode is not None:
        return cfg.delivery.mode
    if cfg.engine.nnodes > 1:  # the pods of one group run on several nodes and read one copy
        return "shared_volume"
    if most_replicas(cfg) <= 1 or cfg.cache.storage_class_name or cfg.cache.existing_claim:
        return "shared_volume"
    return "per_replica_volume"


def workload_kind(cfg: StackConfig) -> str:
    """The server's kind: a LeaderWorkerSet runs a replica across nodes (docs/multinode.md); a StatefulSet owns one
    claim per replica; otherwise a Deployment."""
    if cfg.engine.nnodes > 1:
        return "LeaderWorkerSet"
    return "StatefulSet" if delivery_mode(cfg) == "per_replica_volume" else "Deployment"


def effective_volume(cfg: StackConfig) -> CacheVolume | None:
    """Access mode and storage class of the model volume; None when weights stream from object storage.

    ReadWriteOnce whenever at most one replica can run or each replica owns its claim; ReadWriteMany only for a
    shared volume several replicas mount (the config checks require a storage class for it).
    """
    mode = delivery_mode(cfg)
    if mode == "object_storage":
        return None
    if mode == "per_replica_volume":
        return CacheVolume("ReadWriteOnce", cfg.cache.storage_class_name)
    shared: AccessMode = "ReadWriteOnce" if most_replicas(cfg) <= 1 and cfg.engine.nnodes == 1 else "ReadWriteMany"
    return CacheVolume(cfg.cache.access_mode or shared, cfg.cache.storage_class_name)


def read_throughput(cfg: StackConfig) -> Throughput:
    """The load throughput of one replica: measured when given, else the mode's sourced default."""
    measured = cfg.probes.load_throughput_gib_per_s
    if measured is not None:
        return Throughput(measured * MIB_PER_GIB, "measured: probes.load_throughput_gib_per_s")
    if cfg.target == "docker":  # a local disk or Docker volume on the host
        return DEFAULT_THROUGHPUT["per_replica_volume"]
    volume = effective_volume(cfg)
    if volume is not None and volume.access_mode == "ReadWriteOnce":  # a block disk, as per replica
        return DEFAULT_THROUGHPUT["per_replica_volume"]
    return DEFAULT_THROUGHPUT[delivery_mode(cfg)]
