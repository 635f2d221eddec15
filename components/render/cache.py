"""The model cache: a PVC sized from the weights, a single-writer download Job, and the wait init container.

The Job fills the cache once and writes a completion marker only after every shard listed in
`model.safetensors.index.json` is on disk (docs/sources.md §P10.4). Server pods wait for the marker instead of
racing to download the same files, and load with HF_HUB_OFFLINE=1. Pure.
"""

from __future__ import annotations

import json
import math
from typing import Any

from components.render import scheduling
from components.render.resources import container_resources
from components.render.security import (
    HF_TOKEN_DIR,
    HF_TOKEN_KEY,
    container_security_context,
    render_restricted_job,
)
from config.delivery import delivery_mode, effective_volume, most_replicas  # effective_volume: the access mode and class
from config.stack import StackConfig
from plan.names import HF_HOME, HOME, MARKER_DIR, Names, cache_key
from plan.placement import resolve_placement
from preflight.delivery import draft_weights_on_disk_gib

# pulumi-kubernetes annotations (pinned 4.34.2): `pulumi.com/waitFor` awaits a kubectl-style condition
# (pulumi/pulumi-kubernetes#3134) and overrides the built-in await (#3344), which for a WaitForFirstConsumer
# claim counts Pending as ready (#3130); `pulumi.com/skipAwait` makes the create return at once.
WAIT_FOR = "pulumi.com/waitFor"
SKIP_AWAIT = "pulumi.com/skipAwait"

# Uses huggingface_hub's snapshot_download, whose arguments are stable from the 0.7.2 image to current
# ones (the CLI changed: `huggingface-cli download` became `hf download` with different list options).
DOWNLOAD_SCRIPT = """\
import json, os, pathlib, signal, sys
from huggingface_hub import HfApi, scan_cache_dir, snapshot_download
marker = pathlib.Path(os.environ["CACHE_MARKER"])
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
marker.parent.mkdir(parents=True, exist_ok=True)
marker.write_text(os.environ["DOWNLOADS"])
"""

WAIT_SCRIPT = 'until [ -f "$CACHE_MARKER" ]; do echo "waiting for $CACHE_MARKER (model download Job)"; sleep 10; done'


def needs_download(cfg: StackConfig) -> bool:
    """From the Hub to a volume: not for a model already on one, nor one streamed from a bucket."""
    return cfg.model.local_path is None and delivery_mode(cfg) != "object_storage"


def downloads(cfg: StackConfig) -> list[tuple[str, str | None]]:
    """(repository, revision) pairs the Job fetches: the model, then any speculative draft model."""
    pairs: list[tuple[str, str | None]] = [(cfg.model.id, cfg.model.revision)]
    spec = cfg.engine.speculative
    if spec is not None and spec.model:
        pairs.append((spec.model, spec.revision))
    return pairs


def content_key(cfg: StackConfig) -> str:
    """What is in the cache (models and revisions): names the completion marker."""
    return cache_key(*(part for pair in downloads(cfg) for part in pair))


def marker_path(cfg: StackConfig) -> str:
    return f"{HF_HOME}/{MARKER_DIR}/complete-{content_key(cfg)}"


def volume_key(cfg: StackConfig, weights_on_disk_gib: float) -> str:
    """What the volume holds and how it is made: content (models, revisions), size, class and access mode.

    A new model.revision gets a new claim sized for it, filled beside the old one: pulumi-kubernetes replaces a
    PVC on any `.spec` change (provider diff.go forceNew), and a new name makes that create-before-delete, so
    the old claim is released only after the new replicas are ready, and never reused when too small.
    """
    volume = effective_volume(cfg)
    access, storage_class = (volume.access_mode, volume.storage_class_name) if volume else (None, None)
    return cache_key(content_key(cfg), str(cache_size_gib(cfg, weights_on_disk_gib)), storage_class, access)


def claim_name(cfg: StackConfig, weights_on_disk_gib: float, instance: str) -> str:
    """The existing claim, or a created one named after its content and spec."""
    if cfg.cache.existing_claim:
        return cfg.cache.existing_claim
    return Names(instance).cache_claim(volume_key(cfg, weights_on_disk_gib))


