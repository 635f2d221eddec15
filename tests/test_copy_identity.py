"""The bucket-copy Job runs as the server's ServiceAccount, under Pulumi mocks: one account carries the workload
identity, so one grant (an IRSA trust policy's `sub`, an EKS Pod Identity association, a GKE Workload Identity
binding) covers the copy and the server. The account is registered by ServingStack before the cache, with an
alias to the parent it had before (VllmServer), so an existing stack keeps it."""

from __future__ import annotations

from typing import Any

from tests.harness import PROJECT, Registered
from tests.kubernetes_fixtures import Registration, run_recording, stack, stack_with
from tests.test_delivery import COPYING, WRITER
from tests.test_serving_stack import build_stack

ACCOUNT = "kubernetes:core/v1:ServiceAccount"
IDENTITY = {"eks.amazonaws.com/role-arn": WRITER}
# The URN main registered the server's account under, as a child of VllmServer (stack "test" of tests/harness.py).
OLD_URN = (
    f"urn:pulumi:test::{PROJECT}::vllm-serving:index:ServingStack$vllm-serving:index:VllmServer"
    "$kubernetes:core/v1:ServiceAccount::llama-server-sa"
)


def copying() -> tuple[Registered, dict[str, Registration]]:
    cfg, report = stack_with("prod-on-efs", delivery=COPYING, cache={"storage_class_name": None}, model={"revision": "aaaa111"})
    return run_recording(build_stack(cfg, report))


def pod_account(registered: Registered, typ: str) -> str:
    return str(registered.one(typ)["spec"]["template"]["spec"]["serviceAccountName"])


def accounts(registered: Registered) -> dict[str, Any]:
    return {r.inputs["metadata"]["name"]: r.inputs["metadata"].get("annotations") for r in registered.of_type(ACCOUNT)}


def alias_urn(registration: Registration, name: str) -> str:
    """The URN an alias spec names, as the engine builds it: the old parent's type chain, then this resource's
    type and (unless the spec renames it) its name. The mocks prefix a top-level component's type with the root
    Stack's, which the engine leaves out of every URN (pulumi.runtime.mocks make_urn keeps the parent's type)."""
    (alias,) = registration.aliases
    spec = alias.spec
    stack_urn, project, chain, _ = spec.parentUrn.split("::")
    chain = chain.removeprefix("pulumi:pulumi:Stack$")
    return f"{stack_urn}::{project}::{chain}${spec.type or registration.typ}::{spec.name or name}"


def test_the_copy_jobs_pod_runs_as_the_servers_service_account() -> None:
    registered, _ = copying()
    copy_job = registered.named("llama-cache-copy").inputs["spec"]["template"]["spec"]
    assert copy_job["serviceAccountName"] == pod_account(registered, "kubernetes:apps/v1:Deployment")


def test_a_bucket_copy_leaves_one_account_and_it_carries_the_identity_which_the_rollout_gates_own_does_not() -> None:
    registered, _ = copying()
    assert accounts(registered) == {"llama-server": IDENTITY, "llama-rolled-out": None}


def test_the_hub_download_account_carries_no_workload_identity() -> None:
    registered, _ = run_recording(build_stack(*stack("prod-on-efs")))
    assert accounts(registered)["llama-model-download"] is None


def test_the_copy_job_waits_for_the_servers_account() -> None:
    _, requests = copying()
    assert any(d.endswith("::llama-server-sa") for d in requests["llama-cache-copy"].dependencies)


def test_the_servers_account_is_a_child_of_the_serving_stack() -> None:
    _, requests = copying()
    assert requests["llama-server-sa"].parent.endswith("vllm-serving:index:ServingStack::llama")


def test_the_server_workload_still_waits_for_its_account() -> None:
    _, requests = copying()
    assert any(d.endswith("::llama-server-sa") for d in requests["llama-server-deployment"].dependencies)


def test_the_servers_account_aliases_the_urn_it_had_under_the_server_component() -> None:
    _, requests = copying()
    assert alias_urn(requests["llama-server-sa"], "llama-server-sa") == OLD_URN
