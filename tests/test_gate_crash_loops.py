"""The rollout gate fails in minutes when a group cannot start, not at its deadline (hours for a large model):
smoke/rolled_out.py reads the groups' pods at every poll. LeaderWorkerSet recreates the whole group when one
container restarts (kubernetes-sigs/lws pkg/controllers/pod_controller.go handleRestartPolicy), so a crash loop
shows as the leader pod replaced again and again at one template revision, never as a restart count. The real
script in a subprocess against tests/gate_api.py's stand-in API server, its pods as the kubelet reports them."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

from tests.factories import REPO
from tests.gate_api import ROLLING, SCRIPT, lws, pod_list, run_gate, token_file

__all__ = ["token_file"]  # the fixture, imported for pytest

ROLLING_FOREVER = [(200, lws(3, 3, 0, 1, False))]  # a rollout that never ends by itself
TRACEBACK = "INFO 12-07 loading\nTraceback (most recent call last):\nValueError: --max-model-len 262144 > 131072"


def pod(
    name: str,
    uid: str,
    revision: str = "rev-new",
    worker: str = "0",
    exited: dict[str, Any] | None = None,
    waiting: dict[str, Any] | None = None,
    conditions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One rank of group 0 as the API server lists it: `exited` its container's lastState.terminated."""
    labels = {
        "leaderworkerset.sigs.k8s.io/name": "vllm-405b-group",
        "leaderworkerset.sigs.k8s.io/group-index": "0",
        "leaderworkerset.sigs.k8s.io/worker-index": worker,
        "leaderworkerset.sigs.k8s.io/template-revision-hash": revision,
    }
    container: dict[str, Any] = {"name": "vllm", "restartCount": 1 if exited else 0, "state": {"running": {}}}
    if exited:
        container["lastState"] = {"terminated": exited}
    if waiting:
        container["state"] = {"waiting": waiting}
    status = {"containerStatuses": [container], "conditions": conditions or []}
    return {"metadata": {"name": name, "uid": uid, "labels": labels}, "status": status}


CRASHED = {"exitCode": 1, "reason": "Error", "message": TRACEBACK}
# A group whose leader crashes at start, each time recreated by LWS under the same name with a new UID.
CRASH_LOOP = [
    pod_list(pod("vllm-405b-group-0", "uid-1")),
    pod_list(pod("vllm-405b-group-0", "uid-1", exited=CRASHED)),
    pod_list(pod("vllm-405b-group-0", "uid-2")),
    pod_list(pod("vllm-405b-group-0", "uid-3")),
    pod_list(pod("vllm-405b-group-0", "uid-4")),
]


def fail_line(stdout: str) -> str:
    (line,) = [line for line in stdout.splitlines() if line.startswith("FAIL ")]
    return line


def test_a_group_recreated_three_times_at_one_revision_fails_the_gate(token_file: Path) -> None:
    result, _ = run_gate(ROLLING_FOREVER, token_file, CRASH_LOOP)
    assert result.returncode == 1, result.stdout
    assert "FAIL group 0 was recreated 3 times at revision rev-new" in result.stdout


def test_the_crash_loop_failure_names_the_last_exit_and_the_tail_of_its_log(token_file: Path) -> None:
    result, _ = run_gate(ROLLING_FOREVER, token_file, CRASH_LOOP)
    assert fail_line(result.stdout).endswith(
        "last: pod vllm-405b-group-0 container vllm exited 1 (Error): "
        "INFO 12-07 loading | Traceback (most recent call last): | ValueError: --max-model-len 262144 > 131072"
    )


def test_a_group_recreated_fewer_times_than_the_limit_keeps_the_gate_waiting(token_file: Path) -> None:
    result, _ = run_gate(ROLLING, token_file, CRASH_LOOP[:3], "--restarts-limit", "2")
    assert result.returncode == 0, result.stdout


def test_a_rolling_update_that_replaces_each_leader_once_at_a_new_revision_does_not_fail(token_file: Path) -> None:
    groups = [pod_list(pod("vllm-405b-group-0", f"uid-{n}", revision=f"rev-{n}")) for n in range(5)]
    result, _ = run_gate(ROLLING, token_file, groups, "--restarts-limit", "1")
    assert result.returncode == 0, result.stdout


def test_each_exit_is_printed_once_with_its_pod_as_the_gate_sees_it(token_file: Path) -> None:
    result, _ = run_gate(ROLLING_FOREVER, token_file, CRASH_LOOP)
    exits = [line for line in result.stdout.splitlines() if "exited 1" in line and not line.startswith("FAIL")]
    assert len(exits) == 1 and exits[0].startswith("pod vllm-405b-group-0 container vllm exited 1 (Error): ")


def test_an_image_name_that_does_not_parse_fails_the_gate_at_once(token_file: Path) -> None:
    waiting = {"reason": "InvalidImageName", "message": 'Failed to apply default image tag "vllm/vllm-openai:": invalid'}
    result, seen = run_gate(
        ROLLING_FOREVER, token_file, [pod_list(pod("vllm-405b-group-0-1", "w1", waiting=waiting, worker="1"))]
    )
    assert result.returncode == 1 and len(seen) == 2, result.stdout
    assert fail_line(result.stdout).startswith("FAIL pod vllm-405b-group-0-1 container vllm cannot start: InvalidImageName: ")


