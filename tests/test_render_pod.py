"""The server pod: probes and their computed budget, volumes, resources, security, shutdown."""

from __future__ import annotations

import pytest

from plan.names import HF_HOME
from tests.kubernetes_fixtures import (
    SET_FIXED_TERMS,
    configured,
    env_of,
    manifests,
    model_cache_job,
    one,
    pod_spec,
    server,
    stack,
    stack_with,
)

RESTRICTED_CONTAINER = {
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "runAsNonRoot": True,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


def all_containers(objects: list[dict]) -> list[dict]:
    spec = pod_spec(objects)
    job = model_cache_job(objects)["spec"]["template"]["spec"]
    return spec["containers"] + spec.get("initContainers", []) + job["containers"]


def test_command_is_vllm_serve_set_explicitly():
    assert server(manifests(*stack("prod-on-efs")))["command"] == ["vllm", "serve"]


def test_image_is_pinned_by_tag_with_an_explicit_pull_policy():
    container = server(manifests(*stack("prod-on-efs")))
    assert (container["image"], container["imagePullPolicy"]) == ("vllm/vllm-openai:v0.33.0", "IfNotPresent")


def test_image_digest_is_used_when_given():
    digest = "sha256:" + "a" * 64
    assert server(manifests(*configured(vllm={"digest": digest})))["image"].endswith("@" + digest)


def test_port_is_named_http():
    assert server(manifests(*stack("prod-on-efs")))["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]


def test_prod_startup_probe_budget_is_computed_from_the_70b_weights():
    probe = server(manifests(*stack_with("prod-on-efs", probes=SET_FIXED_TERMS)))["startupProbe"]
    # (131.4 GiB / 25 MiB/s, EFS's 100 shared by 4 replicas = 5383 s + 60 + 3 x 15 + 120) x 1.5 = 8412 s, in 10 s
    # periods
    assert (probe["httpGet"]["path"], probe["periodSeconds"], probe["failureThreshold"]) == ("/health", 10, 842)


def test_dev_startup_probe_budget_is_shorter_for_the_8b_weights():
    assert (
        server(manifests(*stack_with("dev", probes=SET_FIXED_TERMS)))["startupProbe"]["failureThreshold"] == 50
    )  # (15 GiB / 100 MiB/s = 153.6 s + 60 + 120) x 1.5 = 500 s: generic's unknown class


def test_startup_budget_includes_loading_the_draft_model():
    draft = {"method": "draft_model", "model": "meta-llama/Llama-3.1-8B-Instruct", "num_speculative_tokens": 3}
    plain = server(
        manifests(
            *configured(
                model={"id": "meta-llama/Llama-3.1-70B-Instruct"}, engine={"max_model_len": 8192, "tensor_parallel_size": 4}
            )
        )
    )
    speculative = server(
        manifests(
            *configured(
                model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
                engine={"max_model_len": 8192, "tensor_parallel_size": 4, "speculative": draft},
            )
        )
    )
    extra = speculative["startupProbe"]["failureThreshold"] - plain["startupProbe"]["failureThreshold"]
    assert 22 <= extra <= 23  # 14.96 GiB of draft weights / 100 MiB/s (unknown class) x 1.5 = 229.8 s, in 10 s periods


def test_startup_budget_override_sets_the_failure_threshold():
    probe = server(manifests(*configured(probes={"startup_seconds": 3600})))["startupProbe"]
    assert probe["failureThreshold"] * probe["periodSeconds"] == 3600


def test_engine_ready_timeout_equals_the_startup_budget():
    container = server(manifests(*stack("prod-on-efs")))
    probe = container["startupProbe"]
    assert env_of(container)["VLLM_ENGINE_READY_TIMEOUT_S"] == str(probe["failureThreshold"] * probe["periodSeconds"])


@pytest.mark.parametrize("probe", ["readinessProbe", "livenessProbe"])
def test_readiness_and_liveness_tolerate_a_busy_server(probe: str):
    settings = server(manifests(*stack("prod-on-efs")))[probe]
    assert settings["httpGet"]["path"] == "/health" and settings["timeoutSeconds"] >= 5


def test_liveness_timeout_is_fifteen_seconds():
    assert server(manifests(*stack("prod-on-efs")))["livenessProbe"]["timeoutSeconds"] == 15


def test_progress_deadline_covers_image_pull_download_and_startup_budget():
    # 242 s pull + 131.4 GiB / 0.1 GiB/s x 1.5 download + 8420 s probe budget (EFS shared by 4) + 120 s margin
    deployment = one(manifests(*stack_with("prod-on-efs", probes=SET_FIXED_TERMS)), "Deployment")
    assert deployment["spec"]["progressDeadlineSeconds"] == 242 + 1972 + 8420 + 120


def test_shared_memory_is_memory_backed_and_sized_for_tensor_parallel():
    volumes = {v["name"]: v for v in pod_spec(manifests(*stack("prod-on-efs")))["volumes"]}
    assert volumes["dshm"]["emptyDir"] == {"medium": "Memory", "sizeLimit": "8Gi"}


def test_cache_volume_is_mounted_at_the_hugging_face_cache_path():
    mounts = {m["name"]: m["mountPath"] for m in server(manifests(*stack("prod-on-efs")))["volumeMounts"]}
    assert mounts == {"model-cache": HF_HOME, "dshm": "/dev/shm", "home": "/home/vllm", "tmp": "/tmp"}


def test_memory_limit_includes_the_shared_memory():
    limits = server(manifests(*stack("prod-on-efs")))["resources"]["limits"]
    assert (limits["memory"], limits["cpu"]) == ("72Gi", "18")  # 16 + 12 x 4 + 8 GiB shm; 2 + 4 x 4 CPUs


def test_every_container_has_equal_cpu_and_memory_requests_and_limits():
    for container in all_containers(manifests(*stack("prod-on-efs"))):
        resources = container["resources"]
        assert {k: resources["requests"][k] for k in ("cpu", "memory")} == {
            k: resources["limits"][k] for k in ("cpu", "memory")
        }, container["name"]


def test_every_container_meets_the_restricted_pod_security_standard():
    assert all(c["securityContext"] == RESTRICTED_CONTAINER for c in all_containers(manifests(*stack("prod-on-efs"))))


def test_every_container_pull_policy_is_explicit():
    assert all(c["imagePullPolicy"] == "IfNotPresent" for c in all_containers(manifests(*stack("prod-on-efs"))))


def test_pod_runs_as_a_fixed_non_root_user_with_fs_group():
    context = pod_spec(manifests(*stack("prod-on-efs")))["securityContext"]
    assert context == {
        "runAsNonRoot": True,
        "runAsUser": 10001,
        "runAsGroup": 10001,
        "fsGroup": 10001,
        "fsGroupChangePolicy": "OnRootMismatch",
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def test_download_job_pod_runs_as_the_same_non_root_user():
    job = model_cache_job(manifests(*stack("prod-on-efs")))["spec"]["template"]["spec"]
    assert job["securityContext"] == pod_spec(manifests(*stack("prod-on-efs")))["securityContext"]


def test_service_links_are_disabled():
    assert pod_spec(manifests(*stack("prod-on-efs")))["enableServiceLinks"] is False


def test_pod_uses_its_own_service_account_without_a_token():
    spec = pod_spec(manifests(*stack("prod-on-efs")))
    assert (spec["serviceAccountName"], spec["automountServiceAccountToken"]) == ("llama-server", False)


def test_service_account_does_not_automount_a_token():
    accounts = [o for o in manifests(*stack("prod-on-efs")) if o["kind"] == "ServiceAccount"]
    assert accounts and [a["automountServiceAccountToken"] for a in accounts] == [False] * len(accounts)


def test_shutdown_sleeps_before_sigterm_and_leaves_time_to_drain():
    objects = manifests(*stack("prod-on-efs"))
    assert server(objects)["lifecycle"]["preStop"] == {"exec": {"command": ["sleep", "10"]}}
    assert pod_spec(objects)["terminationGracePeriodSeconds"] == 180


def test_api_key_comes_from_a_secret_reference():
    objects = manifests(*configured(security={"require_api_key": True}))
    assert env_of(server(objects))["VLLM_API_KEY"] == {"secretKeyRef": {"name": "llama-api-key", "key": "api-key"}}
    assert "--api-key" not in server(objects)["args"]


def test_no_api_key_when_not_required():
    assert "VLLM_API_KEY" not in env_of(server(manifests(*stack("dev"))))


RWX = {"storage_class_name": "efs-sc"}  # a shared volume, so the server stays a Deployment


def test_replicas_come_from_config():
    assert one(manifests(*configured(replicas=2, cache=RWX)), "Deployment")["spec"]["replicas"] == 2


def test_an_autoscaled_deployment_is_created_with_the_autoscalers_minimum():
    scaling = {"enabled": True, "min_replica_count": 2, "max_replica_count": 4}
    objects = manifests(*configured(replicas=3, autoscaling=scaling, cache=RWX))
    assert one(objects, "Deployment")["spec"]["replicas"] == 2


def test_service_is_cluster_ip_with_the_named_port():
    service = one(manifests(*stack("prod-on-efs")), "Service")
    assert service["spec"]["type"] == "ClusterIP"
    assert service["spec"]["ports"] == [{"name": "http", "port": 8000, "targetPort": "http", "protocol": "TCP"}]


def test_no_object_is_named_vllm():
    assert all(o["metadata"]["name"] != "vllm" for o in manifests(*stack("prod-on-efs")) if o["kind"] != "Namespace")


def test_created_namespace_enforces_the_restricted_standard():
    labels = one(manifests(*stack("prod-on-efs")), "Namespace")["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"


def test_existing_namespace_is_not_rendered():
    objects = manifests(*configured(namespace={"name": "llm", "create": False}))
    assert [o for o in objects if o["kind"] == "Namespace"] == []
    assert {o["metadata"]["namespace"] for o in objects} == {"llm"}


def test_well_known_labels_mark_the_server_pods():
    labels = one(manifests(*stack("prod-on-efs")), "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert {k: labels[k] for k in ("app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/component")} == {
        "app.kubernetes.io/name": "vllm",
        "app.kubernetes.io/instance": "llama",
        "app.kubernetes.io/component": "server",
    }