def job_name(cfg: StackConfig, weights_on_disk_gib: float, instance: str) -> str:
    """A new Job for new content or a new volume: a Job that already completed never runs again, so a
    replaced (empty) volume would otherwise leave the server waiting for the marker forever."""
    claim = claim_name(cfg, weights_on_disk_gib, instance)
    return Names(instance).download_job(cache_key(claim, *(part for pair in downloads(cfg) for part in pair)))


def default_size_gib(cfg: StackConfig, weights_on_disk_gib: float) -> int:
    weights = weights_on_disk_gib + draft_weights_on_disk_gib(cfg)
    return math.ceil(weights * (1 + cfg.cache.headroom_percent / 100) + 1)


def cache_size_gib(cfg: StackConfig, weights_on_disk_gib: float) -> int:
    return math.ceil(cfg.cache.size_gib) if cfg.cache.size_gib else default_size_gib(cfg, weights_on_disk_gib)


def download_seconds(cfg: StackConfig, weights_on_disk_gib: float) -> int:
    """One attempt's deadline, counted from the script's start: the download at the configured speed x1.5."""
    weights = weights_on_disk_gib + draft_weights_on_disk_gib(cfg)
    return math.ceil(weights / cfg.cache.download_throughput_gib_per_s * 1.5)


def download_timeout_seconds(cfg: StackConfig, weights_on_disk_gib: float) -> int:
    """The Job's activeDeadlineSeconds, an upper bound only: it counts from the Job's start, so it allows the
    claim's binding, the image pull and 2 min for the pod; the script's own deadline (download_seconds) is
    what stops a stalled attempt, which the Job then retries with resume."""
    return (
        download_seconds(cfg, weights_on_disk_gib)
        + cfg.delivery.claim_bind_timeout_seconds
        + cfg.server.image_pull_seconds
        + 120
    )


def download_image(cfg: StackConfig) -> str:
    return cfg.delivery.download_image or cfg.vllm.image_ref


def render_pvc(
    cfg: StackConfig, weights_on_disk_gib: float, name: str, namespace: str, labels: dict[str, str]
) -> dict[str, Any]:
    """Pulumi waits for Bound (not the default "Pending is fine" for WaitForFirstConsumer classes), bounded by
    delivery.claim_bind_timeout_seconds: a claim that cannot bind fails the update in minutes."""
    metadata = {
        "name": name,
        "namespace": namespace,
        "labels": dict(labels),
        "annotations": {WAIT_FOR: "jsonpath={.status.phase}=Bound"},
    }
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": metadata,
        "spec": claim_spec(cfg, weights_on_disk_gib),
    }


def claim_spec(cfg: StackConfig, weights_on_disk_gib: float) -> dict[str, Any]:
    volume = effective_volume(cfg)
    if volume is None:
        raise ValueError("delivery.mode object_storage has no cache claim")
    spec: dict[str, Any] = {
        "accessModes": [volume.access_mode],
        "volumeMode": "Filesystem",
        "resources": {"requests": {"storage": f"{cache_size_gib(cfg, weights_on_disk_gib)}Gi"}},
    }
    if volume.storage_class_name:
        spec["storageClassName"] = volume.storage_class_name
    return spec


def _download_env(cfg: StackConfig, weights_on_disk_gib: float, with_token: bool) -> list[dict[str, str]]:
    env = {
        "HOME": HOME,
        "HF_HOME": HF_HOME,
        "CACHE_MARKER": marker_path(cfg),
        "DOWNLOADS": json.dumps(downloads(cfg)),
        "IGNORE_PATTERNS": json.dumps(list(cfg.cache.download_ignore_patterns)),
        "MAX_WORKERS": str(cfg.cache.download_max_workers),
        "DOWNLOAD_DEADLINE_SECONDS": str(download_seconds(cfg, weights_on_disk_gib)),
        "PRUNE_OTHER_REVISIONS": "1" if delivery_mode(cfg) == "per_replica_volume" else "0",
        "HF_HUB_DOWNLOAD_TIMEOUT": "60",  # a stalled connection errors and the Job retries (resumes)
        "HF_HUB_DISABLE_TELEMETRY": "1",
        # hf_xet keeps a 10 GB chunk cache in $HF_HOME/xet by default: on the shared volume it would eat the
        # headroom (more than all of it for an 8B model). Off, and its small metadata kept in HOME.
        "HF_XET_CACHE": f"{HOME}/.cache/xet",
        "HF_XET_CHUNK_CACHE_SIZE_BYTES": "0",
    }
    if with_token:
        env["HF_TOKEN_PATH"] = f"{HF_TOKEN_DIR}/{HF_TOKEN_KEY}"  # a file, never an env var
    return [{"name": key, "value": value} for key, value in env.items()]


