"""`delivery`: how the weights get from the Hub to the GPUs, and the read throughput each way assumes.

Three modes (docs/model-delivery.md has the table "which mode for which cluster"):
- shared_volume: one claim, filled once by a download Job, read by every replica. ReadWriteMany needs a
  storage class that offers it (EFS, Filestore, Azure Files, CephFS); the clouds' default classes are
  ReadWriteOnce only (docs/sources.md §S2 item 1).
- per_replica_volume: each replica owns a ReadWriteOnce claim (StatefulSet volumeClaimTemplates), filled by
  its own init container and kept across restarts; works on every cloud's default class.
- object_storage: vLLM streams the safetensors from s3:// / gs:// / az:// with `--load-format
  runai_streamer` (vllm-project/vllm vllm/transformers_utils/runai_utils.py: SUPPORTED_SCHEMES).

Pure: the schema, and the mode and volume rules plan/delivery.py and the config checks share.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, PositiveInt

from cluster.storage import known_read_write_once_only
from config.base import ConfigGroup
from config.errors import show

DeliveryMode = Literal["shared_volume", "per_replica_volume", "object_storage"]
WorkloadIdentity = Literal["irsa", "eks-pod-identity", "gke-workload-identity", "azure-workload-identity"]
AccessMode = Literal["ReadWriteMany", "ReadWriteOnce"]
NodeLocalMedium = Literal["nvme", "boot_disk"]
MIB_PER_GIB = 1024


@dataclass(frozen=True)
class Throughput:
    """A read throughput per replica and where the figure comes from."""

    mib_per_s: float
    source: str

    @property
    def gib_per_s(self) -> float:
        return self.mib_per_s / MIB_PER_GIB


# Defaults where no StorageClass decides (a volume's comes from its class: catalog/storage.py, plan/delivery.py). A
# measured figure (probes.load_throughput_gib_per_s) always wins.
DEFAULT_THROUGHPUT: dict[str, Throughput] = {
    # A host disk: the safetensors loader's own rate, not the disk's (the streamer read the same 15 GB in 14.34 s
    # from that gp3, provisioned near its maximum: the run.ai benchmark below).
    "docker": Throughput(
        298.0,
        "the safetensors loader: Llama-3-8B (15 GB) in 47.99 s from a fast disk, run.ai/blog/"
        "run-ai-model-streamer-performance-benchmarks (docs/sources.md §S2)",
    ),
    "object_storage": Throughput(
        1024.0,
        "Run:ai streamer: 124.96 GiB in 14.29 s over 8 readers (~1.1 GiB/s each), "
        "marin-community/marin#7136 (docs/sources.md §S2)",
    ),
}


# The streamer's Azure client reads the account and a custom Blob endpoint from these (run-ai/runai-model-streamer
# cpp/azure/client_configuration/client_configuration.cc@cd3a15c928bf33412d4e747d3e4079e7c1323cc6:31,37).
AZURE_ACCOUNT_ENV = "AZURE_STORAGE_ACCOUNT_NAME"
AZURE_ENDPOINT_ENV = "AZURE_STORAGE_ENDPOINT"
# botocore takes a service's own endpoint variable before AWS_ENDPOINT_URL, which it applies to every client, STS's
# too (botocore 1.44.8 configprovider.py `ConfiguredEndpointProvider.provide`): docs/sources.md §S12.
STS_ENDPOINT_ENV = "AWS_ENDPOINT_URL_STS"


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
        description="Workload identity on the server's ServiceAccount (<instance>-server), which the copy_from_hub "
        "Job runs as too, e.g. {eks.amazonaws.com/role-arn: ...} or {iam.gke.io/gcp-service-account: ...}; grant "
        "the identity to that one account (with write access to the bucket for the copy).",
    )
    workload_identity: WorkloadIdentity | None = Field(
        None,
        description="irsa, eks-pod-identity, gke-workload-identity or azure-workload-identity; null: the one "
        "service_account_annotations names (EKS Pod Identity has no annotation, so name it here).",
    )
    endpoint_url: str | None = Field(
        None,
        description="S3-compatible endpoint (AWS_ENDPOINT_URL), e.g. a MinIO or Ceph RGW address; for az://, the "
        "Blob endpoint (AZURE_STORAGE_ENDPOINT), e.g. a private endpoint's address.",
    )
    sts_endpoint_url: str | None = Field(
        None,
        description="With IRSA and endpoint_url: where boto3 exchanges the web identity token (AWS_ENDPOINT_URL_STS), "
        "which AWS_ENDPOINT_URL would otherwise send to the bucket's endpoint; unset: the STS of the region an AWS S3 "
        "endpoint_url names, e.g. https://sts.us-east-1.amazonaws.com for ...s3.us-east-1.vpce.amazonaws.com.",
    )
    # Azure's rule for account names: 3-24 characters, digits and lowercase letters
    # (learn.microsoft.com/azure/storage/common/storage-account-overview, "Storage account name").
    azure_storage_account: str | None = Field(
        None,
        pattern=r"^[a-z0-9]{3,24}$",
        description="The storage account of an az:// bucket, which az://CONTAINER/PATH does not name: the "
        "server's AZURE_STORAGE_ACCOUNT_NAME, without which the streamer reads no az:// URI.",
    )
    copy_from_hub: bool = Field(
        False,
        description="Run a Job that copies the Hub snapshot (model.id at the pinned model.revision) once to "
        "<uri>/<revision>/, which the server then reads; false: uri already holds the copy.",
    )

    @property
    def scheme(self) -> str:
        """s3, gs or az: which of the streamer's clients reads the bucket."""
        return self.uri.split("://", 1)[0]

    @property
    def shown_uri(self) -> str:
        """The URI for a message: scheme, bucket and folder, cut to a line, without user info or a query string,
        which may carry a credential (validation/credentials.py refuses both)."""
        parts = urlsplit(self.uri)
        return show(f"{parts.scheme}://{parts.hostname or ''}{parts.path}")

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
    node_local: NodeLocalMedium | None = Field(
        None,
        description="per_replica_volume on a node-local class (cache.storage_class_name: local static PVs, "
        "local-path, OpenEBS LocalPV, TopoLVM): the disk behind it, nvme (instance store, local SSD) or boot_disk. "
        "Each claim then pins its replica to one node, where a return finds the weights; a lost node means a "
        "download on another (docs/model-delivery.md).",
    )
    accept_replacement_outage: bool = Field(
        False,
        description="per_replica_volume: let this update replace the StatefulSet when its claim template changes "
        "(another model's size), which stops every replica at once; set it for that update only.",
    )


