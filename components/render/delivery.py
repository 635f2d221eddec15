"""What each delivery mode adds to the server pod: the model volume, compile caches, object-storage access, and
for per-replica volumes the StatefulSet with its claim template and download init container. Pure.

Modes and their throughputs: plan/delivery.py; which mode for which cluster: docs/model-delivery.md.
"""

from __future__ import annotations

import json
from typing import Any

from components.render import cache
from components.render.resources import container_resources
from components.render.security import HF_TOKEN_DIR, HF_TOKEN_KEY, container_security_context
from config.delivery import AZURE_ACCOUNT_ENV, AZURE_ENDPOINT_ENV, STS_ENDPOINT_ENV, ObjectStorageConfig
from config.kubernetes import CacheConfig
from config.vllm import VllmConfig
from plan.delivery import MODEL_VOLUME, DeliveryPlan
from plan.lora import ADAPTER_GIB, LoraPlan
from plan.names import HF_HOME, HOME

# Compile and JIT caches on the model volume, so a restart does not recompile (1-3 min for 70B, issue 10).
COMPILE_CACHE = f"{HF_HOME}/compile-cache"
# Config and tokenizer files vLLM pulls from the bucket (runai_utils.py ObjectStorageModel) and the HF cache.
OBJECT_STORAGE_SCRATCH_GIB = 2
STREAMER_LOG_ENV = "RUNAI_STREAMER_LOG_TO_STDERR"


# Fetches the LoRA adapters into the server pod's model-cache emptyDir, with delivery.mode object_storage (no
# volume to download them to with the base): from the Hub at the pinned commit, or every object under a bucket
# folder with boto3 (in the vllm-openai images, components/render/bucket_copy.py). A 401/403/404 names its cause.
ADAPTER_FETCH_SCRIPT = (
    """\
import json, os, pathlib, sys
from huggingface_hub import snapshot_download
def fetch(adapter):
    path = pathlib.Path(adapter["path"])
    if adapter["repo"]:
        snapshot_download(adapter["repo"], revision=adapter["revision"], local_dir=path)
    else:
        import boto3
        bucket, _, prefix = adapter["uri"].removeprefix("s3://").partition("/")
        prefix = prefix.rstrip("/") + "/" if prefix else ""
        s3 = boto3.client("s3")
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for item in page.get("Contents", []):
                target = path / item["Key"][len(prefix):]
                target.parent.mkdir(parents=True, exist_ok=True)
                s3.download_file(bucket, item["Key"], str(target))
    if not (path / "adapter_config.json").is_file():
        sys.exit(f"adapter {adapter['name']}: no adapter_config.json in {adapter['repo'] or adapter['uri']}")
    print(f"adapter {adapter['name']}: {path}", flush=True)
"""
    + cache.FAILURE_REASONS
    + """\
try:
    for adapter in json.loads(os.environ["ADAPTERS"]):
        fetch(adapter)
except Exception as error:
    why = reason(error)
    if why is None:
        raise
    sys.exit(f"adapter fetch failed: {why}")
"""
)


def model_volumes(delivery: DeliveryPlan, hf_token_secret: str | None, lora: LoraPlan | None = None) -> list[dict[str, Any]]:
    """The pod's `model-cache` volume: the shared claim, nothing (the StatefulSet's claim template provides it),
    or a small emptyDir when the weights stream from a bucket (with room for the adapters fetched into it).
    `hf_token_secret`: mounted by a per-replica download or the adapters' init container."""
    if delivery.mode == "object_storage":
        size = OBJECT_STORAGE_SCRATCH_GIB + (ADAPTER_GIB * len(lora.adapters) if lora else 0)
        scratch = {"name": MODEL_VOLUME, "emptyDir": {"sizeLimit": f"{size}Gi"}}
        return [scratch, *_token_volume(hf_token_secret)]
    if delivery.mode == "shared_volume":
        return [{"name": MODEL_VOLUME, "persistentVolumeClaim": {"claimName": delivery.claim}}]
    return _token_volume(hf_token_secret)


