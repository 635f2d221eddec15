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

from typing import Any

from components.render.resources import container_resources
from components.render.security import (
    API_KEY_KEY,
    api_key_annotations,
    container_security_context,
    render_restricted_job,
)
from plan.identity import Identity
from plan.traffic import RETRIES, SmokePlan, TrafficPlan, smoke_script

COMPONENT = "smoke-test"
SCRIPT_DIR = "/opt/smoke"
API_KEY_DIR = "/var/run/secrets/vllm-api-key"
__all__ = ["smoke_script"]  # docker_host.py uploads the same script


def render_smoke_configmap(identity: Identity, smoke: SmokePlan) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": smoke.name, "namespace": identity.namespace, "labels": identity.labels(COMPONENT)},
        "data": {"check.py": smoke_script()},
    }


def check_command(smoke: SmokePlan, script: str, base_url: str, key_file: str) -> list[str]:
    """`python3 smoke/check.py ...` against the server; the Host header through the KEDA HTTP add-on's interceptor;
    the key file only when the server requires a key."""
    command = [
        "python3",
        "-B",
        script,
        "--base-url",
        base_url,
        "--model",
        smoke.served_model_name,
        "--timeout-seconds",
        str(smoke.timeout_seconds),
        "--max-tokens",
        str(smoke.max_tokens),
    ]
    if smoke.host is not None:
        command += ["--host", smoke.host]
    return [*command, "--api-key-file", key_file] if smoke.require_api_key else command


def _volumes(identity: Identity, smoke: SmokePlan) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    # 0440/0444: root-owned files readable by the non-root user through its fsGroup.
    volumes: list[dict[str, Any]] = [
        {"name": "script", "configMap": {"name": smoke.name, "defaultMode": 0o444}},
        {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}},
    ]
    mounts: list[dict[str, Any]] = [
        {"name": "script", "mountPath": SCRIPT_DIR, "readOnly": True},
        {"name": "tmp", "mountPath": "/tmp"},
    ]
    if smoke.require_api_key:
        volumes.append({"name": "api-key", "secret": {"secretName": identity.names.api_key_secret, "defaultMode": 0o440}})
        mounts.append({"name": "api-key", "mountPath": API_KEY_DIR, "readOnly": True})
    return volumes, mounts


def render_smoke_job(identity: Identity, traffic: TrafficPlan, smoke: SmokePlan) -> dict[str, Any]:
    """One request per attempt; no ttlSecondsAfterFinished (Pulumi would see the Job vanish and recreate it).
    With a key, the pod template carries its fingerprint, as the server's does: a rotated key changes the
    template, which replaces the Job (its template is immutable), so the check runs again with the new key."""
    volumes, mounts = _volumes(identity, smoke)
    container = {
        "name": "smoke-test",
        "image": smoke.image,
        "imagePullPolicy": "IfNotPresent",
        "command": check_command(smoke, f"{SCRIPT_DIR}/check.py", traffic.service_url, f"{API_KEY_DIR}/{API_KEY_KEY}"),
        "env": [{"name": "PYTHONUNBUFFERED", "value": "1"}],
        "volumeMounts": mounts,
        "resources": container_resources("100m", 0.125),
        "securityContext": container_security_context(),
        "terminationMessagePolicy": "FallbackToLogsOnError",  # the failure line reaches `pulumi up`'s error
    }
    metadata = {"name": smoke.name, "namespace": identity.namespace, "labels": identity.labels(COMPONENT)}
    return render_restricted_job(
        smoke.security,
        metadata,
        [container],
        volumes,
        backoff_limit=RETRIES,
        deadline_seconds=smoke.deadline_seconds,
        pod_annotations=api_key_annotations(identity.names.api_key_secret if smoke.require_api_key else None),
    )


def render_smoke_test(identity: Identity, traffic: TrafficPlan) -> list[dict[str, Any]]:
    """The ConfigMap and the Job, or nothing when smoke_test.enabled is false."""
    if traffic.smoke is None:
        return []
    return [render_smoke_configmap(identity, traffic.smoke), render_smoke_job(identity, traffic, traffic.smoke)]


# The Docker target: the same script in a one-shot container that shares the vLLM container's network
# namespace, so it calls the server on 127.0.0.1 at the container port. pulumi-docker (terraform-provider-docker)
# with attach: true waits for the container to stop, keeps its logs with logs: true, and with must_run: false
# records exit_code instead of failing (kreuzwerker/terraform-provider-docker
# internal/provider/resource_docker_container_funcs.go, resourceDockerContainerCreate / Read).
DOCKER_SCRIPT = "/opt/smoke/check.py"
DOCKER_KEY_FILE = "/run/secrets/vllm_api_key"


def docker_smoke_command(smoke: SmokePlan, port: int) -> list[str]:
    return check_command(smoke, DOCKER_SCRIPT, f"http://127.0.0.1:{port}", DOCKER_KEY_FILE)


def docker_smoke_spec(smoke: SmokePlan, port: int, vllm_container_name: str) -> dict[str, Any]:
    """`docker.Container` arguments but `image`, `network_mode` (the vLLM container's id) and `uploads`.
    SMOKE_KEY changes with the model, revision and images, which replaces the container: the check reruns."""
    return {
        "name": f"{vllm_container_name}-smoke-test",
        "command": docker_smoke_command(smoke, port),
        "envs": [f"SMOKE_KEY={smoke.key}", "PYTHONUNBUFFERED=1"],
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
