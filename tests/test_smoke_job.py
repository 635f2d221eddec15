"""The smoke-test Job and ConfigMap, field by field, and what the program registers for them."""

from __future__ import annotations

import json
import runpy
from typing import Any

import kubernetes_validate
import pulumi
import pytest

from components.render.smoke import render_smoke_job, render_smoke_test
from config.exposure import SMOKE_IMAGE
from config.stack import StackConfig
from plan.identity import Identity
from plan.traffic import TrafficPlan, smoke_script
from tests.factories import REPO, STACKS, make_config
from tests.harness import PROJECT
from tests.kubernetes_fixtures import plan_of, run_recording
from tests.program import run_repository_stack, run_stack_file, stack_file_config

INSTANCE = "prod"


def keyed(**changes: Any) -> StackConfig:
    base: dict[str, Any] = {
        "security": {"require_api_key": True},
        "engine": {"max_model_len": 8192, "served_model_name": "llama-8b"},
    }
    return make_config(**{**base, **changes})


def parts(cfg: StackConfig) -> tuple[Identity, TrafficPlan]:
    plan = plan_of(cfg, INSTANCE)
    return plan.identity, plan.traffic


def smoke_name(cfg: StackConfig) -> str:
    smoke = parts(cfg)[1].smoke
    assert smoke is not None
    return smoke.name


def job(cfg: StackConfig | None = None) -> dict[str, Any]:
    identity, traffic = parts(cfg or keyed())
    assert traffic.smoke is not None
    return render_smoke_job(identity, traffic, traffic.smoke)


def container(cfg: StackConfig | None = None) -> dict[str, Any]:
    (only,) = job(cfg)["spec"]["template"]["spec"]["containers"]
    return only


def test_the_configmap_and_job_validate_strictly_for_the_newest_kubernetes() -> None:
    for obj in render_smoke_test(*parts(keyed())):
        kubernetes_validate.validate(obj, kubernetes_validate.latest_version(), strict=True)


def test_the_configmap_holds_the_script_byte_for_byte() -> None:
    assert render_smoke_test(*parts(keyed()))[0]["data"] == {"check.py": smoke_script()}


def test_nothing_is_rendered_when_the_smoke_test_is_off() -> None:
    assert render_smoke_test(*parts(keyed(smoke_test={"enabled": False}))) == []


def test_the_job_runs_the_script_against_the_service_with_the_served_name_and_the_key_file() -> None:
    assert container()["command"] == [
        "python3",
        "-B",
        "/opt/smoke/check.py",
        "--base-url",
        "http://prod-server.prod.svc:8000",
        "--model",
        "llama-8b",
        "--timeout-seconds",
        "120",
        "--max-tokens",
        "16",
        "--api-key-file",
        "/var/run/secrets/vllm-api-key/api-key",
    ]


def test_without_an_api_key_no_key_file_is_passed_or_mounted() -> None:
    cfg = make_config()
    assert "--api-key-file" not in container(cfg)["command"]
    assert [v["name"] for v in job(cfg)["spec"]["template"]["spec"]["volumes"]] == ["script", "tmp"]


def test_the_key_is_a_file_from_the_secret_never_an_environment_variable() -> None:
    spec = job()["spec"]["template"]["spec"]
    assert spec["volumes"][2] == {"name": "api-key", "secret": {"secretName": "prod-api-key", "defaultMode": 0o440}}
    assert {"name": "api-key", "mountPath": "/var/run/secrets/vllm-api-key", "readOnly": True} in container()["volumeMounts"]
    assert container()["env"] == [{"name": "PYTHONUNBUFFERED", "value": "1"}]


def test_the_script_is_mounted_read_only_from_the_configmap_of_the_same_name() -> None:
    spec = job()["spec"]["template"]["spec"]
    assert spec["volumes"][0] == {"name": "script", "configMap": {"name": smoke_name(keyed()), "defaultMode": 0o444}}


def test_the_default_image_is_python_pinned_by_digest() -> None:
    assert container()["image"] == SMOKE_IMAGE and "@sha256:" in SMOKE_IMAGE


