"""The post-deploy smoke test: a ConfigMap holding smoke/check.py and a Job that runs it once against the
Service, after the rollout. Pure.

Names carry a hash of what the answer depends on (model, revision, served name, vLLM image, smoke image,
script, bounds): a change creates a new Job, which runs again; an unchanged stack keeps the completed one.
A failed Job fails `pulumi up`: pulumi-kubernetes awaits Job completion and, on `Failed`
(BackoffLimitExceeded), reports the pod's container errors, whose `[Error] <message>` is the termination
message (pulumi/pulumi-kubernetes provider/pkg/await/job.go@01ec12ad, checker/pod/check.go@2cfdf108
containerTerminatedError). With FallbackToLogsOnError the message is the script's last log line.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from typing import Any

from components.render.exposure import service_url
from components.render.resources import container_resources
from components.render.security import API_KEY_KEY, container_security_context, render_restricted_job
from config.stack import StackConfig
from plan.names import Names, cache_key, labels, namespace_name

COMPONENT = "smoke-test"
SCRIPT_PATH = Path(__file__).resolve().parents[2] / "smoke" / "check.py"
SCRIPT_DIR = "/opt/smoke"
API_KEY_DIR = "/var/run/secrets/vllm-api-key"
IMAGE_PULL_SECONDS = 300  # the small python image, pulled on a CPU node
RETRIES = 1  # one retry: a connection reset while the last old pod drains is not a failed deploy


@cache
def smoke_script() -> str:
    return SCRIPT_PATH.read_text(encoding="utf-8")


def smoke_key(cfg: StackConfig) -> str:
    """What the answer depends on; a new key names a new ConfigMap and Job."""
    script = hashlib.sha256(smoke_script().encode()).hexdigest()
    smoke = cfg.smoke_test
    return cache_key(
        cfg.model.id,
        cfg.model.revision,
        cfg.served_model_name,
        cfg.vllm.image_ref,
        smoke.image,
        script,
        str(smoke.timeout_seconds),
        str(smoke.max_tokens),
        str(cfg.security.require_api_key),
    )


def smoke_name(cfg: StackConfig, instance: str) -> str:
    return f"{instance}-smoke-test-{smoke_key(cfg)}"


def deadline_seconds(cfg: StackConfig) -> int:
    """activeDeadlineSeconds: every attempt's bound plus a minute each, and the image pull."""
    return (RETRIES + 1) * (cfg.smoke_test.timeout_seconds + 60) + IMAGE_PULL_SECONDS


def render_smoke_configmap(cfg: StackConfig, instance: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": smoke_name(cfg, instance),
            "namespace": namespace_name(cfg.namespace, instance),
            "labels": labels(instance, COMPONENT),
        },
        "data": {"check.py": smoke_script()},
    }


def check_command(cfg: StackConfig, script: str, base_url: str, key_file: str) -> list[str]:
    """`python3 smoke/check.py ...` against the server; the key file only when the server requires a key."""
    command = [
        "python3",
        "-B",
        script,
        "--base-url",
        base_url,
        "--model",
        cfg.served_model_name,
        "--timeout-seconds",
        str(cfg.smoke_test.timeout_seconds),
        "--max-tokens",
        str(cfg.smoke_test.max_tokens),
    ]
    return [*command, "--api-key-file", key_file] if cfg.security.require_api_key else command


def smoke_command(cfg: StackConfig, instance: str) -> list[str]:
    return check_command(cfg, f"{SCRIPT_DIR}/check.py", service_url(cfg, instance), f"{API_KEY_DIR}/{API_KEY_KEY}")


