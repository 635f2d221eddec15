"""priorityClassName, runtimeClassName and imagePullSecrets on the server and download pods."""

from __future__ import annotations

from typing import Any

import pytest

from config.errors import ConfigError
from tests.factories import make_config
from tests.kubernetes_fixtures import configured, manifests, model_cache_job, pod_spec, stack
from tests.program import run_main

SETTINGS: dict[str, Any] = {
    "scheduling": {"priority_class_name": "gpu-inference", "runtime_class_name": "nvidia"},
    "server": {"image_pull_secrets": ["registry-a", "registry-b"]},
}
PULL_SECRETS = [{"name": "registry-a"}, {"name": "registry-b"}]


def job_pod_spec(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return model_cache_job(objects)["spec"]["template"]["spec"]


def test_the_server_pod_gets_the_priority_class():
    assert pod_spec(manifests(*configured(**SETTINGS)))["priorityClassName"] == "gpu-inference"


def test_the_server_pod_gets_the_runtime_class():
    assert pod_spec(manifests(*configured(**SETTINGS)))["runtimeClassName"] == "nvidia"


def test_the_server_pod_gets_the_image_pull_secrets_in_order():
    assert pod_spec(manifests(*configured(**SETTINGS)))["imagePullSecrets"] == PULL_SECRETS


def test_the_download_job_gets_the_priority_class_and_pull_secrets():
    spec = job_pod_spec(manifests(*configured(**SETTINGS)))
    assert (spec["priorityClassName"], spec["imagePullSecrets"]) == ("gpu-inference", PULL_SECRETS)


def test_the_download_job_gets_no_gpu_runtime_class():
    assert "runtimeClassName" not in job_pod_spec(manifests(*configured(**SETTINGS)))


@pytest.mark.parametrize("field", ["priorityClassName", "runtimeClassName", "imagePullSecrets"])
def test_unset_settings_leave_the_cluster_defaults(field: str):
    objects = manifests(*stack("prod-on-efs"))
    assert field not in pod_spec(objects) and field not in job_pod_spec(objects)


def test_the_program_registers_the_settings_on_deployment_and_job():
    config = {
        "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
        "gpu": {"product": "A100-SXM4-80GB"},
        "engine": {"max_model_len": 8192},
        **SETTINGS,
    }
    registered, error = run_main(config)
    assert error is None
    server = registered.one("kubernetes:apps/v1:Deployment")["spec"]["template"]["spec"]
    job = registered.named("vllm-test-cache-download").inputs["spec"]["template"]["spec"]
    assert (server["priorityClassName"], server["runtimeClassName"], server["imagePullSecrets"]) == (
        "gpu-inference",
        "nvidia",
        PULL_SECRETS,
    )
    assert (job["priorityClassName"], job["imagePullSecrets"], "runtimeClassName" in job) == (
        "gpu-inference",
        PULL_SECRETS,
        False,
    )


def rendered_issues(**changes: Any) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        make_config(**changes)
    return [issue.render() for issue in caught.value.issues]


def test_a_priority_class_that_is_no_object_name_is_refused_with_the_fix():
    assert rendered_issues(scheduling={"priority_class_name": "GPU_High"}) == [
        "vllm-serving:scheduling.priority_class_name: 'GPU_High' is not a Kubernetes object name (RFC 1123 subdomain). "
        "Fix: use lower-case letters, digits, '-' and '.', at most 253 characters."
    ]


def test_a_bad_pull_secret_name_is_refused_naming_its_position():
    issues = rendered_issues(server={"image_pull_secrets": ["ok", "Not OK"]})
    assert issues[0].startswith("vllm-serving:server.image_pull_secrets[1]: 'Not OK' is not a Kubernetes object name")


DOCKER: dict[str, Any] = {"target": "docker", "docker": {}}


def test_a_docker_stack_refuses_a_runtime_class_and_says_why():
    assert rendered_issues(**DOCKER, scheduling={"runtime_class_name": "nvidia"}) == [
        "vllm-serving:scheduling.runtime_class_name: is 'nvidia', but scheduling is Kubernetes-only and target is "
        "'docker'. Fix: remove it; on docker the GPUs reach the container through docker.gpus (Docker's --gpus "
        "device requests), which needs no runtime class."
    ]


def test_a_docker_stack_refuses_image_pull_secrets():
    issues = rendered_issues(**DOCKER, server={"image_pull_secrets": ["registry-a"]})
    assert issues == [
        "vllm-serving:server.image_pull_secrets: is ['registry-a'], but server is Kubernetes-only and "
        "target is 'docker'. Fix: remove it; on docker the image is pulled with the Docker provider's "
        "registry credentials (docker login where pulumi runs)."
    ]


def test_a_docker_stack_refuses_a_priority_class():
    issues = rendered_issues(**DOCKER, scheduling={"priority_class_name": "high"})
    assert issues[0].endswith("Fix: remove it; one Docker host has no pod priorities.")