def test_the_pod_meets_the_restricted_pod_security_standard() -> None:
    spec = job()["spec"]["template"]["spec"]
    context = spec["securityContext"]
    assert (context["runAsNonRoot"], context["seccompProfile"]) == (True, {"type": "RuntimeDefault"})
    assert container()["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert (spec["automountServiceAccountToken"], spec["enableServiceLinks"]) == (False, False)


def test_the_failure_line_becomes_the_termination_message_pulumi_reports() -> None:
    assert container()["terminationMessagePolicy"] == "FallbackToLogsOnError"


def test_the_job_retries_once_within_a_deadline_over_both_attempts_and_the_image_pull() -> None:
    spec = job()["spec"]
    assert (spec["backoffLimit"], spec["activeDeadlineSeconds"], spec["template"]["spec"]["restartPolicy"]) == (
        1,
        2 * (120 + 60) + 300,
        "Never",
    )


def test_the_job_is_never_garbage_collected_under_pulumi() -> None:
    assert "ttlSecondsAfterFinished" not in job()["spec"]


def test_the_pods_carry_the_smoke_test_component_label_the_network_policy_admits() -> None:
    assert job()["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/component"] == "smoke-test"


@pytest.mark.parametrize(
    "change",
    [
        {"model": {"id": "meta-llama/Llama-3.1-8B-Instruct", "revision": "0e9e39f249a16976918f6564b8830bc894c89659"}},
        {"vllm": {"version": "0.7.2"}},
        {"smoke_test": {"image": "python:3.12-slim"}},
        {"engine": {"max_model_len": 8192, "served_model_name": "other"}},
    ],
    ids=["revision", "vllm image", "smoke image", "served name"],
)
def test_a_new_model_revision_or_image_names_a_new_job_so_it_runs_again(change: dict[str, Any]) -> None:
    assert smoke_name(keyed(**change)) != smoke_name(keyed())


def test_an_unchanged_stack_keeps_the_same_job_name() -> None:
    assert smoke_name(keyed()) == smoke_name(keyed())


GATEWAY = {
    "name": "inference-gateway",
    "namespace": "gateway-system",
    "section_name": "https",
    "hostnames": ["llm.example.com"],
}


@pytest.fixture(scope="module")
def prod_with_gateway() -> Any:
    registered, error = run_stack_file(
        STACKS / "Pulumi.prod.yaml", extra={"api_key": "sk-test", "exposure": {"gateway": GATEWAY}}
    )
    assert error is None, error
    return registered


def test_prod_with_a_gateway_registers_the_route_on_it(prod_with_gateway: Any) -> None:
    (route,) = [r.inputs for r in prod_with_gateway.of_type("kubernetes:gateway.networking.k8s.io/v1:HTTPRoute")]
    assert route["spec"]["parentRefs"][0]["name"] == "inference-gateway"
    assert [m["path"]["value"] for m in route["spec"]["rules"][0]["matches"]] == [
        "/v1/chat/completions",
        "/v1/completions",
        "/v1/models",
    ]


def test_prod_with_a_gateway_registers_a_policy_admitting_only_the_gateway_smoke_test_and_prometheus(
    prod_with_gateway: Any,
) -> None:
    (server,) = [
        r.inputs
        for r in prod_with_gateway.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")
        if r.inputs["metadata"]["labels"]["app.kubernetes.io/component"] == "server"
    ]
    namespaces = [
        peer.get("namespaceSelector", {}).get("matchExpressions", [{}])[0].get("values")
        for rule in server["spec"]["ingress"]
        for peer in rule["from"]
    ]
    assert namespaces == [["gateway-system"], None, ["monitoring"]]


def test_prod_registers_the_smoke_job_after_the_deployment_and_the_policies(prod_with_gateway: Any) -> None:
    (smoke,) = [
        r
        for r in prod_with_gateway.of_type("kubernetes:batch/v1:Job")
        if r.inputs["metadata"]["labels"]["app.kubernetes.io/component"] == "smoke-test"
    ]
    assert smoke.inputs["spec"]["template"]["spec"]["containers"][0]["command"][5:7] == ["--model", "llama-70b"]


def test_prod_exports_the_client_url_and_a_curl(prod_with_gateway: Any) -> None:
    assert prod_with_gateway.exports["clientUrl"] is not None and "curl" in prod_with_gateway.exports


def test_prod_without_a_gateway_registers_no_route_or_ingress() -> None:
    registered, error = run_repository_stack(STACKS / "Pulumi.prod.yaml")
    assert error is None, error
    assert [r.typ for r in registered.resources if r.typ.endswith((":HTTPRoute", ":Ingress", ":InferencePool"))] == []


def test_the_smoke_job_waits_for_the_rollout_the_service_and_the_network_policies() -> None:
    config, _ = stack_file_config(STACKS / "Pulumi.prod.yaml")

    def build() -> None:
        pulumi.runtime.set_all_config(
            {
                f"{PROJECT}:{key}": value if isinstance(value, str) else json.dumps(value)
                for key, value in {**config, "api_key": "sk-test", "hf_token": "hf_test"}.items()
            },
            [f"{PROJECT}:api_key", f"{PROJECT}:hf_token"],
        )
        runpy.run_path(str(REPO / "__main__.py"), run_name="__main__")

    _, requests = run_recording(build)
    (job,) = [r for name, r in requests.items() if name.endswith("-smoke-test-job")]
    waits_for = {dependency.rsplit("::", 1)[1] for dependency in job.dependencies}
    assert {
        "vllm-test-server-rollout-gate-job",
        "vllm-test-server-service",
        "vllm-test-network-server",
        "vllm-test-network-smoke-test",
    } <= waits_for
    assert job.timeouts["create"] == "12m"  # deadline 2 x (120 + 60) + 300 = 660 s, plus a minute


def test_the_smoke_test_reruns_when_the_servers_command_line_changes() -> None:
    from plan.traffic import launch_of, smoke_key

    cfg = make_config()
    assert smoke_key(cfg, launch_of(("--max-model-len", "8192"), {})) != smoke_key(
        cfg, launch_of(("--max-model-len", "4096"), {})
    )


def test_the_smoke_test_reruns_when_the_servers_environment_changes() -> None:
    from plan.traffic import launch_of, smoke_key

    cfg = make_config()
    assert smoke_key(cfg, launch_of((), {"VLLM_USE_V1": "1"})) != smoke_key(cfg, launch_of((), {"VLLM_USE_V1": "0"}))


def test_a_planned_stacks_smoke_key_follows_its_context_length() -> None:
    names = {plan_of(make_config(engine={"max_model_len": n})).traffic.smoke.name for n in (4096, 8192)}  # type: ignore[union-attr]
    assert len(names) == 2
