"""The Pulumi program end to end under mocks: a bad or blocked stack registers nothing."""

from __future__ import annotations

import pulumi

from tests.factories import STACKS
from tests.program import run_main, run_repository_stack, run_stack_file, stack_file_config


def test_a_blocked_stack_stops_with_the_shortfall_in_gib_and_registers_nothing() -> None:
    registered, error = run_stack_file(STACKS / "examples/Pulumi.blocked-70b-on-2x-a100-40gb.yaml")
    assert isinstance(error, pulumi.RunError)
    assert str(error).startswith("vLLM preflight blocked this stack; nothing was created.")
    assert "short by 30.17 GiB" in str(error)
    assert registered.resources == []
    assert registered.exports == {}


def test_a_config_error_stops_the_program_naming_the_key_and_registers_nothing() -> None:
    registered, error = run_main(
        {"model": {"id": "meta-llama/Llama-3.1-8B-Instruct"}, "gpu": {"product": "L4"}, "engine": {"max_modl_len": 4096}}
    )
    assert isinstance(error, pulumi.RunError)
    assert "vllm-serving:engine.max_modl_len: unknown key" in str(error)
    assert registered.resources == []


def test_a_required_api_key_that_is_not_set_stops_the_program_and_registers_nothing() -> None:
    config, secret_keys = stack_file_config(STACKS / "Pulumi.prod.yaml")
    config.pop("api_key", None)
    registered, error = run_main(config, tuple(k for k in secret_keys if k != "api_key"))
    assert isinstance(error, pulumi.RunError)
    assert "vllm-serving:api_key: is required because security.require_api_key is true" in str(error)
    assert registered.resources == []


def test_the_prod_stack_exports_the_preflight_report_and_the_service() -> None:
    registered, error = run_repository_stack(STACKS / "Pulumi.prod.yaml")
    assert error is None
    assert registered.exports["preflight"]["verdict"]["fits"] is True
    assert registered.exports["preflight"]["memory"]["kv_cache_gib_per_gpu"] == 34.377
    assert registered.exports["servedModelName"] == "llama-70b"


def test_the_prod_stack_exports_its_monthly_cost_at_both_replica_bounds() -> None:
    registered, error = run_repository_stack(STACKS / "Pulumi.prod.yaml")
    cost = registered.exports["cost"]
    assert error is None and cost["price"]["instance"] == "p4de.24xlarge"
    assert (cost["min_replicas"]["replicas"], cost["max_replicas"]["replicas"]) == (2, 4)


def test_the_prod_stack_registers_the_whole_kubernetes_target() -> None:
    registered, _ = run_repository_stack(STACKS / "Pulumi.prod.yaml")
    assert {
        "kubernetes:apps/v1:Deployment",
        "kubernetes:core/v1:Service",
        "kubernetes:core/v1:ServiceAccount",
        "kubernetes:keda.sh/v1alpha1:ScaledObject",
        "kubernetes:monitoring.coreos.com/v1:ServiceMonitor",
        "kubernetes:monitoring.coreos.com/v1:PrometheusRule",
        "kubernetes:networking.k8s.io/v1:NetworkPolicy",
        "kubernetes:policy/v1:PodDisruptionBudget",
    } <= set(registered.types)


def test_a_docker_stack_registers_no_kubernetes_object() -> None:
    registered, error = run_stack_file(STACKS / "Pulumi.docker-8b.yaml")
    assert error is None
    assert not [t for t in registered.types if t.startswith("kubernetes:")]
    assert "vllm-serving:index:DockerHost" in registered.types


def test_the_prod_alerts_wait_out_the_computed_rollout_budget_before_paging() -> None:
    registered, _ = run_repository_stack(STACKS / "Pulumi.prod.yaml")
    rules = registered.one("kubernetes:monitoring.coreos.com/v1:PrometheusRule")["spec"]["groups"]
    found = {r["alert"]: r for g in rules for r in g["rules"]}
    probe = registered.one("kubernetes:apps/v1:Deployment")["spec"]["template"]["spec"]["containers"][0]["startupProbe"]
    assert probe["failureThreshold"] * probe["periodSeconds"] == 730  # (131 s from S3 + 3 x (63 s + 53 s)) x 1.5
    # 242 s image pull + 730 s startup budget + 120 s = 1092 s, + 5 min, in whole minutes: a 2 -> 4 scale-up
    # that pulls the image on new nodes and streams the weights never pages.
    assert (found["VllmReplicasNotReady"]["for"], found["VllmMetricsAbsent"]["for"]) == ("24m", "24m")


def test_a_gated_model_without_the_hf_token_stops_the_program_naming_the_secret_and_registers_nothing() -> None:
    config, secret_keys = stack_file_config(STACKS / "Pulumi.dev.yaml")  # meta-llama/Llama-3.1-8B-Instruct
    registered, error = run_main(config, secret_keys, stack="dev", hf_token=False)
    assert isinstance(error, pulumi.RunError)
    assert "vllm-serving:hf_token: is required because model.id 'meta-llama/Llama-3.1-8B-Instruct' is gated" in str(error)
    assert registered.resources == []
