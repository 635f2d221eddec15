"""The model cache: a PVC sized from the weights, a single-writer download Job, and the wait init container.

The Job fills the cache once and writes a completion marker only after every shard listed in
`model.safetensors.index.json` is on disk (peers §10 item 4). Server pods wait for the marker instead of
racing to download the same files, and load with HF_HUB_OFFLINE=1. Pure.
"""

from __future__ import annotations

import json
import math
from typing import Any

from catalog.models import MODELS
from components.render import scheduling
from components.render.names import HF_HOME, HOME, MARKER_DIR, Names, cache_key
from components.render.resources import container_resources
from components.render.security import HF_TOKEN_DIR, HF_TOKEN_KEY, container_security_context, pod_security_context
from config.stack import StackConfig

_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}

# Uses huggingface_hub's snapshot_download, whose arguments are stable from the 0.7.2 image to current
# ones (the CLI changed: `huggingface-cli download` became `hf download` with different list options).
DOWNLOAD_SCRIPT = """\
import json, os, pathlib, sys
from huggingface_hub import snapshot_download
marker = pathlib.Path(os.environ["CACHE_MARKER"])
if marker.exists():
    print(f"cache already complete: {marker}")
    sys.exit(0)
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
    return cfg.model.local_path is None


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


def claim_name(cfg: StackConfig, weights_on_disk_gib: float, instance: str) -> str:
    """The existing claim, or a created one named after its spec.

    pulumi-kubernetes replaces a PVC on any `.spec` change (provider diff.go forceNew), and with an unchanged
    name it must delete first: that waits on the pvc-protection finalizer while the server still mounts the
    volume. A new name per size, class and access mode makes the replacement create-before-delete instead.
    """
    if cfg.cache.existing_claim:
        return cfg.cache.existing_claim
    volume = (str(cache_size_gib(cfg, weights_on_disk_gib)), cfg.cache.storage_class_name, cfg.cache.access_mode)
    return Names(instance).cache_claim(cache_key(*volume))


def job_name(cfg: StackConfig, weights_on_disk_gib: float, instance: str) -> str:
    """A new Job for new content or a new volume: a Job that already completed never runs again, so a
    replaced (empty) volume would otherwise leave the server waiting for the marker forever."""
    claim = claim_name(cfg, weights_on_disk_gib, instance)
    return Names(instance).download_job(cache_key(claim, *(part for pair in downloads(cfg) for part in pair)))


def draft_weights_on_disk_gib(cfg: StackConfig) -> float:
    """The draft checkpoint's size when it is a catalog model; 0 otherwise (not sized)."""
    spec = cfg.engine.speculative
    arch = MODELS.get(spec.model) if spec is not None and spec.model else None
    return 0.0 if arch is None else arch.num_parameters * _DTYPE_BYTES[arch.torch_dtype] / 2**30


def default_size_gib(cfg: StackConfig, weights_on_disk_gib: float) -> int:
    weights = weights_on_disk_gib + draft_weights_on_disk_gib(cfg)
    return math.ceil(weights * (1 + cfg.cache.headroom_percent / 100) + 1)


def cache_size_gib(cfg: StackConfig, weights_on_disk_gib: float) -> int:
    return math.ceil(cfg.cache.size_gib) if cfg.cache.size_gib else default_size_gib(cfg, weights_on_disk_gib)


def download_timeout_seconds(cfg: StackConfig, weights_on_disk_gib: float) -> int:
    """Job deadline and Pulumi timeout: download at the configured speed x1.5, plus pulling the vLLM image
    (activeDeadlineSeconds counts from the Job's start, image pull included) and 2 min for the pod."""
    weights = weights_on_disk_gib + draft_weights_on_disk_gib(cfg)
    return math.ceil(weights / cfg.cache.download_throughput_gib_per_s * 1.5) + cfg.server.image_pull_seconds + 120


def render_pvc(cfg: StackConfig, weights_on_disk_gib: float, name: str, namespace: str,
               labels: dict[str, str]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "accessModes": [cfg.cache.access_mode],
        "volumeMode": "Filesystem",
        "resources": {"requests": {"storage": f"{cache_size_gib(cfg, weights_on_disk_gib)}Gi"}},
    }
    if cfg.cache.storage_class_name:
        spec["storageClassName"] = cfg.cache.storage_class_name
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)}, "spec": spec}


