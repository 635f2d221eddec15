"""The Job that copies the Hub snapshot to an s3:// bucket once, for delivery.mode object_storage. Pure.

File by file: each is fetched with huggingface_hub into a small scratch directory, uploaded with boto3 and
deleted, so the scratch holds one shard at a time. A file already in the bucket with the size the Hub's
metadata gives is skipped before it is fetched (a retry resumes), and a completion object is written last; a
later run that finds it exits at once. Each file has its own deadline (its size at the copy's rate), within the
attempt's. A 401, 403 or 404 fails with its cause (cache.py FAILURE_REASONS).
boto3 is in the vllm-openai images (`vllm-openai-base` stage of vllm-project/vllm docker/Dockerfile installs
it), so the vLLM image serves; gs:// and az:// would need other clients and are refused by the config check.
"""

from __future__ import annotations

import json
from typing import Any

from components.render.cache import FAILURE_REASONS, TERMINATION_MESSAGE_POLICY, download_volumes
from components.render.resources import container_resources
from components.render.security import (
    HF_TOKEN_DIR,
    HF_TOKEN_KEY,
    container_security_context,
    render_restricted_job,
)
from config.delivery import STS_ENDPOINT_ENV
from config.kubernetes import CacheConfig
from config.vllm import VllmConfig
from plan.delivery import DeliveryPlan
from plan.names import HOME
from plan.security import PodSecurity

COMPLETE_OBJECT = ".vllm-serving-complete"
SCRATCH_GIB = 20  # one safetensors shard at a time (Hub checkpoints shard at about 5-10 GB)
FILE_MIN_SECONDS = 60  # a small file's deadline: the Hub's and the bucket's round trips, not its bytes

COPY_SCRIPT = (
    """\
import fnmatch, json, math, os, signal, sys, time
import boto3
from huggingface_hub import HfApi, hf_hub_download
deadline = int(os.environ["COPY_DEADLINE_SECONDS"])
end = time.monotonic() + deadline  # counts from here: not the time queued for a node, not the image pull
current = ["the Hub's file list"]
def give_up(*_):
    print(f"copy deadline passed on {current[0]}; a retry skips the files already in the bucket", flush=True)
    os._exit(1)
signal.signal(signal.SIGALRM, give_up)
signal.alarm(deadline)
def arm(name, nbytes):
    # One file's own deadline (its size at the copy's rate, at least a minute), within the whole attempt's: a
    # stalled shard stops the attempt when it is overdue, not when the attempt's deadline for every file is.
    current[0] = name
    own = math.ceil((nbytes or 0) / 2**30 * float(os.environ["COPY_SECONDS_PER_GIB"]))
    own = max(int(os.environ["COPY_FILE_MIN_SECONDS"]), own)
    signal.alarm(max(1, min(own, math.ceil(end - time.monotonic()))))
bucket, _, prefix = os.environ["TARGET"].removeprefix("s3://").partition("/")
prefix = prefix.rstrip("/") + "/" if prefix else ""
s3 = boto3.client("s3")
def size(key):
    try:
        return s3.head_object(Bucket=bucket, Key=key)["ContentLength"]
    except s3.exceptions.ClientError:
        return None
def copy():
    if size(prefix + os.environ["COMPLETE_OBJECT"]) is not None:
        print("the bucket copy is already complete"); sys.exit(0)
    repo, revision = json.loads(os.environ["DOWNLOADS"])[0]
    ignore = json.loads(os.environ["IGNORE_PATTERNS"])
    # The Hub's file sizes, before any download: a file already in the bucket with its size is skipped, so a
    # retry after a deadline resumes with the files still missing instead of fetching every shard again.
    info = HfApi().model_info(repo, revision=revision, files_metadata=True)
    files = [(f.rfilename, f.size) for f in info.siblings if not any(fnmatch.fnmatch(f.rfilename, p) for p in ignore)]
    for name, hub_size in files:
        if hub_size is not None and size(prefix + name) == hub_size:
            print(f"already in the bucket: {name}", flush=True)
            continue
        arm(name, hub_size)
        local = hf_hub_download(repo, name, revision=revision, cache_dir=os.environ["SCRATCH"])
        s3.upload_file(local, bucket, prefix + name)
        os.remove(os.path.realpath(local))
        print(f"copied {name}", flush=True)
    s3.put_object(Bucket=bucket, Key=prefix + os.environ["COMPLETE_OBJECT"], Body=json.dumps([repo, revision]).encode())
"""
    + FAILURE_REASONS
    + """\
try:
    copy()
except Exception as error:
    why = reason(error)
    if why is None:
        raise  # a stall or a server error: the Job retries, and the retry skips what the bucket holds
    sys.exit(f"bucket copy failed: {why}")
"""
)


