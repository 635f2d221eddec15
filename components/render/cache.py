"""The model cache: a PVC sized from the weights, a single-writer download Job, and the wait init container.

The Job fills the cache once and writes a completion marker only after every shard listed in
`model.safetensors.index.json` is on disk (docs/sources.md §P10.4). Server pods wait for the marker instead of
racing to download the same files, and load with HF_HUB_OFFLINE=1. Pure.
"""

from __future__ import annotations

import json
from typing import Any

from components.render.resources import container_resources
from components.render.security import (
    HF_TOKEN_DIR,
    HF_TOKEN_KEY,
    container_security_context,
    render_restricted_job,
)
from config.kubernetes import CacheConfig
from config.vllm import VllmConfig
from plan.delivery import CreatedStorageClass, DeliveryPlan
from plan.names import HF_HOME, HOME
from plan.security import PodSecurity

# pulumi-kubernetes annotations (pinned 4.34.2): `pulumi.com/waitFor` awaits a kubectl-style condition
# (pulumi/pulumi-kubernetes#3134) and overrides the built-in await (#3344), which for a WaitForFirstConsumer
# claim counts Pending as ready (#3130).
WAIT_FOR = "pulumi.com/waitFor"
# Not awaited: the annotation skips pulumi-kubernetes' await logic (pulumi/pulumi-kubernetes#417).
SKIP_AWAIT = {"pulumi.com/skipAwait": "true"}

# The causes no retry fixes, named for the operator: printed last (the container's terminationMessagePolicy
# FallbackToLogsOnError makes the log tail its termination message, which `kubectl describe` and Pulumi's Job
# await show) and written to the failure marker the server's wait container stops on. Shared by the download and
# the bucket-copy scripts. huggingface_hub errors carry the HTTP response (`.response.status_code`), possibly as
# the cause of a LocalEntryNotFoundError, hence the walk down the chain. The Hub answers 401 without a token for
# a repository it does not show, so 401 names both.
FAILURE_REASONS = """\
import errno
HTTP_REASONS = {
    401: "the Hub refused the request: the hf_token secret is missing, expired or wrong "
         "(pulumi config set --secret hf_token <token>), or model.id names no repository the token can see",
    403: "the token's account may not read this repository: a gated model whose licence is not accepted "
         "on its Hub page with that account, or a fine-grained token without read access to it",
    404: "no such repository, revision or file: check model.id and model.revision",
}
OS_REASONS = {
    errno.ENOSPC: "the volume is full: raise cache.size_gib (or cache.headroom_percent)",
    errno.EACCES: "the volume is not writable by the pod's user: check the export's permissions or security.fs_group",
}
def reason(error):
    while error is not None:
        status = getattr(getattr(error, "response", None), "status_code", None)
        if status in HTTP_REASONS:
            return f"HTTP {status}: {HTTP_REASONS[status]}"
        if isinstance(error, OSError) and error.errno in OS_REASONS:
            return f"{errno.errorcode[error.errno]} on {error.filename}: {OS_REASONS[error.errno]}"
        error = error.__cause__ or error.__context__
    return None
"""

# Uses huggingface_hub's snapshot_download, whose arguments are stable from the 0.7.2 image to current
# ones (the CLI changed: `huggingface-cli download` became `hf download` with different list options).
DOWNLOAD_SCRIPT = (
    """\
import json, os, pathlib, signal, sys
from huggingface_hub import HfApi, scan_cache_dir, snapshot_download
marker = pathlib.Path(os.environ["CACHE_MARKER"])
failed = pathlib.Path(os.environ["FAILURE_MARKER"])
if marker.exists():
    print(f"cache already complete: {marker}")
    sys.exit(0)
deadline = int(os.environ["DOWNLOAD_DEADLINE_SECONDS"])
def give_up(*_):  # os._exit: the download's worker threads would keep a normal exit waiting
    print(f"download deadline of {deadline} s passed; a retry resumes the partial files", flush=True)
    os._exit(1)
signal.signal(signal.SIGALRM, give_up)
signal.alarm(deadline)  # counts from here: not the time queued for a node, not the image pull
def prune():  # a per-replica volume: only this pod reads it, so other revisions are freed before downloading
    keep = {(repo, HfApi().repo_info(repo, revision=revision).sha) for repo, revision in json.loads(os.environ["DOWNLOADS"])}
    stale = [rev.commit_hash for cached in scan_cache_dir().repos for rev in cached.revisions
             if (cached.repo_id, rev.commit_hash) not in keep]
    if stale:
        print(f"freeing revisions {stale} before the download", flush=True)
        scan_cache_dir().delete_revisions(*stale).execute()
def fill():
    if os.environ.get("PRUNE_OTHER_REVISIONS") == "1" and pathlib.Path(os.environ["HF_HOME"], "hub").is_dir():
        prune()
    for repo, revision in json.loads(os.environ["DOWNLOADS"]):
        path = pathlib.Path(snapshot_download(repo, revision=revision, max_workers=int(os.environ["MAX_WORKERS"]),
                                              ignore_patterns=json.loads(os.environ["IGNORE_PATTERNS"])))
        index = path / "model.safetensors.index.json"
        shards = set(json.loads(index.read_text())["weight_map"].values()) if index.exists() else set()
        missing = sorted(s for s in shards if not (path / s).is_file())
        if missing:
            sys.exit(f"{repo}: shards missing after download: {missing}")
        print(f"{repo}@{revision or 'main'}: complete ({len(shards)} shards) in {path}")
"""
    + FAILURE_REASONS
    + """\
try:
    fill()
except Exception as error:
    why = reason(error)
    if why is None:
        raise  # a stall or a server error: the Job retries, and the retry resumes
    try:  # best effort: a full or unwritable volume may refuse it; the Job's failure still names the cause
        failed.parent.mkdir(parents=True, exist_ok=True)
        failed.write_text(why)
    except OSError:
        pass
    sys.exit(f"model download failed: {why}")
marker.parent.mkdir(parents=True, exist_ok=True)
marker.write_text(os.environ["DOWNLOADS"])
failed.unlink(missing_ok=True)
"""
)

