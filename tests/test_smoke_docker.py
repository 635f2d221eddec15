"""The docker target's smoke test: the same script in a one-shot container on the vLLM container's network."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from components.render.smoke import docker_smoke_command, docker_smoke_spec, docker_smoke_verdict
from config.secrets import StackSecrets
from plan.security import PodSecurity
from plan.traffic import resolve_smoke, smoke_script
from tests.kubernetes_fixtures import plan_of
from tests.test_docker_host import CONTAINER, IMAGE, deploy, docker_stack, unwrap_secret

SMOKE = {"smoke_test": {"enabled": True}}


def keyed_stack(**overrides: Any) -> Any:
    return docker_stack(security={"require_api_key": True}, engine={"served_model_name": "llama-8b"}, **SMOKE, **overrides)


def smoke_container(registered: Any) -> dict[str, Any]:
    (found,) = [r.inputs for r in registered.of_type(CONTAINER) if r.name.endswith("-smoke-test")]
    return found


@pytest.fixture(scope="module")
def deployed() -> Any:
    return deploy(keyed_stack(), StackSecrets(api_key=pulumi.Output.secret("sk-docker")))


def test_the_script_calls_the_server_on_loopback_at_the_container_port_with_the_key_file() -> None:
    assert docker_smoke_command(resolve_smoke(keyed_stack(), CONTAINER, PodSecurity(10001, 10001, 10001), ()), 8000) == [
        "python3",
        "-B",
        "/opt/smoke/check.py",
        "--base-url",
        "http://127.0.0.1:8000",
        "--model",
        "llama-8b",
        "--timeout-seconds",
        "120",
        "--max-tokens",
        "16",
        "--api-key-file",
        "/run/secrets/vllm_api_key",
    ]


def render_docker_smoke(cfg: Any, container_name: str) -> dict[str, Any]:
    traffic = plan_of(cfg).traffic
    assert traffic.smoke is not None
    return docker_smoke_spec(traffic.smoke, traffic.port, container_name)


def test_the_smoke_container_waits_for_its_exit_and_keeps_its_logs() -> None:
    spec = render_docker_smoke(keyed_stack(), "vllm")
    assert (spec["name"], spec["attach"], spec["logs"], spec["must_run"]) == ("vllm-smoke-test", True, True, False)


def test_a_new_revision_replaces_the_smoke_container_so_it_runs_again() -> None:
    revision = {"id": "meta-llama/Llama-3.1-8B-Instruct", "revision": "0e9e39f249a16976918f6564b8830bc894c89659"}
    before, after = render_docker_smoke(keyed_stack(), "vllm"), render_docker_smoke(keyed_stack(model=revision), "vllm")
    assert before["envs"] != after["envs"]


def test_the_smoke_container_shares_the_vllm_containers_network(deployed: Any) -> None:
    registered, _ = deployed
    (vllm,) = [r for r in registered.of_type(CONTAINER) if not r.name.endswith("-smoke-test")]
    assert smoke_container(registered)["networkMode"] == f"container:{vllm.name}-id"


def test_the_script_and_the_key_are_uploaded_the_key_as_a_secret(deployed: Any) -> None:
    uploads = unwrap_secret(smoke_container(deployed[0])["uploads"])  # one secret element makes the list secret
    assert uploads == [
        {"file": "/opt/smoke/check.py", "content": smoke_script(), "permissions": "0444"},
        {"file": "/run/secrets/vllm_api_key", "content": "sk-docker", "permissions": "0400"},
    ]


def test_the_smoke_image_is_pulled_separately(deployed: Any) -> None:
    names = sorted(r.inputs["name"] for r in deployed[0].of_type(IMAGE))
    assert [name.split("@")[0] for name in names] == ["python:3.11-slim", "vllm/vllm-openai:v0.33.0"]


def test_a_passing_run_reports_the_scripts_last_line() -> None:
    assert (
        docker_smoke_verdict(0, "smoke test passed: llama-8b answered 'ready' in 0.4 s\n")
        == "smoke test passed: llama-8b answered 'ready' in 0.4 s"
    )


def test_a_failing_run_raises_with_the_scripts_failure_line() -> None:
    logs = (
        "smoke test FAILED: POST http://127.0.0.1:8000/v1/chat/completions: HTTP 401 (the API key was refused or "
        'is missing): {"error": "Unauthorized"}\n'
    )
    with pytest.raises(RuntimeError, match=r"exited with code 1: smoke test FAILED: .* HTTP 401 .*Unauthorized"):
        docker_smoke_verdict(1, logs)


def test_no_smoke_container_without_docker_wait() -> None:
    registered, outputs = deploy(keyed_stack(docker={"wait": False}), StackSecrets(api_key=pulumi.Output.secret("k")))
    assert [r.name for r in registered.of_type(CONTAINER)] == ["vllm-server"] and outputs["smokeTest"] is None