def download_volumes(claim: str, token_secret: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    volumes: list[dict[str, Any]] = [
        {"name": "model-cache", "persistentVolumeClaim": {"claimName": claim}},
        {"name": "home", "emptyDir": {"sizeLimit": "1Gi"}},
        {"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}},
    ]
    mounts: list[dict[str, Any]] = [
        {"name": "model-cache", "mountPath": HF_HOME},
        {"name": "home", "mountPath": HOME},
        {"name": "tmp", "mountPath": "/tmp"},
    ]
    if token_secret:
        # 0440: root-owned with group fsGroup, readable by the non-root user through its group.
        volumes.append({"name": "hf-token", "secret": {"secretName": token_secret, "defaultMode": 0o440}})
        mounts.append({"name": "hf-token", "mountPath": HF_TOKEN_DIR, "readOnly": True})
    return volumes, mounts


def render_download_container(
    cfg: StackConfig, weights_on_disk_gib: float, token_secret: str | None, mounts: list[dict[str, Any]]
) -> dict[str, Any]:
    """Runs the script with huggingface_hub: the Job's container, or a per-replica init container."""
    return {
        "name": "download",
        "image": download_image(cfg),
        "imagePullPolicy": cfg.vllm.image_pull_policy,
        "command": ["python3", "-c", DOWNLOAD_SCRIPT],
        "env": _download_env(cfg, weights_on_disk_gib, token_secret is not None),
        "volumeMounts": mounts,
        "resources": container_resources(cfg.cache.download_cpu, cfg.cache.download_memory_gib),
        "securityContext": container_security_context(),
    }


def render_download_job(
    cfg: StackConfig,
    weights_on_disk_gib: float,
    *,
    name: str,
    namespace: str,
    claim: str,
    service_account: str,
    labels: dict[str, str],
    token_secret: str | None,
) -> dict[str, Any]:
    """One pod, one writer. No ttlSecondsAfterFinished: Pulumi would see the Job vanish and recreate it.
    skipAwait: the claim's bind await and the server's rollout wait for it instead (components/model_cache.py)."""
    volumes, mounts = download_volumes(claim, token_secret)
    metadata = {"name": name, "namespace": namespace, "labels": dict(labels), "annotations": {SKIP_AWAIT: "true"}}
    return render_restricted_job(
        cfg.security,
        metadata,
        [render_download_container(cfg, weights_on_disk_gib, token_secret, mounts)],
        volumes,
        backoff_limit=4,
        deadline_seconds=download_timeout_seconds(cfg, weights_on_disk_gib),
        service_account=service_account,
        pod_extra=_download_placement(cfg),
    )


def _download_placement(cfg: StackConfig) -> dict[str, Any]:
    """A ReadWriteOnce volume is usually zonal and, with WaitForFirstConsumer, provisioned where its first pod
    runs: the Job then runs on the server's GPU nodes (without requesting GPUs), so the volume lands in a zone
    the server can reach. ReadWriteMany volumes can be filled from any node."""
    volume = effective_volume(cfg)
    if volume is None or volume.access_mode != "ReadWriteOnce":
        return {}
    # TRANSITIONAL (server branch): the delivery branch passes plan.placement here instead.
    return scheduling.render_gpu_node_placement(resolve_placement(cfg, most_replicas(cfg)))


def render_wait_container(cfg: StackConfig) -> dict[str, Any]:
    """Init container of the server: block until the download Job's marker exists. Uses the vLLM image
    (already pulled for the server) so no extra image is needed."""
    return {
        "name": "wait-for-model-cache",
        "image": cfg.vllm.image_ref,
        "imagePullPolicy": cfg.vllm.image_pull_policy,
        "command": ["sh", "-c", WAIT_SCRIPT],
        "env": [{"name": "CACHE_MARKER", "value": marker_path(cfg)}],
        "volumeMounts": [{"name": "model-cache", "mountPath": HF_HOME, "readOnly": True}],
        "resources": container_resources("100m", 0.125),
        "securityContext": container_security_context(),
    }
