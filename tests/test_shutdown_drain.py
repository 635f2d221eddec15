"""A replica that goes away drains its answers in flight (docs/sources.md §A.7): the kubelet runs the preStop sleep,
sends SIGTERM, and kills at the grace period's end; vLLM's --shutdown-timeout must fit between, with the teardown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plan.vllm_args import ENGINE_TEARDOWN_SECONDS, drain_seconds
from tests.factories import make_config
from tests.program import run_repository_stack

STACKS = Path(__file__).resolve().parent.parent / "stacks"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"


def _flag(args: list[str], flag: str) -> str | None:
    return args[args.index(flag) + 1] if flag in args else None


def _server_pod(path: Path) -> dict[str, Any]:
    registered, error = run_repository_stack(path)
    assert error is None, error
    return registered.one(DEPLOYMENT)["spec"]["template"]["spec"]


def test_the_deployment_drains_for_its_grace_period_less_the_pre_stop_sleep_and_the_teardown() -> None:
    pod = _server_pod(STACKS / "Pulumi.prod.yaml")
    server = pod["containers"][0]
    pre_stop = int(server["lifecycle"]["preStop"]["exec"]["command"][1])
    drain = int(_flag(server["args"], "--shutdown-timeout") or 0)
    assert (pre_stop, drain, pod["terminationGracePeriodSeconds"]) == (10, 155, 10 + 155 + ENGINE_TEARDOWN_SECONDS)


def test_a_release_without_the_flag_renders_no_shutdown_timeout() -> None:
    pod = _server_pod(STACKS / "examples" / "Pulumi.llama-8b-on-vllm-0.7.2.yaml")
    assert _flag(pod["containers"][0]["args"], "--shutdown-timeout") is None


def test_the_docker_container_is_stopped_after_the_grace_period_and_drains_inside_it() -> None:
    registered, error = run_repository_stack(STACKS / "Pulumi.docker-8b.yaml")
    assert error is None, error
    container = registered.named("vllm-docker-8b-server").inputs
    drain = int(_flag(container["command"], "--shutdown-timeout") or 0)
    assert (container["stopTimeout"], drain) == (180, 180 - ENGINE_TEARDOWN_SECONDS)


def test_a_grace_period_with_no_room_left_still_drains_for_a_second_instead_of_aborting() -> None:
    cfg = make_config(server={"termination_grace_period_seconds": 20, "pre_stop_sleep_seconds": 10})
    assert drain_seconds(cfg.server, cfg.target) == 1


def _group_templates(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    registered, error = run_repository_stack(path)
    assert error is None, error
    group = registered.one("kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet")["spec"]["leaderWorkerTemplate"]
    return group["leaderTemplate"]["spec"], group["workerTemplate"]["spec"]


def _pre_stop(pod: dict[str, Any]) -> int:
    return int(pod["containers"][0]["lifecycle"]["preStop"]["exec"]["command"][1])


def test_a_groups_workers_get_sigterm_only_once_the_leader_has_drained() -> None:
    leader, worker = _group_templates(STACKS / "examples" / "Pulumi.llama-405b-on-2x8-a100-80gb.yaml")
    drain = int(_flag(leader["containers"][0]["args"], "--shutdown-timeout") or 0)
    assert _pre_stop(worker) == _pre_stop(leader) + drain


def test_a_groups_workers_still_tear_down_inside_their_grace_period() -> None:
    _leader, worker = _group_templates(STACKS / "examples" / "Pulumi.llama-405b-on-2x8-a100-80gb.yaml")
    assert _pre_stop(worker) + ENGINE_TEARDOWN_SECONDS <= worker["terminationGracePeriodSeconds"]