# Stops on the failure marker: the init container fails with the download's reason as its termination message.
WAIT_SCRIPT = (
    'until [ -f "$CACHE_MARKER" ]; do'
    ' if [ -f "$FAILURE_MARKER" ]; then echo "model download failed: $(cat "$FAILURE_MARKER")" >&2; exit 1; fi;'
    ' echo "waiting for $CACHE_MARKER (model download Job)"; sleep 10; done'
)

# The log tail becomes the termination message of a failed container (shown by `kubectl describe` and in
# pulumi-kubernetes' pod messages).
TERMINATION_MESSAGE_POLICY = "FallbackToLogsOnError"


def render_storage_class(created: CreatedStorageClass, labels: dict[str, str]) -> dict[str, Any]:
    """The model volume's class with provisioned throughput. WaitForFirstConsumer: an EBS volume lives in one zone,
    so it is created where the GPU pod is scheduled; Delete: the claims are the cache, not the class."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": created.name, "labels": dict(labels)},
        "provisioner": created.spec.provisioner,
        "parameters": dict(created.spec.parameters),
        "volumeBindingMode": "WaitForFirstConsumer",
        "reclaimPolicy": "Delete",
        "allowVolumeExpansion": True,
    }


def render_pvc(delivery: DeliveryPlan, namespace: str, labels: dict[str, str]) -> dict[str, Any]:
    """Pulumi waits for Bound (not the default "Pending is fine" for WaitForFirstConsumer classes), bounded by
    delivery.claim_bind_timeout_seconds: a claim that cannot bind fails the update in minutes."""
    metadata = {
        "name": delivery.claim,
        "namespace": namespace,
        "labels": dict(labels),
        "annotations": {WAIT_FOR: "jsonpath={.status.phase}=Bound"},
    }
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": metadata, "spec": claim_spec(delivery)}


def claim_spec(delivery: DeliveryPlan) -> dict[str, Any]:
    volume = delivery.volume
    if volume is None:
        raise ValueError("delivery.mode object_storage has no cache claim")
    spec: dict[str, Any] = {
        "accessModes": [volume.access_mode],
        "volumeMode": "Filesystem",
        "resources": {"requests": {"storage": f"{delivery.cache_size_gib}Gi"}},
    }
    if volume.storage_class_name:
        spec["storageClassName"] = volume.storage_class_name
    return spec


def _download_env(delivery: DeliveryPlan, cache: CacheConfig, with_token: bool) -> list[dict[str, str]]:
    env = {
        "HOME": HOME,
        "HF_HOME": HF_HOME,
        "CACHE_MARKER": delivery.marker_path,
        "FAILURE_MARKER": delivery.failure_marker_path,
        "DOWNLOADS": json.dumps(delivery.downloads),
        "IGNORE_PATTERNS": json.dumps(list(cache.download_ignore_patterns)),
        "MAX_WORKERS": str(cache.download_max_workers),
        "DOWNLOAD_DEADLINE_SECONDS": str(delivery.download_seconds),
        "PRUNE_OTHER_REVISIONS": "1" if delivery.mode == "per_replica_volume" else "0",
        "HF_HUB_DOWNLOAD_TIMEOUT": "60",  # a stalled connection errors and the Job retries (resumes)
        "HF_HUB_DISABLE_TELEMETRY": "1",
    }
    # hf_xet's buffers within the container's memory, and no chunk cache: hf_xet 1.2.0 and earlier keep 10 GB in
    # $HF_HOME/xet, on the shared volume it would eat the headroom (more than all of it for an 8B model).
    env |= delivery.xet_env
    if with_token:
        env["HF_TOKEN_PATH"] = f"{HF_TOKEN_DIR}/{HF_TOKEN_KEY}"  # a file, never an env var
    env |= delivery.hub_env  # the mirror or proxy the policy admits (plan/egress.py)
    return [{"name": key, "value": value} for key, value in env.items()]


def download_volumes(claim: str, token_secret: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    volumes: list[dict[str, Any]] = [
        {"name": "model-cache", "persistentVolumeClaim": {"claimName": claim}},
        {"name": "home", "emptyDir": {"sizeLimit": "1Gi"}},
        {"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}},
    ]
    if token_secret:
        # 0440: root-owned with group fsGroup, readable by the non-root user through its group.
        volumes.append({"name": "hf-token", "secret": {"secretName": token_secret, "defaultMode": 0o440}})
    return volumes, download_mounts(token_secret)


def download_mounts(token_secret: str | None) -> list[dict[str, Any]]:
    """What a container fetching from the Hub mounts: the cache, a writable home and /tmp, and the token if set."""
    mounts: list[dict[str, Any]] = [
        {"name": "model-cache", "mountPath": HF_HOME},
        {"name": "home", "mountPath": HOME},
        {"name": "tmp", "mountPath": "/tmp"},
    ]
    if token_secret:
        mounts.append({"name": "hf-token", "mountPath": HF_TOKEN_DIR, "readOnly": True})
    return mounts


def render_download_container(
    delivery: DeliveryPlan, vllm: VllmConfig, cache: CacheConfig, mounts: list[dict[str, Any]]
) -> dict[str, Any]:
    """Runs the script with huggingface_hub: the Job's container, or a per-replica init container; it reads the
    token when delivery.hf_token_secret is set."""
    return {
        "name": "download",
        "image": delivery.download_image,
        "imagePullPolicy": vllm.image_pull_policy,
        "command": ["python3", "-c", DOWNLOAD_SCRIPT],
        "env": _download_env(delivery, cache, delivery.hf_token_secret is not None),
        "volumeMounts": mounts,
        "resources": container_resources(cache.download_cpu, cache.download_memory_gib),
        "securityContext": container_security_context(),
        "terminationMessagePolicy": TERMINATION_MESSAGE_POLICY,
    }


def render_download_job(
    delivery: DeliveryPlan,
    vllm: VllmConfig,
    cache: CacheConfig,
    security: PodSecurity,
    *,
    namespace: str,
    service_account: str,
    labels: dict[str, str],
    placement: dict[str, Any],
) -> dict[str, Any]:
    """One pod, one writer. No ttlSecondsAfterFinished: Pulumi would see the Job vanish and recreate it.
    Awaited by pulumi-kubernetes' built-in Job await, which fails the update as soon as the Job's Failed
    condition says BackoffLimitExceeded or DeadlineExceeded (pulumi/pulumi-kubernetes
    provider/pkg/await/checker/job/check.go@977bcbf967c2178f9ca7bba30d9510269f0c78f1, collectJobConditionErrors)
    and names the Job and its pods' termination messages: a 401 or 403 fails after the five attempts of
    backoffLimit 4 (Kubernetes' retry delays of 10, 20, 40 and 80 s), minutes, not the rollout's budget. No
    podFailurePolicy FailJob: its Failed reason (PodFailurePolicy) is not one that await fails on, so it would
    wait for the timeout. `placement`: the pod's tolerations, affinity and node selector (download_on_gpu_nodes)."""
    volumes, mounts = download_volumes(delivery.claim, delivery.hf_token_secret)
    metadata = {"name": delivery.download_job, "namespace": namespace, "labels": dict(labels)}
    return render_restricted_job(
        security,
        metadata,
        [render_download_container(delivery, vllm, cache, mounts)],
        volumes,
        backoff_limit=4,
        deadline_seconds=delivery.download_deadline_seconds,
        service_account=service_account,
        pod_extra=placement,
    )


def download_on_gpu_nodes(delivery: DeliveryPlan) -> bool:
    """A ReadWriteOnce volume is usually zonal and, with WaitForFirstConsumer, provisioned where its first pod
    runs: the Job then runs on the server's GPU nodes (without requesting GPUs), so the volume lands in a zone
    the server can reach. ReadWriteMany volumes can be filled from any node."""
    return delivery.volume is not None and delivery.volume.access_mode == "ReadWriteOnce"


def render_wait_container(delivery: DeliveryPlan, vllm: VllmConfig) -> dict[str, Any]:
    """Init container of the server: block until the download Job's marker exists. Uses the vLLM image
    (already pulled for the server) so no extra image is needed."""
    return {
        "name": "wait-for-model-cache",
        "image": vllm.image_ref,
        "imagePullPolicy": vllm.image_pull_policy,
        "command": ["sh", "-c", WAIT_SCRIPT],
        "env": [
            {"name": "CACHE_MARKER", "value": delivery.marker_path},
            {"name": "FAILURE_MARKER", "value": delivery.failure_marker_path},
        ],
        "volumeMounts": [{"name": "model-cache", "mountPath": HF_HOME, "readOnly": True}],
        "resources": container_resources("100m", 0.125),
        "securityContext": container_security_context(),
        "terminationMessagePolicy": TERMINATION_MESSAGE_POLICY,
    }