def _token_volume(hf_token_secret: str | None) -> list[dict[str, Any]]:
    if hf_token_secret is None:
        return []
    # 0440: root-owned with group fsGroup, readable by the non-root user through its group.
    return [{"name": "hf-token", "secret": {"secretName": hf_token_secret, "defaultMode": 0o440}}]


def adapter_fetch(delivery: DeliveryPlan, lora: LoraPlan) -> dict[str, Any]:
    """The init container fetching the adapters before vLLM starts, with the server's bucket access (its
    ServiceAccount's identity, or the credentials Secret) and the Hub token when set."""
    mounts = cache.download_mounts(delivery.hf_token_secret)
    adapters = [{"name": a.name, "path": a.path, "repo": a.repo, "revision": a.revision, "uri": a.uri} for a in lora.adapters]
    env = {"HOME": HOME, "HF_HOME": HF_HOME, "ADAPTERS": json.dumps(adapters), "HF_HUB_DISABLE_TELEMETRY": "1"}
    env |= delivery.xet_env  # hf_xet's buffers within the container's memory, no chunk cache in the emptyDir
    env |= server_env(delivery)
    if delivery.hf_token_secret:
        env["HF_TOKEN_PATH"] = f"{HF_TOKEN_DIR}/{HF_TOKEN_KEY}"
    env |= delivery.hub_env  # the mirror or proxy the policy admits (plan/egress.py)
    return {
        "name": "lora-adapters",
        "image": delivery.download_image,
        "imagePullPolicy": delivery.vllm.image_pull_policy,
        "command": ["python3", "-c", ADAPTER_FETCH_SCRIPT],
        "env": [{"name": key, "value": value} for key, value in env.items()],
        **server_env_from(delivery),
        "volumeMounts": mounts,
        "resources": container_resources(delivery.cache_config.download_cpu, delivery.cache_config.download_memory_gib),
        "securityContext": container_security_context(),
        "terminationMessagePolicy": cache.TERMINATION_MESSAGE_POLICY,
    }


def compile_cache_env() -> dict[str, str]:
    """vLLM's cache root (torch.compile artifacts), Triton's and Inductor's, under the model volume."""
    return {
        "VLLM_CACHE_ROOT": f"{COMPILE_CACHE}/vllm",
        "TRITON_CACHE_DIR": f"{COMPILE_CACHE}/triton",
        "TORCHINDUCTOR_CACHE_DIR": f"{COMPILE_CACHE}/torchinductor",
    }


def server_env(delivery: DeliveryPlan) -> dict[str, str]:
    """Environment the mode sets on the server, over render_vllm_env's defaults."""
    env = compile_cache_env() if delivery.compile_cache_persists else {}
    bucket = delivery.bucket
    if bucket is not None:
        # The streamer's own log, whose `[RunAI Streamer] Overall time to stream X of all files: Ys` is the read
        # alone (preflight/startup_phases.py weight load), reaches the pod log only with this flag: vLLM gives the
        # runai_model_streamer logger no handler (runai-model-streamer 0.17.1 runai_model_streamer/__init__.py:39).
        env[STREAMER_LOG_ENV] = "1"
    return env | (bucket_env(bucket, delivery.sts_endpoint_url) if bucket is not None else {})


def bucket_env(bucket: ObjectStorageConfig, sts_endpoint_url: str | None) -> dict[str, str]:
    """Where the streamer finds the bucket: an S3-compatible endpoint (and, with IRSA, where boto3 exchanges the
    token, which AWS_ENDPOINT_URL would send there too), or an az:// bucket's account and endpoint (the streamer's
    Azure client starts only with AZURE_STORAGE_ACCOUNT_NAME: docs/sources.md §S12)."""
    env = {AZURE_ACCOUNT_ENV: bucket.azure_storage_account} if bucket.azure_storage_account else {}
    if bucket.endpoint_url and bucket.scheme == "az":
        env[AZURE_ENDPOINT_ENV] = bucket.endpoint_url
    elif bucket.endpoint_url:
        env |= {"AWS_ENDPOINT_URL": bucket.endpoint_url, "RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING": "0"}
    return env | ({STS_ENDPOINT_ENV: sts_endpoint_url} if sts_endpoint_url else {})


