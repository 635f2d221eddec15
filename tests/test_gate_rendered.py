"""A single-node stack's `pulumi up` ends when its Deployment or StatefulSet has rolled out, and fails in minutes
when the new pods crash: Pulumi does not await the workload (`pulumi.com/skipAwait`), the rollout gate's Job does
(smoke/rolled_out.py, tests/test_gate_single_node.py), and what callers reach waits for the gate. The real program
under Pulumi's mocks, its registrations read field by field; the gate's Role checked against every request the
real script makes for the rendered workload."""

from __future__ import annotations

import math
import runpy
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests import gate_api
from tests.admission import plain
from tests.factories import REPO
from tests.harness import Registered
from tests.kubernetes_fixtures import Registration, run_recording
from tests.program import SECRET_VALUES, stack_file_config
from tests.rbac import get_request, role_allows
from tests.reachability import Host, Pod, allowed
from tests.replacement import replacement
from tests.test_rollout_gate import GATE, depends_on, named, program, urn_of
from validation import assess
from validation.sources import load_stack_file_with_secrets

DEPLOYMENT_FILE = "stacks/Pulumi.dev.yaml"
STATEFULSET_FILE = "stacks/examples/Pulumi.llama-70b-node-local-nvme.yaml"
STACKS = {"Deployment": DEPLOYMENT_FILE, "StatefulSet": STATEFULSET_FILE}
WORKLOAD_SUFFIX = {"Deployment": "-server-deployment", "StatefulSet": "-server-statefulset"}
API_SERVER = Host("kube-apiserver", "172.16.0.2")
KINDS = pytest.mark.parametrize("kind", sorted(STACKS))

cached = cache(program)


def rendered(kind: str, max_num_seqs: int | None = None) -> tuple[Registered, dict[str, Registration]]:
    return cached(STACKS[kind], max_num_seqs)


def part(kind: str, suffix: str, max_num_seqs: int | None = None) -> dict[str, Any]:
    return plain(dict(named(rendered(kind, max_num_seqs)[0], suffix).inputs))


def gate_command(kind: str) -> list[str]:
    return list(part(kind, GATE)["spec"]["template"]["spec"]["containers"][0]["command"])


