"""The rollout gate of a single-node server: smoke/rolled_out.py on a Deployment or a StatefulSet ends when
`kubectl rollout status` would (kubernetes/kubernetes staging/src/k8s.io/kubectl/pkg/polymorphichelpers/
rollout_status.go@18ff3ed0), and fails in minutes when the pods of the rollout's revision crash, where Pulumi's
own await ran to the resource's timeout. The real script in a subprocess against tests/gate_api.py's stand-in API
server, the objects as the Deployment and StatefulSet controllers write them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.gate_api import NAMESPACE, Routes, pod_list, pods_path, run_workload_gate, token_file

__all__ = ["token_file"]  # the fixture, imported for pytest

NAME, UID = "vllm-8b", "deployment-uid"
SELECTOR = "app.kubernetes.io/instance=vllm-8b,app.kubernetes.io/name=vllm"
DEPLOYMENT_PATH = f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{NAME}"
STATEFULSET_PATH = f"/apis/apps/v1/namespaces/{NAMESPACE}/statefulsets/{NAME}"
REPLICASETS_PATH = f"/apis/apps/v1/namespaces/{NAMESPACE}/replicasets"
CRASHED = {"exitCode": 1, "reason": "Error", "message": "Traceback (most recent call last):\nValueError: no such model"}


def labels() -> dict[str, str]:
    return dict(part.split("=") for part in SELECTOR.split(","))


def deployment(observed: int, updated: int, total: int, available: int, timed_out: bool = False) -> dict[str, Any]:
    """Generation 4 of two replicas at revision 7, its status as the Deployment controller writes it."""
    reason = "ProgressDeadlineExceeded" if timed_out else "ReplicaSetUpdated"
    condition = {"type": "Progressing", "status": "False" if timed_out else "True", "reason": reason}
    condition["message"] = f'ReplicaSet "{NAME}-new" has timed out progressing.' if timed_out else ""
    status: dict[str, Any] = {"observedGeneration": observed, "updatedReplicas": updated, "replicas": total}
    status |= {"availableReplicas": available, "conditions": [condition]}
    meta = {"name": NAME, "uid": UID, "generation": 4, "annotations": {"deployment.kubernetes.io/revision": "7"}}
    return {"metadata": meta, "spec": {"replicas": 2, "selector": {"matchLabels": labels()}}, "status": status}


def replicaset(template_hash: str, revision: str, owner: str = UID) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"{NAME}-{template_hash}", "labels": {**labels(), "pod-template-hash": template_hash}}
    meta |= {"annotations": {"deployment.kubernetes.io/revision": revision}, "ownerReferences": [{"uid": owner}]}
    return {"metadata": meta}


REPLICASETS = [(200, {"items": [replicaset("old", "6"), replicaset("stray", "7", owner="other"), replicaset("new", "7")]})]
ROLLING = [
    (200, deployment(3, 2, 2, 2)),  # the status of generation 3 right after the apply
    (200, deployment(4, 1, 3, 2)),
    (200, deployment(4, 2, 3, 2)),  # an old pod still terminating
    (200, deployment(4, 2, 2, 1)),
    (200, deployment(4, 2, 2, 2)),
]


def pod(name: str, restarts: int, **extra_labels: str) -> dict[str, Any]:
    container = {"name": "vllm", "restartCount": restarts, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
    container["lastState"] = {"terminated": CRASHED}
    meta = {"name": name, "uid": f"uid-{name}", "labels": {**labels(), **extra_labels}}
    return {"metadata": meta, "status": {"containerStatuses": [container]}}


def crash_loop(name: str, **extra_labels: str) -> list[tuple[int, Any]]:
    return [pod_list(pod(name, 1, **extra_labels)), pod_list(pod(name, 4, **extra_labels))]


def deployment_routes(answers: list[tuple[int, Any]], pods: list[tuple[int, Any]] | None = None) -> Routes:
    return {
        (DEPLOYMENT_PATH, None): answers,
        (REPLICASETS_PATH, SELECTOR): REPLICASETS,
        (pods_path(), f"{SELECTOR},pod-template-hash=new"): pods or [pod_list()],
    }


def statefulset(ready: int, update_revision: str, current_revision: str, partition: int = 0) -> dict[str, Any]:
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"partition": partition}}
    spec = {"replicas": 2, "selector": {"matchLabels": labels()}, "updateStrategy": strategy}
    status: dict[str, Any] = {"observedGeneration": 2, "readyReplicas": ready, "updatedReplicas": 1}
    status |= {"updateRevision": update_revision, "currentRevision": current_revision}
    return {"metadata": {"name": NAME, "generation": 2}, "spec": spec, "status": status}


def statefulset_routes(answers: list[tuple[int, Any]], pods: list[tuple[int, Any]] | None = None) -> Routes:
    return {
        (STATEFULSET_PATH, None): answers,
        (pods_path(), f"{SELECTOR},controller-revision-hash=vllm-8b-new"): pods or [pod_list()],
    }


def fail_line(stdout: str) -> str:
    (line,) = [line for line in stdout.splitlines() if line.startswith("FAIL ")]
    return line


def test_a_deployment_gate_exits_zero_once_every_replica_is_updated_and_available(token_file: Path) -> None:
    result, _ = run_workload_gate("Deployment", NAME, deployment_routes(ROLLING), token_file)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_deployment_gate_prints_each_step_of_the_rollout_and_the_last_as_ok(token_file: Path) -> None:
    result, _ = run_workload_gate("Deployment", NAME, deployment_routes(ROLLING), token_file)
    assert result.stdout.splitlines() == [
        "generation 4 (observed 3): 2 of 2 replicas updated, 0 old pending, 2 available",
        "generation 4 (observed 4): 1 of 2 replicas updated, 2 old pending, 2 available",
        "generation 4 (observed 4): 2 of 2 replicas updated, 1 old pending, 2 available",
        "generation 4 (observed 4): 2 of 2 replicas updated, 0 old pending, 1 available",
        "OK generation 4 (observed 4): 2 of 2 replicas updated, 0 old pending, 2 available",
    ]


def test_a_deployment_past_its_progress_deadline_fails_the_gate_naming_it(token_file: Path) -> None:
    routes = deployment_routes([(200, deployment(4, 1, 2, 1, timed_out=True))])
    result, _ = run_workload_gate("Deployment", NAME, routes, token_file)
    assert result.returncode == 1, result.stdout
    assert fail_line(result.stdout) == (
        f'FAIL deployment {NAME} exceeded its progress deadline: ReplicaSet "{NAME}-new" has timed out progressing.'
    )


def test_a_crash_loop_in_the_new_replicasets_pods_fails_the_deployment_gate(token_file: Path) -> None:
    routes = deployment_routes([(200, deployment(4, 1, 3, 2))], crash_loop(f"{NAME}-new-a", **{"pod-template-hash": "new"}))
    result, _ = run_workload_gate("Deployment", NAME, routes, token_file)
    assert result.returncode == 1, result.stdout
    assert fail_line(result.stdout).startswith(f"FAIL pod {NAME}-new-a container vllm restarted 3 times while the gate")


def test_the_deployment_gate_reads_the_pods_of_the_replicaset_it_owns_at_its_revision_only(token_file: Path) -> None:
    _, seen = run_workload_gate("Deployment", NAME, deployment_routes(ROLLING), token_file)
    pod_reads = {path for path, _ in seen if path.startswith(pods_path())}
    assert pod_reads and all("pod-template-hash%3Dnew" in path for path in pod_reads)


def test_a_deployment_whose_replicaset_is_not_made_yet_is_awaited_without_reading_pods(token_file: Path) -> None:
    routes = deployment_routes(ROLLING)
    routes[(REPLICASETS_PATH, SELECTOR)] = [(200, {"items": [replicaset("old", "6")]})]
    result, seen = run_workload_gate("Deployment", NAME, routes, token_file)
    assert result.returncode == 0 and not [path for path, _ in seen if path.startswith(pods_path())]


def test_a_statefulset_all_ready_but_not_at_its_update_revision_keeps_the_gate_waiting(token_file: Path) -> None:
    answers = [(200, statefulset(2, "vllm-8b-new", "vllm-8b-old")), (200, statefulset(2, "vllm-8b-new", "vllm-8b-new"))]
    result, seen = run_workload_gate("StatefulSet", NAME, statefulset_routes(answers), token_file)
    assert result.returncode == 0, result.stdout
    assert sum(path == STATEFULSET_PATH for path, _ in seen) == 2


def test_a_statefulset_gate_ends_at_once_when_every_replica_is_ready_at_the_current_revision(token_file: Path) -> None:
    answers = [(200, statefulset(2, "vllm-8b-new", "vllm-8b-new"))]
    result, _ = run_workload_gate("StatefulSet", NAME, statefulset_routes(answers), token_file)
    assert result.stdout.splitlines() == ["OK generation 2 (observed 2): 2 of 2 ready, 1 at revision vllm-8b-new"]


def test_a_statefulset_not_all_ready_keeps_the_gate_waiting(token_file: Path) -> None:
    answers = [(200, statefulset(1, "vllm-8b-new", "vllm-8b-new")), (200, statefulset(2, "vllm-8b-new", "vllm-8b-new"))]
    _, seen = run_workload_gate("StatefulSet", NAME, statefulset_routes(answers), token_file)
    assert sum(path == STATEFULSET_PATH for path, _ in seen) == 2


def test_a_crash_loop_at_the_statefulsets_update_revision_fails_its_gate(token_file: Path) -> None:
    pods = crash_loop(f"{NAME}-0", **{"controller-revision-hash": "vllm-8b-new"})
    routes = statefulset_routes([(200, statefulset(1, "vllm-8b-new", "vllm-8b-old"))], pods)
    result, _ = run_workload_gate("StatefulSet", NAME, routes, token_file)
    assert result.returncode == 1, result.stdout
    assert fail_line(result.stdout).startswith(f"FAIL pod {NAME}-0 container vllm restarted 3 times while the gate")


def test_a_crash_loop_in_the_old_replicasets_pods_does_not_fail_the_rollout_of_its_fix(token_file: Path) -> None:
    routes = deployment_routes(ROLLING)
    routes[(pods_path(), f"{SELECTOR},pod-template-hash=old")] = crash_loop(f"{NAME}-old-a", **{"pod-template-hash": "old"})
    result, _ = run_workload_gate("Deployment", NAME, routes, token_file)
    assert result.returncode == 0, result.stdout


def test_a_deployment_scaled_to_zero_has_rolled_out_at_once(token_file: Path) -> None:
    scaled = deployment(4, 0, 0, 0)
    scaled["spec"]["replicas"] = 0
    result, seen = run_workload_gate("Deployment", NAME, deployment_routes([(200, scaled)]), token_file)
    assert (result.returncode, [path for path, _ in seen]) == (0, [DEPLOYMENT_PATH])


def test_a_statefulset_with_a_partition_has_rolled_out_once_the_replicas_past_it_are_updated(token_file: Path) -> None:
    answers = [(200, statefulset(2, "vllm-8b-new", "vllm-8b-old", partition=1))]
    result, _ = run_workload_gate("StatefulSet", NAME, statefulset_routes(answers), token_file)
    assert result.returncode == 0, result.stdout


def test_a_kind_the_gate_does_not_know_exits_two_naming_the_kinds_it_does(token_file: Path) -> None:
    result, seen = run_workload_gate("DaemonSet", NAME, {}, token_file)
    assert (result.returncode, seen) == (2, [])
    assert "--kind: invalid choice: 'DaemonSet'" in result.stderr
    assert all(kind in result.stderr for kind in ("Deployment", "LeaderWorkerSet", "StatefulSet"))
