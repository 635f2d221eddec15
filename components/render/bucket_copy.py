"""The Job that copies the Hub snapshot to an s3:// bucket once, for delivery.mode object_storage. Pure.

File by file: each is fetched with huggingface_hub into a small scratch directory, uploaded with boto3 and
deleted, so the scratch holds one shard at a time. A file already in the bucket with the same size is
skipped (a retry resumes), and a completion object is written last; a later run that finds it exits at once.
boto3 is in the vllm-openai images (`vllm-openai-base` stage of vllm-project/vllm docker/Dockerfile installs
it), so the vLLM image serves; gs:// and az:// would need other clients and are refused by the config check.
"""

from __future__ import annotations

import json
from typing import Any

from components.render.cache import cache_key, download_image, download_volumes, downloads
from components.render.resources import container_resources
from components.render.security import (
    HF_TOKEN_DIR,
    HF_TOKEN_KEY,
    container_security_context,
    render_restricted_job,
)
from config.delivery import delivery_mode
from config.stack import StackConfig
from plan.names import HOME, Names

COMPLETE_OBJECT = ".vllm-serving-complete"
SCRATCH_GIB = 20  # one safetensors shard at a time (Hub checkpoints shard at about 5-10 GB)

COPY_SCRIPT = """\
import fnmatch, json, os, signal, sys
import boto3
from huggingface_hub import HfApi, hf_hub_download
deadline = int(os.environ["COPY_DEADLINE_SECONDS"])
def give_up(*_):
    print(f"copy deadline of {deadline} s passed; a retry skips the files already in the bucket", flush=True)
    os._exit(1)
signal.signal(signal.SIGALRM, give_up)
signal.alarm(deadline)  # counts from here: not the time queued for a node, not the image pull
bucket, _, prefix = os.environ["TARGET"].removeprefix("s3://").partition("/")
prefix = prefix.rstrip("/") + "/" if prefix else ""
s3 = boto3.client("s3")
def size(key):
    try:
        return s3.head_object(Bucket=bucket, Key=key)["ContentLength"]
    except s3.exceptions.ClientError:
        return None
if size(prefix + os.environ["COMPLETE_OBJECT"]) is not None:
    print("the bucket copy is already complete"); sys.exit(0)
repo, revision = json.loads(os.environ["DOWNLOADS"])[0]
ignore = json.loads(os.environ["IGNORE_PATTERNS"])
files = [f for f in HfApi().list_repo_files(repo, revision=revision) if not any(fnmatch.fnmatch(f, p) for p in ignore)]
for name in files:
    local = hf_hub_download(repo, name, revision=revision, cache_dir=os.environ["SCRATCH"])
    if size(prefix + name) != os.path.getsize(local):
        s3.upload_file(local, bucket, prefix + name)
    os.remove(os.path.realpath(local))
    print(f"copied {name}", flush=True)
s3.put_object(Bucket=bucket, Key=prefix + os.environ["COMPLETE_OBJECT"], Body=json.dumps([repo, revision]).encode())
"""


def copies_to_bucket(cfg: StackConfig) -> bool:
    bucket = cfg.delivery.object_storage
    return delivery_mode(cfg) == "object_storage" and bucket is not None and bucket.copy_from_hub


def copy_job_name(cfg: StackConfig, instance: str) -> str:
    """A new Job per model, revision and bucket folder."""
    bucket = cfg.delivery.object_storage
    uri = bucket.uri if bucket else ""
    return Names(instance).download_job(cache_key(uri, *(part for pair in downloads(cfg) for part in pair)))


def copy_seconds(cfg: StackConfig, weights_on_disk_gib: float) -> int:
    """One attempt: fetching and uploading (twice the bytes) at the configured download speed, x1.5."""
    return int(weights_on_disk_gib / cfg.cache.download_throughput_gib_per_s * 1.5 * 2)


def _copy_env(cfg: StackConfig, weights_on_disk_gib: float, with_token: bool) -> list[dict[str, str]]:
    bucket = cfg.delivery.object_storage
    env = {
        "HOME": HOME,
        "TARGET": bucket.model_uri(cfg.model.revision) if bucket else "",
        "COMPLETE_OBJECT": COMPLETE_OBJECT,
        "DOWNLOADS": json.dumps(downloads(cfg)),
        "SCRATCH": "/tmp/hub",
        "IGNORE_PATTERNS": json.dumps(list(cfg.cache.download_ignore_patterns)),
        "COPY_DEADLINE_SECONDS": str(copy_seconds(cfg, weights_on_disk_gib)),
        "HF_HUB_DOWNLOAD_TIMEOUT": "60",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_XET_CHUNK_CACHE_SIZE_BYTES": "0",
    }
    if bucket and bucket.endpoint_url:
        env["AWS_ENDPOINT_URL"] = bucket.endpoint_url
    if with_token:
        env["HF_TOKEN_PATH"] = f"{HF_TOKEN_DIR}/{HF_TOKEN_KEY}"
    return [{"name": key, "value": value} for key, value in env.items()]


def render_copy_job(
    cfg: StackConfig,
    weights_on_disk_gib: float,
    *,
    name: str,
    namespace: str,
    service_account: str,
    labels: dict[str, str],
    token_secret: str | None,
) -> dict[str, Any]:
    """Awaited by Pulumi (no claim to bind): the server starts once the bucket holds the copy."""
    volumes, mounts = download_volumes("", token_secret)
    volumes = [v for v in volumes if v["name"] != "model-cache"]
    volumes = [{**v, "emptyDir": {"sizeLimit": f"{SCRATCH_GIB}Gi"}} if v["name"] == "tmp" else v for v in volumes]
    container = {
        "name": "copy",
        "image": download_image(cfg),
        "imagePullPolicy": cfg.vllm.image_pull_policy,
        "command": ["python3", "-c", COPY_SCRIPT],
        "env": _copy_env(cfg, weights_on_disk_gib, token_secret is not None),
        **_bucket_credentials(cfg),
        "volumeMounts": [m for m in mounts if m["name"] != "model-cache"],
        "resources": container_resources(cfg.cache.download_cpu, cfg.cache.download_memory_gib),
        "securityContext": container_security_context(),
    }
    metadata = {"name": name, "namespace": namespace, "labels": dict(labels)}
    return render_restricted_job(
        cfg.security,
        metadata,
        [container],
        volumes,
        backoff_limit=4,
        deadline_seconds=copy_deadline_seconds(cfg, weights_on_disk_gib),
        service_account=service_account,
    )


def copy_deadline_seconds(cfg: StackConfig, weights_on_disk_gib: float) -> int:
    """Upper bound over every attempt: the script's own deadline, the image pull and 2 min for the pod."""
    return copy_seconds(cfg, weights_on_disk_gib) + cfg.server.image_pull_seconds + 120


def _bucket_credentials(cfg: StackConfig) -> dict[str, Any]:
    bucket = cfg.delivery.object_storage
    if bucket is None or not bucket.credentials_secret:
        return {}
    return {"envFrom": [{"secretRef": {"name": bucket.credentials_secret}}]}