def flag(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def selector_of(workload: dict[str, Any]) -> str:
    labels = workload["spec"]["selector"]["matchLabels"]
    return ",".join(f"{key}={value}" for key, value in sorted(labels.items()))


def deployment_routes(workload: dict[str, Any]) -> gate_api.Routes:
    """The rendered Deployment as its controller shows it mid-rollout, then done; its ReplicaSet at revision 2."""
    meta = {**workload["metadata"], "uid": "d-uid", "generation": 2}
    meta["annotations"] = {**meta.get("annotations", {}), "deployment.kubernetes.io/revision": "2"}
    rolling = {"observedGeneration": 2, "updatedReplicas": 0, "replicas": 1, "availableReplicas": 1}
    done = {"observedGeneration": 2, "updatedReplicas": 1, "replicas": 1, "availableReplicas": 1}
    rs_meta = {"labels": {"pod-template-hash": "abc"}, "ownerReferences": [{"uid": "d-uid"}]}
    rs_meta["annotations"] = {"deployment.kubernetes.io/revision": "2"}
    namespace, selector = meta["namespace"], selector_of(workload)
    return {
        (f"/apis/apps/v1/namespaces/{namespace}/deployments/{meta['name']}", None): [
            (200, {**workload, "metadata": meta, "status": rolling}),
            (200, {**workload, "metadata": meta, "status": done}),
        ],
        (f"/apis/apps/v1/namespaces/{namespace}/replicasets", selector): [(200, {"items": [{"metadata": rs_meta}]})],
        (gate_api.pods_path(namespace), f"{selector},pod-template-hash=abc"): [gate_api.pod_list()],
    }


def statefulset_routes(workload: dict[str, Any]) -> gate_api.Routes:
    """The rendered StatefulSet as its controller shows it mid-rollout, then done."""
    meta = {**workload["metadata"], "generation": 2}
    replicas = workload["spec"]["replicas"]
    rolling = {"observedGeneration": 2, "readyReplicas": replicas - 1, "updateRevision": "new", "currentRevision": "old"}
    done = {"observedGeneration": 2, "readyReplicas": replicas, "updateRevision": "new", "currentRevision": "new"}
    namespace, selector = meta["namespace"], selector_of(workload)
    return {
        (f"/apis/apps/v1/namespaces/{namespace}/statefulsets/{meta['name']}", None): [
            (200, {**workload, "metadata": meta, "status": rolling}),
            (200, {**workload, "metadata": meta, "status": done}),
        ],
        (gate_api.pods_path(namespace), f"{selector},controller-revision-hash=new"): [gate_api.pod_list()],
    }


ROUTES = {"Deployment": deployment_routes, "StatefulSet": statefulset_routes}


@KINDS
def test_a_single_node_stack_awaits_its_gate_job_after_the_workload(kind: str) -> None:
    assert depends_on(rendered(kind)[1], GATE, WORKLOAD_SUFFIX[kind])


@KINDS
def test_pulumi_skips_its_own_await_of_the_workload_the_gate_awaits(kind: str) -> None:
    assert part(kind, WORKLOAD_SUFFIX[kind])["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"


@KINDS
def test_the_server_service_waits_for_the_gate_so_pulumis_await_of_it_finds_endpoints(kind: str) -> None:
    assert depends_on(rendered(kind)[1], "-server-service", GATE)


@KINDS
def test_the_smoke_test_waits_for_the_rollout_not_only_for_the_workload(kind: str) -> None:
    assert depends_on(rendered(kind)[1], "-smoke-test-job", GATE)


@KINDS
def test_the_gate_reads_the_workload_of_its_kind_it_awaits(kind: str) -> None:
    workload, command = part(kind, WORKLOAD_SUFFIX[kind]), gate_command(kind)
    expected = (kind, workload["metadata"]["name"], workload["metadata"]["namespace"])
    assert (flag(command, "--kind"), flag(command, "--name"), flag(command, "--namespace")) == expected


def test_the_deployment_gates_role_may_only_get_its_deployment_and_list_pods_and_replicasets() -> None:
    name = part("Deployment", WORKLOAD_SUFFIX["Deployment"])["metadata"]["name"]
    assert part("Deployment", "-rollout-gate-role")["rules"] == [
        {"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": [name], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
        {"apiGroups": ["apps"], "resources": ["replicasets"], "verbs": ["list"]},
    ]


def test_the_statefulset_gates_role_may_only_get_its_statefulset_and_list_pods() -> None:
    name = part("StatefulSet", WORKLOAD_SUFFIX["StatefulSet"])["metadata"]["name"]
    assert part("StatefulSet", "-rollout-gate-role")["rules"] == [
        {"apiGroups": ["apps"], "resources": ["statefulsets"], "resourceNames": [name], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
    ]


@KINDS
def test_the_gates_role_allows_every_request_its_script_makes_for_the_rendered_workload(kind: str, tmp_path: Path) -> None:
    workload, command = part(kind, WORKLOAD_SUFFIX[kind]), gate_command(kind)
    token = tmp_path / "token"
    token.write_text(gate_api.TOKEN)
    routes = ROUTES[kind](workload)
    result, seen = gate_api.run_workload_gate(
        flag(command, "--kind"), flag(command, "--name"), routes, token, namespace=flag(command, "--namespace")
    )
    requests = {get_request(path) for path, _ in seen}
    assert result.returncode == 0, result.stdout + result.stderr
    assert {r.resource for r in requests} == {WORKLOAD_SUFFIX[kind].rsplit("-", 1)[1] + "s", "pods"} | (
        {"replicasets"} if kind == "Deployment" else set()
    )
    assert [r for r in requests if not role_allows(part(kind, "-rollout-gate-role"), r)] == []


@KINDS
def test_the_gates_deadline_is_as_long_as_pulumi_would_have_awaited_the_workload(kind: str) -> None:
    cfg, _ = load_stack_file_with_secrets(REPO / STACKS[kind])
    plan = assess(cfg, stack=Path(STACKS[kind]).name.removeprefix("Pulumi.").removesuffix(".yaml"), hf_token=True).plan
    assert plan is not None
    assert part(kind, GATE)["spec"]["activeDeadlineSeconds"] == plan.delivery.pulumi_timeout_seconds


@KINDS
def test_pulumi_awaits_the_gate_a_minute_past_its_deadline(kind: str) -> None:
    requests = rendered(kind)[1]
    deadline = part(kind, GATE)["spec"]["activeDeadlineSeconds"]
    assert requests[urn_of(requests, GATE)].timeouts["update"] == f"{math.ceil((deadline + 60) / 60)}m"


def gate_pod_and_policies(kind: str) -> tuple[Pod, list[dict[str, Any]]]:
    registered, _ = rendered(kind)
    policies = [plain(dict(r.inputs)) for r in registered.of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy")]
    job = part(kind, GATE)
    pod = Pod("gate", job["metadata"]["namespace"], job["spec"]["template"]["metadata"]["labels"], "10.1.3.4")
    return pod, policies


@KINDS
def test_the_gate_reaches_the_api_server_through_the_stacks_network_policies(kind: str) -> None:
    pod, policies = gate_pod_and_policies(kind)
    assert policies and allowed(policies, pod, API_SERVER, 443)


@KINDS
def test_the_gate_reaches_no_server_pod(kind: str) -> None:
    pod, policies = gate_pod_and_policies(kind)
    labels = part(kind, WORKLOAD_SUFFIX[kind])["spec"]["template"]["metadata"]["labels"]
    assert not allowed(policies, pod, Pod("server", pod.namespace, labels, "10.1.3.9", {"http": 8000}), 8000)


@KINDS
def test_the_gates_first_failure_fails_pulumi_up_and_an_evicted_gate_pod_does_not_count(kind: str) -> None:
    """Pulumi's Job await fails on BackoffLimitExceeded (docs/model-delivery.md), so at once with no retry; a second
    pod would count the server's restarts afresh and take as long again."""
    spec = part(kind, GATE)["spec"]
    rule = {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}
    assert (spec["backoffLimit"], spec["podFailurePolicy"], spec["template"]["spec"]["restartPolicy"]) == (
        0,
        {"rules": [rule]},
        "Never",  # what a podFailurePolicy requires
    )


@KINDS
def test_a_change_that_rolls_the_pods_runs_a_gate_job_of_a_new_name_created_before_the_old_one_goes(kind: str) -> None:
    old, new = part(kind, GATE), part(kind, GATE, max_num_seqs=7)
    assert (new["metadata"]["name"] != old["metadata"]["name"], replacement(old, new, None)) == (True, "create-first")


@KINDS
def test_an_unchanged_stack_keeps_its_completed_gate_job(kind: str) -> None:
    assert replacement(part(kind, GATE), plain(dict(named(program(STACKS[kind])[0], GATE).inputs)), None) is None


@cache
def autoscaled() -> dict[str, Registration]:
    """prod: KEDA on its Prometheus triggers, and monitoring."""
    config, secret_keys = stack_file_config(REPO / "stacks" / "Pulumi.prod.yaml")
    config |= {"api_key": "sk-test", "hf_token": SECRET_VALUES["hf_token"]}
    main = str(REPO / "__main__.py")
    return run_recording(lambda: runpy.run_path(main, run_name="__main__"), config, (*secret_keys, "api_key", "hf_token"))[1]


@pytest.mark.parametrize(
    "suffix", ["-autoscaler-scaledobject", "-monitoring-servicemonitor", "-monitoring-rules", "-monitoring-dashboard"]
)
def test_keda_and_the_monitoring_objects_follow_the_rollout_as_they_did_the_awaited_workload(suffix: str) -> None:
    assert depends_on(autoscaled(), suffix, GATE)