def _volumes(cfg: StackConfig, instance: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    # 0440/0444: root-owned files readable by the non-root user through its fsGroup.
    volumes: list[dict[str, Any]] = [
        {"name": "script", "configMap": {"name": smoke_name(cfg, instance), "defaultMode": 0o444}},
        {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}},
    ]
    mounts: list[dict[str, Any]] = [
        {"name": "script", "mountPath": SCRIPT_DIR, "readOnly": True},
        {"name": "tmp", "mountPath": "/tmp"},
    ]
    if cfg.security.require_api_key:
        volumes.append({"name": "api-key", "secret": {"secretName": Names(instance).api_key_secret, "defaultMode": 0o440}})
        mounts.append({"name": "api-key", "mountPath": API_KEY_DIR, "readOnly": True})
    return volumes, mounts


def render_smoke_job(cfg: StackConfig, instance: str) -> dict[str, Any]:
    """One request per attempt; no ttlSecondsAfterFinished (Pulumi would see the Job vanish and recreate it)."""
    volumes, mounts = _volumes(cfg, instance)
    container = {
        "name": "smoke-test",
        "image": cfg.smoke_test.image,
        "imagePullPolicy": "IfNotPresent",
        "command": smoke_command(cfg, instance),
        "env": [{"name": "PYTHONUNBUFFERED", "value": "1"}],
        "volumeMounts": mounts,
        "resources": container_resources("100m", 0.125),
        "securityContext": container_security_context(),
        "terminationMessagePolicy": "FallbackToLogsOnError",  # the failure line reaches `pulumi up`'s error
    }
    metadata = {
        "name": smoke_name(cfg, instance),
        "namespace": namespace_name(cfg.namespace, instance),
        "labels": labels(instance, COMPONENT),
    }
    return render_restricted_job(
        cfg.security, metadata, [container], volumes, backoff_limit=RETRIES, deadline_seconds=deadline_seconds(cfg)
    )


def render_smoke_test(cfg: StackConfig, instance: str) -> list[dict[str, Any]]:
    """The ConfigMap and the Job, or nothing when smoke_test.enabled is false."""
    if not cfg.smoke_test.enabled:
        return []
    return [render_smoke_configmap(cfg, instance), render_smoke_job(cfg, instance)]


# The Docker target: the same script in a one-shot container that shares the vLLM container's network
# namespace, so it calls the server on 127.0.0.1 at the container port. pulumi-docker (terraform-provider-docker)
# with attach: true waits for the container to stop, keeps its logs with logs: true, and with must_run: false
# records exit_code instead of failing (kreuzwerker/terraform-provider-docker
# internal/provider/resource_docker_container_funcs.go, resourceDockerContainerCreate / Read).
DOCKER_SCRIPT = "/opt/smoke/check.py"
DOCKER_KEY_FILE = "/run/secrets/vllm_api_key"


def docker_smoke_command(cfg: StackConfig) -> list[str]:
    return check_command(cfg, DOCKER_SCRIPT, f"http://127.0.0.1:{cfg.server.port}", DOCKER_KEY_FILE)


def render_docker_smoke(cfg: StackConfig, vllm_container_name: str) -> dict[str, Any]:
    """`docker.Container` arguments but `image`, `network_mode` (the vLLM container's id) and `uploads`.
    SMOKE_KEY changes with the model, revision and images, which replaces the container: the check reruns."""
    return {
        "name": f"{vllm_container_name}-smoke-test",
        "command": docker_smoke_command(cfg),
        "envs": [f"SMOKE_KEY={smoke_key(cfg)}", "PYTHONUNBUFFERED=1"],
        "attach": True,
        "logs": True,
        "must_run": False,
        "start": True,
    }


def docker_smoke_verdict(exit_code: int | None, logs: str | None) -> str:
    """The smoke container's result as one line; raises RuntimeError (failing `pulumi up`) unless it passed."""
    text = (logs or "").strip()
    if exit_code is None:  # no run recorded (the engine's mocks; a real `up` waits for the exit code)
        return "smoke test not run"
    if exit_code == 0:
        return text.splitlines()[-1] if text else "smoke test passed"
    last = text.splitlines()[-1] if text else "(no output)"
    raise RuntimeError(f"the smoke test container exited with code {exit_code}: {last}")