def _download_env(cfg: StackConfig, with_token: bool) -> list[dict[str, str]]:
    env = {
        "HOME": HOME, "HF_HOME": HF_HOME, "CACHE_MARKER": marker_path(cfg),
        "DOWNLOADS": json.dumps(downloads(cfg)),
        "IGNORE_PATTERNS": json.dumps(list(cfg.cache.download_ignore_patterns)),
        "MAX_WORKERS": str(cfg.cache.download_max_workers),
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


def _download_volumes(claim: str, token_secret: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    volumes: list[dict[str, Any]] = [
        {"name": "model-cache", "persistentVolumeClaim": {"claimName": claim}},
        {"name": "home", "emptyDir": {"sizeLimit": "1Gi"}},
        {"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}},
    ]
    mounts: list[dict[str, Any]] = [{"name": "model-cache", "mountPath": HF_HOME},
                                    {"name": "home", "mountPath": HOME}, {"name": "tmp", "mountPath": "/tmp"}]
    if token_secret:
        # 0440: root-owned with group fsGroup, readable by the non-root user through its group.
        volumes.append({"name": "hf-token", "secret": {"secretName": token_secret, "defaultMode": 0o440}})
        mounts.append({"name": "hf-token", "mountPath": HF_TOKEN_DIR, "readOnly": True})
    return volumes, mounts


def render_download_job(cfg: StackConfig, weights_on_disk_gib: float, *, name: str, namespace: str, claim: str,
                        service_account: str, labels: dict[str, str], token_secret: str | None) -> dict[str, Any]:
    """One pod, one writer. No ttlSecondsAfterFinished: Pulumi would see the Job vanish and recreate it."""
    volumes, mounts = _download_volumes(claim, token_secret)
    container = {
        "name": "download", "image": cfg.vllm.image_ref, "imagePullPolicy": cfg.vllm.image_pull_policy,
        "command": ["python3", "-c", DOWNLOAD_SCRIPT],
        "env": _download_env(cfg, token_secret is not None), "volumeMounts": mounts,
        "resources": container_resources(cfg.cache.download_cpu, cfg.cache.download_memory_gib),
        "securityContext": container_security_context(),
    }
    pod_spec = {"restartPolicy": "Never", "serviceAccountName": service_account,
                "automountServiceAccountToken": False, "enableServiceLinks": False,
                "securityContext": pod_security_context(cfg.security), "containers": [container], "volumes": volumes,
                **_download_placement(cfg)}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
            "spec": {"backoffLimit": 4, "activeDeadlineSeconds": download_timeout_seconds(cfg, weights_on_disk_gib),
                     "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec}}}


def _download_placement(cfg: StackConfig) -> dict[str, Any]:
    """A ReadWriteOnce volume is usually zonal and, with WaitForFirstConsumer, provisioned where its first pod
    runs: the Job then runs on the server's GPU nodes (without requesting GPUs), so the volume lands in a zone
    the server can reach. ReadWriteMany volumes can be filled from any node."""
    if cfg.cache.access_mode != "ReadWriteOnce":
        return {}
    placement: dict[str, Any] = {"tolerations": scheduling.render_tolerations(cfg)}
    affinity = scheduling.render_affinity(cfg)
    if affinity:
        placement["affinity"] = affinity
    if cfg.gpu.node_selector:
        placement["nodeSelector"] = scheduling.render_node_selector(cfg)
    return placement


def render_wait_container(cfg: StackConfig) -> dict[str, Any]:
    """Init container of the server: block until the download Job's marker exists. Uses the vLLM image
    (already pulled for the server) so no extra image is needed."""
    return {
        "name": "wait-for-model-cache", "image": cfg.vllm.image_ref, "imagePullPolicy": cfg.vllm.image_pull_policy,
        "command": ["sh", "-c", WAIT_SCRIPT], "env": [{"name": "CACHE_MARKER", "value": marker_path(cfg)}],
        "volumeMounts": [{"name": "model-cache", "mountPath": HF_HOME, "readOnly": True}],
        "resources": container_resources("100m", 0.125), "securityContext": container_security_context(),
    }
