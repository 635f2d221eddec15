"""What each delivery mode adds to the server pod: the model volume, compile caches, object-storage access, and
for per-replica volumes the StatefulSet with its claim template and download init container. Pure.

Modes and their throughputs: config/delivery.py; which mode for which cluster: docs/model-delivery.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from components.render import cache
from components.render.security import HF_TOKEN_DIR
from config.delivery import delivery_mode, effective_volume
from config.stack import StackConfig
from plan.names import HF_HOME, HOME

if TYPE_CHECKING:
    from components.render.pod import ServerPlan

MODEL_VOLUME = "model-cache"
# Compile and JIT caches on the model volume, so a restart does not recompile (1-3 min for 70B, issue 10).
COMPILE_CACHE = f"{HF_HOME}/compile-cache"
# Run:ai streamer in vLLM 0.33.0: `--load-format runai_streamer` with an s3:// / gs:// / az:// model
# (vllm/transformers_utils/runai_utils.py SUPPORTED_SCHEMES; docs.vllm.ai models/extensions/runai_model_streamer).
LOAD_FORMAT = "runai_streamer"
# Config and tokenizer files vLLM pulls from the bucket (runai_utils.py ObjectStorageModel) and the HF cache.
OBJECT_STORAGE_SCRATCH_GIB = 2


def model_volumes(cfg: StackConfig, claim: str, hf_token_secret: str | None) -> list[dict[str, Any]]:
    """The pod's `model-cache` volume: the shared claim, nothing (the StatefulSet's claim template provides it),
    or a small emptyDir when the weights stream from a bucket."""
    mode = delivery_mode(cfg)
    if mode == "object_storage":
        return [{"name": MODEL_VOLUME, "emptyDir": {"sizeLimit": f"{OBJECT_STORAGE_SCRATCH_GIB}Gi"}}]
    if mode == "shared_volume":
        return [{"name": MODEL_VOLUME, "persistentVolumeClaim": {"claimName": claim}}]
    if hf_token_secret is None:
        return []
    # 0440: root-owned with group fsGroup, readable by the non-root user through its group.
    return [{"name": "hf-token", "secret": {"secretName": hf_token_secret, "defaultMode": 0o440}}]


def compile_cache_persists(cfg: StackConfig) -> bool:
    """On a volume only this replica writes: a per-replica claim, or a single-replica ReadWriteOnce one.
    Several replicas writing one ReadWriteMany cache directory at once would race."""
    volume = effective_volume(cfg)
    return volume is not None and volume.access_mode == "ReadWriteOnce"


def compile_cache_env() -> dict[str, str]:
    """vLLM's cache root (torch.compile artifacts), Triton's and Inductor's, under the model volume."""
    return {
        "VLLM_CACHE_ROOT": f"{COMPILE_CACHE}/vllm",
        "TRITON_CACHE_DIR": f"{COMPILE_CACHE}/triton",
        "TORCHINDUCTOR_CACHE_DIR": f"{COMPILE_CACHE}/torchinductor",
    }


def server_env(cfg: StackConfig) -> dict[str, str]:
    """Environment the mode sets on the server, over render_vllm_env's defaults."""
    env = compile_cache_env() if compile_cache_persists(cfg) else {}
    bucket = cfg.delivery.object_storage
    if delivery_mode(cfg) == "object_storage" and bucket is not None and bucket.endpoint_url:
        env |= {"AWS_ENDPOINT_URL": bucket.endpoint_url, "RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING": "0"}
    return env


def server_env_from(cfg: StackConfig) -> dict[str, Any]:
    """Bucket credentials from a Secret, when workload identity is not used."""
    bucket = cfg.delivery.object_storage
    if delivery_mode(cfg) != "object_storage" or bucket is None or not bucket.credentials_secret:
        return {}
    return {"envFrom": [{"secretRef": {"name": bucket.credentials_secret}}]}


def service_account_annotations(cfg: StackConfig) -> dict[str, str]:
    bucket = cfg.delivery.object_storage
    return dict(bucket.service_account_annotations) if bucket and delivery_mode(cfg) == "object_storage" else {}


def per_replica_download(cfg: StackConfig, weights_on_disk_gib: float, hf_token_secret: str | None) -> dict[str, Any]:
    """Init container filling this replica's own claim: resumes a partial download, skips a complete one, and
    frees other revisions first (only this pod reads the claim), so one copy's size always suffices."""
    mounts: list[dict[str, Any]] = [
        {"name": MODEL_VOLUME, "mountPath": HF_HOME},
        {"name": "home", "mountPath": HOME},
        {"name": "tmp", "mountPath": "/tmp"},
    ]
    if hf_token_secret:
        mounts.append({"name": "hf-token", "mountPath": HF_TOKEN_DIR, "readOnly": True})
    return cache.render_download_container(cfg, weights_on_disk_gib, hf_token_secret, mounts)


def claim_template(cfg: StackConfig, weights_on_disk_gib: float) -> dict[str, Any]:
    return {"metadata": {"name": MODEL_VOLUME}, "spec": cache.claim_spec(cfg, weights_on_disk_gib)}


def render_statefulset(
    cfg: StackConfig, plan: ServerPlan, pod_spec: dict[str, Any], annotations: dict[str, str]
) -> dict[str, Any]:
    """One ReadWriteOnce claim per replica, kept when a pod restarts or the set scales down (whenScaled:
    Retain), so a returning replica loads from its own disk. Parallel pod management: replicas start
    together. A new model.revision is a rolling update (the init container frees the old copy first); a claim
    spec change (another model's size) cannot be applied in place: the API refuses volumeClaimTemplates updates."""
    spec: dict[str, Any] = {
        "serviceName": plan.name,
        "selector": {"matchLabels": dict(plan.selector)},
        "podManagementPolicy": "Parallel",
        "updateStrategy": {"type": "RollingUpdate"},  # one pod at a time
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"},
        "revisionHistoryLimit": 3,
        "template": {"metadata": {"labels": dict(plan.labels)}, "spec": pod_spec},
        "volumeClaimTemplates": [claim_template(cfg, plan.weights_on_disk_gib)],
    }
    if not cfg.autoscaling.enabled:
        spec = {"replicas": cfg.replicas, **spec}
    metadata = {"name": plan.name, "namespace": plan.namespace, "labels": dict(plan.labels), "annotations": dict(annotations)}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": metadata, "spec": spec}