def test_a_failing_image_pull_fails_the_gate_once_it_has_lasted_the_stuck_window(token_file: Path) -> None:
    waiting = {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "vllm/vllm-openai:v9.9.9"'}
    pods = [pod_list(pod("vllm-405b-group-0", "uid-1", waiting=waiting))]
    result, seen = run_gate(ROLLING_FOREVER, token_file, pods, "--stuck-seconds", "0.2")
    assert result.returncode == 1 and len(seen) >= 4, result.stdout  # two polls at least: not at first sight
    line = fail_line(result.stdout)
    assert line.startswith("FAIL pod vllm-405b-group-0 container vllm has waited ")
    assert " s on its image pull: ImagePullBackOff: Back-off pulling" in line


def test_a_failing_image_pull_within_the_stuck_window_keeps_the_gate_waiting(token_file: Path) -> None:
    waiting = {"reason": "ErrImagePull", "message": "rpc error: code = Unknown desc = 429 Too Many Requests"}
    result, _ = run_gate(ROLLING, token_file, [pod_list(pod("vllm-405b-group-0", "uid-1", waiting=waiting))])
    assert result.returncode == 0, result.stdout
    assert "pod vllm-405b-group-0 container vllm waiting: ErrImagePull" in result.stdout


def test_an_unschedulable_group_is_reported_once_and_keeps_the_gate_waiting(token_file: Path) -> None:
    pending = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}
    pending["message"] = "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."
    result, _ = run_gate(ROLLING, token_file, [pod_list(pod("vllm-405b-group-0", "uid-1", conditions=[pending]))])
    assert result.returncode == 0, result.stdout
    line = "pod vllm-405b-group-0 Pending, Unschedulable: 0/4 nodes are available: 4 Insufficient nvidia.com/gpu."
    assert result.stdout.splitlines().count(line) == 1


def test_the_groups_pods_are_read_page_by_page(token_file: Path) -> None:
    first = pod_list(pod("vllm-405b-group-0", "uid-1"), more="page-2")
    second = pod_list(pod("vllm-405b-group-0-1", "w1", worker="1", exited=CRASHED))
    result, seen = run_gate(ROLLING[-2:], token_file, [first, second, pod_list()])
    assert result.returncode == 0, result.stdout
    assert any("continue=page-2" in path for path, _ in seen)
    assert "pod vllm-405b-group-0-1 container vllm exited 1 (Error)" in result.stdout


def test_a_gate_that_may_not_list_pods_fails_at_once_naming_the_answer(token_file: Path) -> None:
    forbidden = {"kind": "Status", "message": 'pods is forbidden: cannot list resource "pods"'}
    result, seen = run_gate(ROLLING_FOREVER, token_file, [(403, forbidden)])
    assert (result.returncode, len(seen)) == (1, 2)
    assert "FAIL the API server answered 403" in result.stdout and "cannot list resource" in result.stdout


def test_a_restarts_limit_below_one_is_refused_naming_the_flag(token_file: Path) -> None:
    result, seen = run_gate(ROLLING, token_file, [pod_list()], "--restarts-limit", "0")
    assert (result.returncode, seen) == (2, [])
    assert "--restarts-limit must be at least 1" in result.stderr


def test_the_limits_docs_multinode_states_are_the_scripts_defaults() -> None:
    module = runpy.run_path(str(SCRIPT))
    page = " ".join((REPO / "docs" / "multinode.md").read_text(encoding="utf-8").split())
    assert f"replaced {module['RESTARTS_LIMIT']} times at one revision (`--restarts-limit`" in page
    assert f"for {module['STUCK_SECONDS']} s (`--stuck-seconds`)" in page
    assert f"for {module['UNREACHABLE_SECONDS']} s (`--unreachable-seconds`)" in page


def restarted(times: int) -> dict[str, Any]:
    """A worker of group 0 whose container restarted in place `times` times (a LeaderWorkerSet with restartPolicy
    None loops within one pod)."""
    worker = pod("vllm-405b-group-0-1", "w1", worker="1", exited=CRASHED)
    worker["status"]["containerStatuses"][0]["restartCount"] = times
    return worker


def test_a_container_restarted_three_times_while_the_gate_watched_fails_the_gate(token_file: Path) -> None:
    result, _ = run_gate(ROLLING_FOREVER, token_file, [pod_list(restarted(1)), pod_list(restarted(4))])
    assert result.returncode == 1, result.stdout
    assert fail_line(result.stdout).startswith(
        "FAIL pod vllm-405b-group-0-1 container vllm restarted 3 times while the gate watched; "
        "last container vllm exited 1 (Error): "
    )


def test_restarts_a_pod_had_before_the_gate_first_saw_it_do_not_fail_the_gate(token_file: Path) -> None:
    result, _ = run_gate(ROLLING, token_file, [pod_list(restarted(5))])
    assert result.returncode == 0, result.stdout