def _copy_env(delivery: DeliveryPlan, cache: CacheConfig, with_token: bool) -> list[dict[str, str]]:
    bucket = delivery.bucket
    env = {
        "HOME": HOME,
        "TARGET": delivery.model_uri or "",
        "COMPLETE_OBJECT": COMPLETE_OBJECT,
        "DOWNLOADS": json.dumps(delivery.downloads),
        "SCRATCH": "/tmp/hub",
        "IGNORE_PATTERNS": json.dumps(list(cache.download_ignore_patterns)),
        "COPY_DEADLINE_SECONDS": str(delivery.copy_seconds),
        "COPY_SECONDS_PER_GIB": f"{delivery.copy_seconds_per_gib:g}",
        "COPY_FILE_MIN_SECONDS": str(FILE_MIN_SECONDS),
        "HF_HUB_DOWNLOAD_TIMEOUT": "60",
        "HF_HUB_DISABLE_TELEMETRY": "1",
    }
    env |= delivery.xet_env  # hf_xet's buffers within the container's memory, no chunk cache in the scratch
    if bucket and bucket.endpoint_url:
        env["AWS_ENDPOINT_URL"] = bucket.endpoint_url
    if delivery.sts_endpoint_url:  # the copy's boto3 exchanges IRSA's token too (plan/delivery.py sts_endpoint_url)
        env[STS_ENDPOINT_ENV] = delivery.sts_endpoint_url
    if with_token:
        env["HF_TOKEN_PATH"] = f"{HF_TOKEN_DIR}/{HF_TOKEN_KEY}"
    env |= delivery.hub_env  # the mirror or proxy the policy admits, for the Hub and the bucket (plan/egress.py)
    return [{"name": key, "value": value} for key, value in env.items()]


def render_copy_job(
    delivery: DeliveryPlan,
    vllm: VllmConfig,
    cache: CacheConfig,
    security: PodSecurity,
    *,
    namespace: str,
    service_account: str,
    labels: dict[str, str],
) -> dict[str, Any]:
    """Awaited by Pulumi (no claim to bind): the server starts once the bucket holds the copy."""
    token_secret = delivery.hf_token_secret
    volumes, mounts = download_volumes("", token_secret)
    volumes = [v for v in volumes if v["name"] != "model-cache"]
    volumes = [{**v, "emptyDir": {"sizeLimit": f"{SCRATCH_GIB}Gi"}} if v["name"] == "tmp" else v for v in volumes]
    container = {
        "name": "copy",
        "image": delivery.download_image,
        "imagePullPolicy": vllm.image_pull_policy,
        "command": ["python3", "-c", COPY_SCRIPT],
        "env": _copy_env(delivery, cache, token_secret is not None),
        **_bucket_credentials(delivery),
        "volumeMounts": [m for m in mounts if m["name"] != "model-cache"],
        "resources": container_resources(cache.download_cpu, cache.download_memory_gib),
        "securityContext": container_security_context(),
        "terminationMessagePolicy": TERMINATION_MESSAGE_POLICY,
    }
    metadata = {"name": delivery.copy_job, "namespace": namespace, "labels": dict(labels)}
    return render_restricted_job(
        security,
        metadata,
        [container],
        volumes,
        backoff_limit=4,
        deadline_seconds=delivery.copy_deadline_seconds,
        service_account=service_account,
    )


def _bucket_credentials(delivery: DeliveryPlan) -> dict[str, Any]:
    bucket = delivery.bucket
    if bucket is None or not bucket.credentials_secret:
        return {}
    return {"envFrom": [{"secretRef": {"name": bucket.credentials_secret}}]}