def server_env_from(delivery: DeliveryPlan) -> dict[str, Any]:
    """Bucket credentials from a Secret, when workload identity is not used."""
    bucket = delivery.bucket
    if bucket is None or not bucket.credentials_secret:
        return {}
    return {"envFrom": [{"secretRef": {"name": bucket.credentials_secret}}]}


# The Azure Workload Identity webhook mutates only pods carrying this label; the ServiceAccount's client-id
# annotation alone injects nothing (azure.github.io/azure-workload-identity, docs/sources.md §S8).
AZURE_WORKLOAD_IDENTITY_LABEL = {"azure.workload.identity/use": "true"}


def identity_pod_labels(delivery: DeliveryPlan) -> dict[str, str]:
    return dict(AZURE_WORKLOAD_IDENTITY_LABEL) if delivery.workload_identity == "azure-workload-identity" else {}


def service_account_annotations(delivery: DeliveryPlan) -> dict[str, str]:
    return dict(delivery.bucket.service_account_annotations) if delivery.bucket else {}


def per_replica_download(delivery: DeliveryPlan, vllm: VllmConfig, cache_config: CacheConfig) -> dict[str, Any]:
    """Init container filling this replica's own claim: resumes a partial download, skips a complete one, and
    frees other revisions first (only this pod reads the claim), so one copy's size always suffices."""
    return cache.render_download_container(delivery, vllm, cache_config, cache.download_mounts(delivery.hf_token_secret))


def claim_template(delivery: DeliveryPlan) -> dict[str, Any]:
    return {"metadata": {"name": MODEL_VOLUME}, "spec": cache.claim_spec(delivery)}


def render_statefulset(
    delivery: DeliveryPlan,
    metadata: dict[str, Any],
    selector: dict[str, str],
    template: dict[str, Any],
    replicas: int,
) -> dict[str, Any]:
    """One ReadWriteOnce claim per replica, kept when a pod restarts or the set scales down (whenScaled:
    Retain), so a returning replica loads from its own disk. Parallel pod management: replicas start
    together. A new model.revision is a rolling update (the init container frees the old copy first); a claim
    spec change (another model's size) cannot be applied in place: the API refuses volumeClaimTemplates updates.
    `metadata`: the server's name, namespace, labels and annotations; `template`: the pod template;
    `replicas`: the count at creation (KEDA's minimum when it owns the count).

    whenDeleted Retain: a model change that alters the claim template cannot be applied in place, so
    pulumi-kubernetes replaces the StatefulSet (delete, then create: the name is fixed); with Delete every
    replica's claim would go with it, a full outage and a parallel re-download of every copy. Retained, the
    claims (named after the template and ordinal) are adopted by the new StatefulSet's pods, whose download
    init container frees the other revisions and fetches only what is missing. The claims keep their old size
    (claims are not resized from the template): a larger model needs them deleted, or expanded, by hand
    (docs/model-delivery.md)."""
    spec: dict[str, Any] = {
        "serviceName": metadata["name"],
        "selector": {"matchLabels": dict(selector)},
        "podManagementPolicy": "Parallel",
        "updateStrategy": {"type": "RollingUpdate"},  # one pod at a time
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
        "revisionHistoryLimit": 3,
        "template": template,
        "volumeClaimTemplates": [claim_template(delivery)],
    }
    spec = {"replicas": replicas, **spec}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": metadata, "spec": spec}
