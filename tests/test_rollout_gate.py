"""A multi-node stack's `pulumi up` ends only when the LeaderWorkerSet's groups rolled: Pulumi's waitFor on the LWS
is satisfied by the old groups' status right after an update, so a rollout gate Job (smoke/rolled_out.py,
tests/test_rolled_out.py) reads the object until every group is updated and ready, and the smoke test and the
startup report wait for it. The real program under Pulumi's mocks, its registrations read field by field
(docs/multinode.md, "Readiness during `pulumi up`"); a single-node stack's gate: tests/test_gate_rendered.py."""

from __future__ import annotations

import math
import runpy
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import components.stack
from plan import Plan
from plan.rollout_gate import group_start_seconds
from tests import gate_api
from tests.admission import plain
from tests.factories import REPO
from tests.harness import Registered, resolve
from tests.kubernetes_fixtures import Registration, run_recording
from tests.program import SECRET_VALUES, stack_file_config
from tests.rbac import get_request, role_allows
from tests.reachability import Host, Pod, allowed
from tests.replacement import replacement
from validation import assess
from validation.sources import load_stack_file_with_secrets

GROUPS = REPO / "stacks" / "examples" / "Pulumi.llama-405b-on-2x8-a100-80gb.yaml"
JOB = "kubernetes:batch/v1:Job"
GATE = "-server-rollout-gate-job"
API_SERVER = Host("kube-apiserver", "172.16.0.2")  # where KUBERNETES_SERVICE_HOST's ClusterIP is translated to


def program(path: str, max_num_seqs: int | None = None) -> tuple[Registered, dict[str, Registration]]:
    config, secret_keys = stack_file_config(REPO / path)
    config |= {"hf_token": SECRET_VALUES["hf_token"]}
    if max_num_seqs is not None:
        config["engine"] = {**config.get("engine", {}), "max_num_seqs": max_num_seqs}
    main = str(REPO / "__main__.py")
    return run_recording(lambda: runpy.run_path(main, run_name="__main__"), config, (*secret_keys, "hf_token"))


cached = cache(program)
GROUPS_FILE = str(GROUPS.relative_to(REPO))


def named(registered: Registered, suffix: str) -> Any:
    (found,) = [r for r in registered.resources if r.name.endswith(suffix)]
    return found


def urn_of(requests: dict[str, Registration], suffix: str) -> str:
    (name,) = [name for name in requests if name.endswith(suffix)]
    return name


def depends_on(requests: dict[str, Registration], resource: str, on: str) -> bool:
    """Whether `resource` waits for `on` (its dependencies are URNs, which end in the resource's name)."""
    return any(dep.endswith("::" + urn_of(requests, on)) for dep in requests[urn_of(requests, resource)].dependencies)


def gate_job(run: Any = cached, max_num_seqs: int | None = None) -> dict[str, Any]:
    return plain(dict(named(run(GROUPS_FILE, max_num_seqs)[0], GATE).inputs))


def the_plan() -> Plan:
    cfg, _ = load_stack_file_with_secrets(GROUPS)
    plan = assess(cfg, stack=GROUPS.name.removeprefix("Pulumi.").removesuffix(".yaml"), hf_token=True).plan
    assert plan is not None
    return plan


def test_a_multi_node_stack_awaits_its_gate_job_after_the_leaderworkerset() -> None:
    _, requests = cached(GROUPS_FILE)
    assert depends_on(requests, GATE, "-server-leaderworkerset")


def test_the_gate_job_starts_after_its_role_binding_and_script() -> None:
    _, requests = cached(GROUPS_FILE)
    assert depends_on(requests, GATE, "-rollout-gate-role-binding") and depends_on(requests, GATE, "-rollout-gate-script")


def test_the_smoke_test_waits_for_the_groups_to_roll_not_only_for_the_leaderworkerset() -> None:
    _, requests = cached(GROUPS_FILE)
    assert depends_on(requests, "-smoke-test-job", GATE)


def test_the_gates_role_may_only_get_its_one_leaderworkerset_and_list_pods() -> None:
    registered, _ = cached(GROUPS_FILE)
    role = plain(dict(named(registered, "-rollout-gate-role").inputs))
    lws = plain(dict(named(registered, "-server-leaderworkerset").inputs))
    assert role["rules"] == [
        {
            "apiGroups": ["leaderworkerset.x-k8s.io"],
            "resources": ["leaderworkersets"],
            "resourceNames": [lws["metadata"]["name"]],
            "verbs": ["get"],
        },
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
    ]


