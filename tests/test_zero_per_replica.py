"""Scale to zero with per-replica claims (docs/scale-to-zero.md): the StatefulSet starts at zero replicas, so the
first start from zero is a first-time ordinal's on an empty claim and downloads the weights. The cold start, the
interceptor's conditionWait and the smoke test's bound count that download; a start that outlasts the wait is
refused, and a node-local claim at zero whose idle node goes away is refused."""

from __future__ import annotations

import math
import re
from typing import Any

import pulumi
import pytest

from components.render.manifests import stack_manifests
from config.errors import ConfigError
from plan import Plan
from reading.numbers import go_duration_seconds
from tests.factories import REPO, example_stack
from tests.kubernetes_fixtures import plan_of
from tests.program import run_main
from validation import assess
from validation.keys import validate_config

LONG_WAIT = 3600  # a client and a route that wait an hour, so only the cold start's own figures decide
ZERO_70B: dict[str, Any] = {
    "enabled": True,
    "min_replica_count": 0,
    "max_replica_count": 2,
    "http_add_on": {"client_timeout_seconds": 900},
}


def dev_per_replica(**autoscaling: Any) -> dict[str, Any]:
    """The dev scale-to-zero example (8B) on per-replica claims of the default class instead of a bucket."""
    raw = example_stack("dev-scale-to-zero").model_dump(exclude_unset=True)
    raw["delivery"] = {"mode": "per_replica_volume"}
    raw["exposure"]["gateway"]["request_timeout_seconds"] = LONG_WAIT
    add_on = {**raw["autoscaling"]["http_add_on"], "client_timeout_seconds": LONG_WAIT, **autoscaling}
    raw["autoscaling"] = {**raw["autoscaling"], "http_add_on": add_on}
    return raw


def node_local_at_zero(**add_on: Any) -> dict[str, Any]:
    """The node-local NVMe example (70B, four H100s) scaled to zero through the add-on, with a Gateway."""
    raw = example_stack("llama-70b-node-local-nvme").model_dump(exclude_unset=True)
    raw.pop("replicas", None)
    raw["autoscaling"] = {**ZERO_70B, "http_add_on": {**ZERO_70B["http_add_on"], **add_on}}
    raw["security"] = {"require_api_key": True}
    raw["exposure"] = {
        "gateway": {
            "name": "gw",
            "namespace": "gateway-system",
            "hostnames": ["llm.example.com"],
            "request_timeout_seconds": 900,
        }
    }
    return raw


def seventy_b_per_replica(wait: int = 900) -> dict[str, Any]:
    """The same 70B on per-replica claims of GKE's premium-rwo network class, the client and the route waiting `wait`."""
    raw = node_local_at_zero(client_timeout_seconds=wait)
    raw["delivery"], raw["cache"] = {"mode": "per_replica_volume"}, {"storage_class_name": "premium-rwo", "size_gib": 300}
    raw["exposure"]["gateway"]["request_timeout_seconds"] = wait
    return raw


def plan_for(raw: dict[str, Any]) -> Plan:
    return plan_of(validate_config(raw))


def terms(plan: Plan) -> dict[str, float]:
    return {t.name: t.seconds for t in plan.delivery.budget.terms}


def first_start_from_zero(plan: Plan, node_seconds: int = 120) -> int:
    """What ordinal 0's first start really takes: the node, the image, the download to its empty claim, the start."""
    t = terms(plan)
    return math.ceil(node_seconds + t["image pull"] + t["download"] + t["load"] + t["engine start"] + t["compile + graphs"])


def messages(raw: dict[str, Any]) -> list[str]:
    return [issue.render() for issue in assess(validate_config(raw)).issues]


def test_the_cold_start_from_zero_on_per_replica_claims_adds_the_download_to_ordinal_zeros_empty_claim() -> None:
    plan = plan_for(dev_per_replica())
    assert plan.zero is not None
    assert (terms(plan)["download"] > 0, plan.zero.cold_start.seconds) == (True, first_start_from_zero(plan))


def test_the_cold_starts_budget_on_per_replica_claims_adds_the_download_with_the_safety_factor() -> None:
    plan = plan_for(dev_per_replica())
    assert plan.zero is not None
    budget = plan.delivery.budget
    download = math.ceil(budget.first_time_download_seconds * budget.probe.safety_factor)
    assert plan.zero.cold_start.budget_seconds == 120 + budget.image_pull_seconds + download + budget.probe.total_seconds


def test_the_interceptors_condition_wait_on_per_replica_claims_outlasts_the_first_start_with_its_download() -> None:
    plan = plan_for(seventy_b_per_replica(LONG_WAIT))
    assert plan.zero is not None
    (scaled,) = [o for o in stack_manifests(plan) if o["kind"] == "HTTPScaledObject"]
    assert (go_duration_seconds(scaled["spec"]["timeouts"]["conditionWait"]) or 0) > first_start_from_zero(plan)


def test_the_smoke_tests_bound_on_per_replica_claims_waits_out_the_first_start_with_its_download() -> None:
    plan = plan_for(seventy_b_per_replica(LONG_WAIT))
    assert plan.zero is not None
    (job,) = [o for o in stack_manifests(plan) if o["kind"] == "Job" and "smoke" in o["metadata"]["name"]]
    command = job["spec"]["template"]["spec"]["containers"][0]["command"]
    assert float(command[command.index("--timeout-seconds") + 1]) > first_start_from_zero(plan)


