"""ServingStack under Pulumi mocks, for the shipped prod and dev stacks and for bad configs."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from components.serving_stack import ServingStack, ServingStackArgs
from config.secrets import StackSecrets
from tests.harness import resolve, run_program
from tests.kubernetes_fixtures import configured, plan_of, run_recording, stack

DEPLOYMENT = "kubernetes:apps/v1:Deployment"


def build_stack(cfg, report, secrets: StackSecrets | None = None, keep: list | None = None):  # type: ignore[no-untyped-def]
    def build() -> None:
        default = StackSecrets(api_key=pulumi.Output.secret("sk-test")) if cfg.security.require_api_key else StackSecrets()
        serving = ServingStack("llama", serving_args(cfg, secrets or default))
        if keep is not None:
            keep.append(serving)

    return build


def serving_args(cfg, secrets: StackSecrets) -> ServingStackArgs:  # type: ignore[no-untyped-def]
    """The stack's plan as the program resolves it: the download mounts the token when the secret is set."""
    return ServingStackArgs(plan_of(cfg, hf_token=secrets.hf_token is not None), secrets)


def outputs_of(cfg, report) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    kept: list[ServingStack] = []
    run_program(build_stack(cfg, report, keep=kept))
    return {name: resolve(value) for name, value in kept[0].outputs().items()}


@pytest.mark.parametrize("name", ["prod-on-efs", "dev"])
def test_shipped_stack_registers_namespace_cache_and_server(name: str):
    api_key_secret = ["kubernetes:core/v1:Secret"] if name == "prod-on-efs" else []  # prod requires an API key
    assert run_program(build_stack(*stack(name))).types == [
        DEPLOYMENT,
        "kubernetes:batch/v1:Job",
        "kubernetes:batch/v1:Job",  # the download's and the rollout gate's
        "kubernetes:core/v1:ConfigMap",
        "kubernetes:core/v1:Namespace",
        "kubernetes:core/v1:PersistentVolumeClaim",
        *api_key_secret,
        "kubernetes:core/v1:Service",
        "kubernetes:core/v1:ServiceAccount",
        "kubernetes:core/v1:ServiceAccount",
        "kubernetes:core/v1:ServiceAccount",
        "kubernetes:policy/v1:PodDisruptionBudget",
        "kubernetes:rbac.authorization.k8s.io/v1:Role",
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
        "vllm-serving:index:ModelCache",
        "vllm-serving:index:RolloutGate",
        "vllm-serving:index:ServingStack",
        "vllm-serving:index:VllmServer",
    ]


def test_prod_streaming_from_its_bucket_registers_no_cache_claim_and_no_download_job():
    registered = run_program(build_stack(*stack("prod")))
    jobs = [r.name for r in registered.of_type("kubernetes:batch/v1:Job")]
    assert (jobs, registered.of_type("kubernetes:core/v1:PersistentVolumeClaim")) == (["llama-server-rollout-gate-job"], [])


def test_prod_outputs_name_the_service_url_and_served_model():
    assert outputs_of(*stack("prod-on-efs")) == {
        "namespace": "llama",
        "deploymentName": "llama-server",
        "serviceName": "llama-server",
        "servicePortName": "http",
        "url": "http://llama-server.llama.svc:8000",
        "servedModelName": "llama-70b",
        "podSelectorLabels": {
            "app.kubernetes.io/name": "vllm",
            "app.kubernetes.io/instance": "llama",
            "app.kubernetes.io/component": "server",
        },
    }


def test_dev_outputs_name_its_served_model():
    assert outputs_of(*stack("dev"))["servedModelName"] == "llama-8b"


def test_components_are_children_of_the_stack():
    _, requests = run_recording(build_stack(*stack("prod-on-efs")))
    parents = {name: requests[name].parent for name in ("llama-namespace", "llama-cache", "llama-server")}
    assert all(parent.endswith("vllm-serving:index:ServingStack::llama") for parent in parents.values())


def test_every_namespaced_object_waits_for_the_created_namespace():
    registered, requests = run_recording(build_stack(*stack("prod-on-efs")))
    kube = [r.name for r in registered.resources if r.typ.startswith("kubernetes:") and "Namespace" not in r.typ]
    assert all(any(d.endswith("::llama-namespace") for d in requests[name].dependencies) for name in kube)


def test_deployment_waits_for_the_download_job():
    _, requests = run_recording(build_stack(*stack("prod-on-efs")))
    assert any(d.endswith("::llama-cache-download") for d in requests["llama-server-deployment"].dependencies)


def test_existing_namespace_is_used_not_created():
    cfg, report = configured(namespace={"name": "llm", "create": False})
    registered = run_program(build_stack(cfg, report))
    assert registered.of_type("kubernetes:core/v1:Namespace") == []
    assert registered.one(DEPLOYMENT)["metadata"]["namespace"] == "llm"


def test_hf_token_secret_is_created_from_the_pulumi_secret():
    def build() -> None:
        secrets = StackSecrets(hf_token=pulumi.Output.secret("hf_x"), api_key=pulumi.Output.secret("sk-test"))
        ServingStack("llama", serving_args(stack("prod-on-efs")[0], secrets))

    secrets = run_program(build).of_type("kubernetes:core/v1:Secret")
    assert sorted(s.inputs["metadata"]["name"] for s in secrets) == ["llama-api-key", "llama-hf-token"]


def test_required_api_key_reaches_the_server_as_a_secret_reference():
    cfg, report = configured(security={"require_api_key": True})
    registered = run_program(build_stack(cfg, report, StackSecrets(api_key=pulumi.Output.secret("sk"))))
    env = registered.one(DEPLOYMENT)["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "VLLM_API_KEY", "valueFrom": {"secretKeyRef": {"name": "llama-api-key", "key": "api-key"}}} in env


def test_instance_name_too_long_for_kubernetes_names_is_refused():
    with pytest.raises(ValueError, match="at most 38 characters"):
        run_program(lambda: ServingStack("x" * 40, ServingStackArgs(plan_of(stack("dev")[0]))))


def test_server_mounts_the_pvc_the_cache_registers():
    registered = run_program(build_stack(*stack("prod-on-efs")))
    claim = registered.one("kubernetes:core/v1:PersistentVolumeClaim")["metadata"]["name"]
    volumes = registered.one(DEPLOYMENT)["spec"]["template"]["spec"]["volumes"]
    assert {"name": "model-cache", "persistentVolumeClaim": {"claimName": claim}} in volumes