@dataclass(frozen=True)
class CacheVolume:
    """The model volume's effective access mode and storage class (None: the cluster's default class)."""

    access_mode: AccessMode
    storage_class_name: str | None


def mode_for(
    configured: DeliveryMode | None, nnodes: int, most: int, storage_class: str | None, existing_claim: str | None
) -> DeliveryMode:
    """The configured mode, or the one that works on the cluster's default class."""
    if configured is not None:
        return configured
    if nnodes > 1:  # the pods of one group run on several nodes and read one copy
        return "shared_volume"
    # A named class is shared unless it is a block class the providers name (gp3, standard-rwo, managed-csi):
    # several replicas then each get a claim of it, as on the default class.
    if most <= 1 or existing_claim or (storage_class and not known_read_write_once_only(storage_class)):
        return "shared_volume"
    return "per_replica_volume"


def volume_for(
    mode: DeliveryMode, most: int, nnodes: int, access_mode: AccessMode | None, storage_class: str | None
) -> CacheVolume | None:
    """Access mode and storage class of the model volume; None when weights stream from object storage.

    ReadWriteOnce whenever at most one replica can run or each replica owns its claim; ReadWriteMany only for a
    shared volume several replicas mount (the config checks require a storage class for it).
    """
    if mode == "object_storage":
        return None
    if mode == "per_replica_volume":
        return CacheVolume("ReadWriteOnce", storage_class)
    shared: AccessMode = "ReadWriteOnce" if most <= 1 and nnodes == 1 else "ReadWriteMany"
    return CacheVolume(access_mode or shared, storage_class)