def test_the_cold_start_from_zero_on_per_replica_claims_names_the_download_in_the_report() -> None:
    plan = plan_for(dev_per_replica())
    assert plan.zero is not None
    row = dict(plan.zero.rows())["Cold start from zero"]
    assert f"+ {terms(plan)['download']:.0f} s download +" in row


def test_a_bucket_streamed_cold_start_from_zero_has_no_download() -> None:
    plan = plan_for(example_stack("dev-scale-to-zero").model_dump(exclude_unset=True))
    assert plan.zero is not None
    assert [t.name for t in plan.zero.cold_start.terms if t.name == "download"] == []


def test_a_shared_volumes_cold_start_from_zero_leaves_the_download_to_the_job_that_runs_before_the_server() -> None:
    raw = dev_per_replica()
    raw["delivery"] = {"mode": "shared_volume"}
    raw["autoscaling"]["max_replica_count"] = 1  # one replica: a ReadWriteOnce claim on the default class
    plan = plan_for(raw)
    assert plan.zero is not None and plan.delivery.budget.download_seconds > 0
    assert plan.zero.cold_start.downloads is False


def test_a_70b_on_per_replica_claims_whose_download_outlasts_the_wait_is_refused_at_zero_naming_the_download() -> None:
    raw = seventy_b_per_replica()
    (message,) = messages(raw)
    assert (
        message.startswith("vllm-serving:autoscaling.min_replica_count: is 0, but a start from zero takes "),
        "+ 1314 s download +" in message,
        "ordinal 0's per-replica claim is empty" in message,
        "delivery.mode shared_volume or object_storage" in message,
        "raise autoscaling.http_add_on.client_timeout_seconds above " in message,
    ) == (True, True, True, True, True)


def test_the_docs_state_the_per_replica_first_start_from_zero_the_program_computes() -> None:
    page = " ".join((REPO / "docs" / "scale-to-zero.md").read_text(encoding="utf-8").split())
    plan = plan_for(seventy_b_per_replica())
    assert plan.zero is not None
    stated = re.findall(r"first start from zero of (\d+) s \((\d+) s of it the download\)", page)
    assert stated == [(str(plan.zero.cold_start.seconds), f"{terms(plan)['download']:.0f}")]


def test_the_program_registers_nothing_for_per_replica_claims_whose_first_start_outlasts_the_wait() -> None:
    raw = seventy_b_per_replica()
    registered, error = run_main({**raw, "api_key": "sk-test"}, ("api_key",))
    assert isinstance(error, pulumi.RunError)
    assert ("vllm-serving:autoscaling.min_replica_count: is 0" in str(error), registered.resources) == (True, [])


# --- node-local claims at zero -------------------------------------------------------------------------------


def test_node_local_claims_at_zero_with_the_idle_gpu_node_removed_are_refused_at_delivery_node_local() -> None:
    with pytest.raises(ConfigError) as caught:
        validate_config(node_local_at_zero())
    (issue,) = caught.value.issues
    assert (issue.key, issue.message.startswith("is 'nvme' with autoscaling.min_replica_count 0")) == (
        "delivery.node_local",
        True,
    )


def test_the_node_local_refusal_at_zero_names_the_stated_node_provisioning_and_the_fixes() -> None:
    with pytest.raises(ConfigError) as caught:
        validate_config(node_local_at_zero(node_provisioning_seconds=300))
    (issue,) = caught.value.issues
    assert (
        "autoscaling.http_add_on.node_provisioning_seconds 300" in issue.message,
        "autoscaling.http_add_on.node_provisioning_seconds: 0" in issue.fix,
        "autoscaling.min_replica_count: 1" in issue.fix,
        "remove delivery.node_local" in issue.fix,
    ) == (True, True, True, True)


def test_node_local_claims_keeping_one_replica_behind_the_add_on_are_accepted() -> None:
    raw = node_local_at_zero()
    raw["autoscaling"]["min_replica_count"] = 1
    assert messages(raw) == []


def test_node_local_claims_at_zero_with_gpu_nodes_kept_up_count_the_first_download_in_the_cold_start() -> None:
    plan = plan_for(node_local_at_zero(node_provisioning_seconds=0))
    assert plan.zero is not None
    assert plan.zero.cold_start.seconds == first_start_from_zero(plan, node_seconds=0)


def test_node_local_claims_at_zero_with_gpu_nodes_kept_up_are_refused_when_the_first_download_outlasts_the_wait() -> None:
    (message,) = messages(node_local_at_zero(node_provisioning_seconds=0))
    assert message.startswith("vllm-serving:autoscaling.min_replica_count: is 0, but a start from zero takes ")


def test_the_program_registers_nothing_for_node_local_claims_at_zero_with_the_idle_node_removed() -> None:
    registered, error = run_main({**node_local_at_zero(), "api_key": "sk-test"}, ("api_key",))
    assert isinstance(error, pulumi.RunError)
    assert ("vllm-serving:delivery.node_local: is 'nvme'" in str(error), registered.resources) == (True, [])


def test_the_node_local_example_stack_is_unchanged_by_the_zero_rules() -> None:
    assert messages(example_stack("llama-70b-node-local-nvme").model_dump(exclude_unset=True)) == []
