"""After `pulumi up`, the new server pod's start-up phases as the `startupPhases` output (Pulumi mocks; the pod's
log and events come from a fake cluster reader holding a stored 0.19.0 start-up)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from cluster import pod_start
from cluster.live import LiveReadError
from tests.harness import resolve
from tests.program import run_stack_file

STACKS = Path(__file__).parent.parent / "stacks"
LOG = (Path(__file__).parent / "data" / "startup-phases" / "L1-0.19.0.log").read_text()
REAL_READ = pod_start.read_pod_start  # tests/conftest.py replaces it in every test
EVENTS = 'Pulled: Successfully pulled image "vllm/vllm-openai:v0.33.0" in 4m2s (4m2s including waiting)'


def read_from(calls: list[dict[str, Any]]):  # type: ignore[no-untyped-def]
    def read(kubeconfig: str | None, context: str | None, namespace: str, selector: dict[str, str], container: str):  # type: ignore[no-untyped-def]
        calls.append({"namespace": namespace, "selector": selector, "container": container})
        return pod_start.PodStart("vllm-dev-server-abc", LOG, EVENTS)

    return read


def test_up_exports_the_new_pods_phases_beside_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(pod_start, "read_pod_start", read_from(calls))
    registered, error = run_stack_file(STACKS / "Pulumi.dev.yaml")
    assert error is None
    phases = resolve(registered.exports["startupPhases"])
    logged = {row["phase"]: row["logged_seconds"] for row in phases["phases"]}
    assert (phases["pod"], logged["image_pull"], logged["compile"], phases["whole_start_seconds"]) == (
        "vllm-dev-server-abc",
        242.0,
        11.07,
        53.0,
    )


def test_up_exports_the_phase_factors_the_new_pod_measured_on_its_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pod_start, "read_pod_start", read_from([]))
    registered, error = run_stack_file(STACKS / "Pulumi.dev.yaml")
    assert error is None
    factors = resolve(registered.exports["startupPhases"])["measured_phase_factors"]
    assert set(factors) == {"process_start", "compile", "cuda_graphs", "kv_cache_init", "api_ready"}


def test_the_server_container_of_the_stacks_own_pods_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(pod_start, "read_pod_start", read_from(calls))
    registered, _ = run_stack_file(STACKS / "Pulumi.dev.yaml")
    resolve(registered.exports["startupPhases"])
    assert calls[0]["container"] == "vllm" and calls[0]["selector"]["app.kubernetes.io/component"] == "server"


def test_a_cluster_that_cannot_be_read_gives_the_reason_and_up_still_succeeds() -> None:
    registered, error = run_stack_file(STACKS / "Pulumi.dev.yaml")  # tests/conftest.py: no cluster in tests
    assert error is None
    assert resolve(registered.exports["startupPhases"]) == {"status": "not read: no cluster in tests"}


def pod(name: str, started: int, ready: bool) -> SimpleNamespace:
    condition = SimpleNamespace(type="Ready", status="True" if ready else "False")
    return SimpleNamespace(
        metadata=SimpleNamespace(name=name), status=SimpleNamespace(conditions=[condition], start_time=started)
    )


def test_the_newest_ready_pod_is_the_one_a_rollout_just_added() -> None:
    pods = [pod("old", 1, True), pod("new", 3, True), pod("starting", 5, False)]
    newest = pod_start.newest_ready(pods)
    assert newest is not None and newest.metadata.name == "new"


def test_no_ready_pod_is_a_read_error_naming_the_selector() -> None:
    class Core:
        def list_namespaced_pod(self, namespace: str, label_selector: str) -> SimpleNamespace:
            return SimpleNamespace(items=[pod("starting", 5, False)])

    with pytest.raises(LiveReadError, match="no ready pod in namespace vllm matches app=x"):
        REAL_READ(None, None, "vllm", {"app": "x"}, "vllm", core=Core())
