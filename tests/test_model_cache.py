"""ModelCache under Pulumi mocks: PVC, token Secret, download Job, and what the server waits for."""

from __future__ import annotations

import pulumi

from components.model_cache import ModelCache, ModelCacheArgs
from tests.harness import run_program
from tests.kubernetes_fixtures import configured, plan_of, run_recording, stack


def build_cache(cfg, report, hf_token: str | None = None):  # type: ignore[no-untyped-def]
    plan = plan_of(cfg, hf_token=hf_token is not None)

    def build() -> None:
        token = pulumi.Output.secret(hf_token) if hf_token else None
        ModelCache(
            "llama-cache",
            ModelCacheArgs(plan=plan, namespace="vllm", hf_token=token),
        )

    return build


def test_cache_registers_a_pvc_a_service_account_and_a_download_job():
    registered = run_program(build_cache(*stack("prod-on-efs")))
    assert registered.types == [
        "kubernetes:batch/v1:Job",
        "kubernetes:core/v1:PersistentVolumeClaim",
        "kubernetes:core/v1:ServiceAccount",
        "vllm-serving:index:ModelCache",
    ]


def test_every_child_is_parented_to_the_cache_component():
    _, requests = run_recording(build_cache(*stack("prod-on-efs")))
    children = [r for r in requests.values() if r.typ.startswith("kubernetes:")]
    assert children and all(r.parent.endswith("vllm-serving:index:ModelCache::llama-cache") for r in children)


def test_pvc_inputs_carry_the_computed_size():
    pvc = run_program(build_cache(*stack("prod-on-efs"))).one("kubernetes:core/v1:PersistentVolumeClaim")
    assert pvc["spec"]["resources"]["requests"]["storage"] == "166Gi"
    assert pvc["metadata"]["labels"]["app.kubernetes.io/component"] == "model-cache"


def test_token_becomes_a_secret_only_when_given():
    with_token = run_program(build_cache(*stack("prod-on-efs"), hf_token="hf_x"))
    without = run_program(build_cache(*stack("prod-on-efs")))
    assert len(with_token.of_type("kubernetes:core/v1:Secret")) == 1
    assert without.of_type("kubernetes:core/v1:Secret") == []


def test_job_waits_for_the_token_secret():
    _, requests = run_recording(build_cache(*stack("prod-on-efs"), hf_token="hf_x"))
    assert any(d.endswith("::llama-cache-hf-token") for d in requests["llama-cache-download"].dependencies)


def test_claim_does_not_wait_for_the_awaited_job_whose_pod_is_its_first_consumer():
    _, requests = run_recording(build_cache(*stack("prod-on-efs")))
    assert not any(d.endswith("::llama-cache-download") for d in requests["llama-cache-pvc"].dependencies)


def test_claim_that_cannot_bind_fails_the_update_within_the_bind_timeout():
    _, requests = run_recording(build_cache(*stack("prod-on-efs")))
    assert requests["llama-cache-pvc"].timeouts == {"create": "10m", "update": "10m"}


def test_claim_is_awaited_until_bound():
    pvc = run_program(build_cache(*stack("prod-on-efs"))).one("kubernetes:core/v1:PersistentVolumeClaim")
    assert pvc["metadata"]["annotations"] == {"pulumi.com/waitFor": "jsonpath={.status.phase}=Bound"}


def test_the_download_job_is_awaited_so_a_failed_download_fails_the_update():
    job = run_program(build_cache(*stack("prod-on-efs"))).one("kubernetes:batch/v1:Job")
    assert "annotations" not in job["metadata"]


def test_the_download_job_await_is_bounded_by_the_jobs_own_deadline():
    registered, requests = run_recording(build_cache(*stack("prod-on-efs")))
    deadline = int(registered.one("kubernetes:batch/v1:Job")["spec"]["activeDeadlineSeconds"])
    assert requests["llama-cache-download"].timeouts["create"] == f"{-(-deadline // 60)}m"


def test_a_failed_download_pod_reports_its_log_tail_as_its_termination_message():
    job = run_program(build_cache(*stack("prod-on-efs"))).one("kubernetes:batch/v1:Job")
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["terminationMessagePolicy"] == "FallbackToLogsOnError"


def test_per_replica_volumes_register_only_the_token_secret():
    cfg, report = configured(replicas=2, delivery={"mode": "per_replica_volume"})
    assert run_program(build_cache(cfg, report, hf_token="hf_x")).types == [
        "kubernetes:core/v1:Secret",
        "vllm-serving:index:ModelCache",
    ]


def test_existing_claim_registers_no_pvc():
    registered = run_program(build_cache(*configured(cache={"existing_claim": "models"})))
    assert registered.of_type("kubernetes:core/v1:PersistentVolumeClaim") == []


def test_local_path_registers_no_job():
    cfg, report = configured(
        model={"id": "meta-llama/Llama-3.1-8B-Instruct", "local_path": "llama"}, cache={"existing_claim": "models"}
    )
    assert run_program(build_cache(cfg, report)).types == ["vllm-serving:index:ModelCache"]


def test_job_fills_the_pvc_the_component_registers():
    registered = run_program(build_cache(*stack("prod-on-efs")))
    claim = registered.one("kubernetes:core/v1:PersistentVolumeClaim")["metadata"]["name"]
    volumes = registered.one("kubernetes:batch/v1:Job")["spec"]["template"]["spec"]["volumes"]
    assert {"name": "model-cache", "persistentVolumeClaim": {"claimName": claim}} in volumes
