"""VllmServer under Pulumi mocks: Deployment, Service, PDB, API-key Secret and their options (its ServiceAccount is
ServingStack's: tests/test_copy_identity.py)."""

from __future__ import annotations

import pulumi
from pulumi.runtime import rpc

from components.vllm_server import VllmServer, VllmServerArgs
from tests.harness import resolve, run_program
from tests.kubernetes_fixtures import SET_FIXED_TERMS, configured, plan_of, run_recording, stack, stack_with

DEPLOYMENT = "kubernetes:apps/v1:Deployment"


def build_server(cfg, report, api_key: str | None = None, keep: list | None = None):  # type: ignore[no-untyped-def]
    if api_key is None and cfg.security.require_api_key:
        api_key = "sk-test"  # prod requires one

    def build() -> None:
        key = pulumi.Output.secret(api_key) if api_key else None
        server = VllmServer(
            "llama-server",
            VllmServerArgs(plan=plan_of(cfg), namespace="vllm", api_key=key),
        )
        if keep is not None:
            keep.append(server)

    return build


def test_server_registers_its_objects():
    assert run_program(build_server(*stack("prod-on-efs"))).types == [
        DEPLOYMENT,
        "kubernetes:batch/v1:Job",
        "kubernetes:core/v1:ConfigMap",
        "kubernetes:core/v1:Secret",
        "kubernetes:core/v1:Service",
        "kubernetes:core/v1:ServiceAccount",
        "kubernetes:policy/v1:PodDisruptionBudget",
        "kubernetes:rbac.authorization.k8s.io/v1:Role",
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
        "vllm-serving:index:RolloutGate",
        "vllm-serving:index:VllmServer",
    ]  # the rollout gate's Job, script, account and Role


def test_deployment_inputs_request_four_gpus_for_tensor_parallel_four():
    deployment = run_program(build_server(*stack("prod-on-efs"))).one(DEPLOYMENT)
    limits = deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits["nvidia.com/gpu"] == "4"


def test_deployment_inputs_carry_the_startup_probe_budget():
    deployment = run_program(build_server(*stack_with("prod-on-efs", probes=SET_FIXED_TERMS))).one(DEPLOYMENT)
    assert deployment["spec"]["template"]["spec"]["containers"][0]["startupProbe"]["failureThreshold"] == 842.0


def test_service_is_registered_after_the_rollout_gate_so_pulumis_await_of_it_finds_endpoints():
    _, requests = run_recording(build_server(*stack("prod-on-efs")))
    assert any(d.endswith("::llama-server-rollout-gate-job") for d in requests["llama-server-service"].dependencies)


def test_the_rollout_gate_is_awaited_long_enough_for_every_replica_to_roll_one_at_a_time():
    _, requests = run_recording(build_server(*stack_with("prod-on-efs", probes=SET_FIXED_TERMS)))
    # first start 10634 s + 120 s per replica; prod autoscales up to 4 replicas: 43016 s, and a minute more
    assert requests["llama-server-rollout-gate-job"].timeouts == {"create": "718m", "update": "718m"}


NO_TIMEOUTS = {"create": "", "update": ""}  # as the mocks record a resource without custom_timeouts


def test_pulumi_does_not_await_the_deployment_the_rollout_gate_awaits():
    registered, requests = run_recording(build_server(*stack("prod-on-efs")))
    annotations = registered.one(DEPLOYMENT)["metadata"]["annotations"]
    assert (annotations["pulumi.com/skipAwait"], requests["llama-server-deployment"].timeouts) == ("true", NO_TIMEOUTS)


def test_replica_count_is_ignored_when_an_autoscaler_owns_it():
    _, requests = run_recording(
        build_server(*configured(autoscaling={"enabled": True}, cache={"storage_class_name": "efs-sc"}))
    )
    assert requests["llama-server-deployment"].ignore_changes == ["spec.replicas"]


def test_replica_count_is_managed_without_an_autoscaler():
    _, requests = run_recording(build_server(*stack("dev")))
    assert requests["llama-server-deployment"].ignore_changes == []


def test_api_key_secret_is_created_and_awaited_when_required():
    cfg, report = configured(security={"require_api_key": True})
    registered, requests = run_recording(build_server(cfg, report, api_key="sk-test"))
    secret = registered.one("kubernetes:core/v1:Secret")
    assert secret["metadata"]["name"] == "llama-api-key"
    assert any(d.endswith("::llama-server-api-key") for d in requests["llama-server-deployment"].dependencies)


def test_api_key_secret_value_stays_secret():
    cfg, report = configured(security={"require_api_key": True})
    data = run_program(build_server(cfg, report, api_key="sk-test")).one("kubernetes:core/v1:Secret")["stringData"]
    assert data[rpc._special_sig_key] == rpc._special_secret_sig and data["value"] == {"api-key": "sk-test"}


def test_url_points_at_the_service_port_in_the_namespace():
    servers: list = []
    run_program(build_server(*stack("prod-on-efs"), keep=servers))
    assert resolve(servers[0].url) == "http://llama-server.vllm.svc:8000"