def test_the_gates_role_allows_every_request_its_script_makes_for_the_rendered_leaderworkerset(
    tmp_path: Path,
) -> None:
    registered, _ = cached(GROUPS_FILE)
    role = plain(dict(named(registered, "-rollout-gate-role").inputs))
    command = gate_job()["spec"]["template"]["spec"]["containers"][0]["command"]
    namespace, name = command[command.index("--namespace") + 1], command[command.index("--name") + 1]
    token = tmp_path / "token"
    token.write_text(gate_api.TOKEN)
    _, seen = gate_api.run_gate(gate_api.ROLLING, token, gate_api.NO_PODS, namespace=namespace, name=name)
    requests = {get_request(path) for path, _ in seen}
    assert {r.verb for r in requests} == {"get", "list"}
    assert [r for r in requests if not role_allows(role, r)] == []


def test_the_gates_role_is_bound_to_the_account_its_job_runs_as() -> None:
    registered, _ = cached(GROUPS_FILE)
    binding = plain(dict(named(registered, "-rollout-gate-role-binding").inputs))
    role = plain(dict(named(registered, "-rollout-gate-role").inputs))
    account = gate_job()["spec"]["template"]["spec"]["serviceAccountName"]
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role["metadata"]["name"]}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": role["metadata"]["namespace"]}]


def test_the_gates_pod_runs_as_its_account_with_a_token() -> None:
    spec = gate_job()["spec"]["template"]["spec"]
    account = plain(dict(named(cached(GROUPS_FILE)[0], "-rollout-gate-account").inputs))
    assert (spec["serviceAccountName"], spec["automountServiceAccountToken"]) == (account["metadata"]["name"], True)


def test_the_gate_reads_the_leaderworkerset_it_awaits() -> None:
    registered, _ = cached(GROUPS_FILE)
    lws = plain(dict(named(registered, "-server-leaderworkerset").inputs))
    command = gate_job()["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command[command.index("--name") + 1] == lws["metadata"]["name"]
    assert command[command.index("--namespace") + 1] == lws["metadata"]["namespace"]


def test_a_change_that_rolls_the_groups_runs_a_new_gate_job_created_before_the_old_one_goes() -> None:
    """A new name: a GitOps tool applies it as a new Job, where a changed template under the old name is refused."""
    old, new = gate_job(), gate_job(max_num_seqs=32)  # the stack's is 64
    assert replacement(old, new, None) == "create-first"


def test_the_gate_is_left_to_the_provider_to_delete_first() -> None:
    _, requests = cached(GROUPS_FILE)
    assert requests[urn_of(requests, GATE)].delete_before_replace is None


def test_an_unchanged_stack_keeps_its_completed_gate() -> None:
    old, new = gate_job(), gate_job(run=program)  # a second run of the program
    assert replacement(old, new, None) is None


def test_the_gates_deadline_lets_every_group_roll_in_turn() -> None:
    plan = the_plan()
    budget, groups = plan.delivery.budget, plan.delivery.most_replicas
    expected = groups * (group_start_seconds(budget) + plan.server.termination_grace_period_seconds)
    assert gate_job()["spec"]["activeDeadlineSeconds"] == expected


def test_pulumi_awaits_the_gate_a_minute_past_its_deadline() -> None:
    _, requests = cached(GROUPS_FILE)
    deadline = gate_job()["spec"]["activeDeadlineSeconds"]
    assert requests[urn_of(requests, GATE)].timeouts["create"] == f"{math.ceil((deadline + 60) / 60)}m"


def gate_pod_and_policies() -> tuple[Pod, list[dict[str, Any]]]:
    registered, _ = cached(GROUPS_FILE)
    policies = [plain(dict(r.inputs)) for r in registered.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")]
    job = gate_job()
    pod = Pod("gate", job["metadata"]["namespace"], job["spec"]["template"]["metadata"]["labels"], "10.1.3.4")
    return pod, policies


def test_the_gate_reaches_the_api_server_through_the_stacks_network_policies() -> None:
    pod, policies = gate_pod_and_policies()
    assert policies and allowed(policies, pod, API_SERVER, 443)


def test_the_gate_reaches_no_server_pod() -> None:
    pod, policies = gate_pod_and_policies()
    lws = plain(dict(named(cached(GROUPS_FILE)[0], "-server-leaderworkerset").inputs))
    labels = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["metadata"]["labels"]
    leader = Pod("leader", pod.namespace, labels, "10.1.3.9", {"http": 8000})
    assert not allowed(policies, pod, leader, 8000)


def test_the_startup_report_reads_the_new_pods_only_after_the_gate_ended(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the report waits for (components/startup_report.py `after`) includes the gate Job's name."""
    waited: list[Any] = []

    def recording(plan: Plan, namespace: Any, after: list[Any]) -> None:
        waited.extend(after)

    monkeypatch.setattr(components.stack, "startup_phases_output", recording)
    registered, _ = program(GROUPS_FILE)
    gate = plain(dict(named(registered, GATE).inputs))["metadata"]["name"]
    assert gate in [resolve(output) for output in waited]
