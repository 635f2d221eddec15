"""A rotation with no client refused: while the api_key_previous secret is set, every server pod accepts it beside
api_key (`--api-key $(VLLM_API_KEY) $(API_KEY_PREVIOUS)`, both from the Secret), and the router rolls to api_key
only after the servers, so neither roll of a rotation refuses a client or the router (docs/security.md, "Rotating
the API key"). The real program under Pulumi's mocks; tests/e2e/test_key_rotation.py runs the rendered server."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from pulumi.runtime.rpc import _special_sig_key as SECRET_SIG  # the key of a wrapped secret value

import components.stack
from cli.preflight import main as preflight_main
from cli.render import main as render_main
from components.router import Router, RouterArgs
from config.sources import read_stack_file
from config.stack import StackConfig
from tests.admission import plain as as_admitted
from tests.admission import secret_key_problems, stack_problems
from tests.factories import REPO
from tests.program import run_stack_file
from validation import Outcome, assess
from validation.keys import validate_config

ANNOTATION = "vllm-serving.io/api-key-revision"
NEW, OLD = "sk-new-key-0123456789abcdef", "sk-old-key-fedcba9876543210"
SERVER_ARGS_TAIL = ["--api-key", "$(VLLM_API_KEY)", "$(API_KEY_PREVIOUS)"]
ROUTED = "examples/Pulumi.router-two-replicas.yaml"  # a Deployment of two replicas behind the router
GROUPS = "examples/Pulumi.llama-405b-on-2x8-a100-80gb.yaml"  # a LeaderWorkerSet: leader and worker templates


@cache
def registered(stack: str, key: str = NEW, previous: str | None = OLD) -> tuple[dict[str, Any], ...]:
    """The inputs of every Kubernetes object the program registers (secrets still wrapped)."""
    extra: dict[str, Any] = {"security": {"require_api_key": True}, "api_key": key}
    if previous is not None:
        extra["api_key_previous"] = previous
    run, error = run_stack_file(REPO / "stacks" / stack, extra=extra)
    assert error is None, error
    return tuple(dict(resource.inputs) for resource in run.resources if resource.typ.startswith("kubernetes:"))


def refusal(stack: str, **changes: Any) -> tuple[int, str]:
    """What the program registers and the error it stops with, for a stack that sets api_key_previous."""
    extra = {"api_key": NEW, "api_key_previous": OLD, **changes}
    run, error = run_stack_file(REPO / "stacks" / stack, extra=extra)
    assert error is not None
    return len(run.resources), str(error)


def the_secret(objects: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    return next(o for o in objects if "stringData" in o and o["metadata"]["name"].endswith("-api-key"))


def containers(objects: tuple[dict[str, Any], ...], name: str) -> list[dict[str, Any]]:
    """The main container of each pod template of the component (a LeaderWorkerSet's leader, then worker)."""
    found = []
    for obj in objects:
        spec = obj.get("spec", {})
        templates = [spec["template"]] if "template" in spec else []
        templates += (
            [spec["leaderWorkerTemplate"][role] for role in ("leaderTemplate", "workerTemplate")]
            if "leaderWorkerTemplate" in spec
            else []
        )
        found += [t["spec"]["containers"][0] for t in templates if component(t) == name]
    return found


def key_refs(container: dict[str, Any]) -> dict[str, str]:
    """Each env variable taken from the API-key Secret, and the Secret's key it reads."""
    refs = {env["name"]: env.get("valueFrom", {}).get("secretKeyRef", {}) for env in container["env"]}
    return {name: ref["key"] for name, ref in refs.items() if ref.get("name", "").endswith("-api-key")}


def fingerprint(stack: str, key: str, previous: str | None) -> str:
    """The annotation on the server's pod template."""
    (server,) = [o for o in registered(stack, key, previous) if component(o.get("spec", {}).get("template")) == "server"]
    return str(server["spec"]["template"]["metadata"]["annotations"][ANNOTATION])


def component(template: dict[str, Any] | None) -> str | None:
    return template["metadata"]["labels"].get("app.kubernetes.io/component") if template else None


def test_the_api_key_secret_holds_the_previous_key_beside_the_new_one_as_a_secret() -> None:
    data = the_secret(registered(ROUTED))["stringData"]
    assert isinstance(data, dict) and SECRET_SIG in data  # encrypted in the state, hidden in the preview
    assert as_admitted(data) == {"api-key": NEW, "api-key-previous": OLD}


@pytest.mark.parametrize("stack", [ROUTED, GROUPS])
def test_every_server_container_takes_both_keys_from_the_secret_onto_its_command_line(stack: str) -> None:
    found = containers(registered(stack), "server")
    assert len(found) == (2 if stack == GROUPS else 1)
    for container in found:
        assert key_refs(container) == {"VLLM_API_KEY": "api-key", "API_KEY_PREVIOUS": "api-key-previous"}
        start = container["args"].index("--api-key")
        assert container["args"][start : start + 3] == SERVER_ARGS_TAIL


@pytest.mark.parametrize("stack", [ROUTED, GROUPS])
def test_the_objects_mid_rotation_are_what_the_api_server_and_the_kubelet_admit(stack: str) -> None:
    assert stack_problems([as_admitted(obj) for obj in registered(stack)]) == []


def test_a_server_reading_a_key_its_secret_lacks_is_caught_before_the_kubelet_would_refuse_it() -> None:
    objects = [as_admitted(obj) for obj in registered(ROUTED)]
    secret = next(o for o in objects if o.get("kind") == "Secret" and o["metadata"]["name"].endswith("-api-key"))
    del secret["stringData"]["api-key-previous"]
    assert [problem for problem in secret_key_problems(objects) if "API_KEY_PREVIOUS" in problem] != []


def test_a_stack_with_one_key_keeps_it_off_the_command_line() -> None:
    (container,) = containers(registered(ROUTED, previous=None), "server")
    assert "--api-key" not in container["args"]
    assert key_refs(container) == {"VLLM_API_KEY": "api-key"}


def test_the_router_calls_the_servers_with_the_new_key_while_the_previous_one_is_set() -> None:
    (router,) = containers(registered(ROUTED), "router")
    assert key_refs(router) == {"ROUTER_API_KEY": "api-key"}


def test_the_router_rolls_only_after_the_server_workload_so_it_takes_the_new_key_once_every_server_accepts_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pulumi updates a resource after what it depends on, and the server's rollout gate ends when its rollout does."""
    waited_for: list[str] = []

    def recording_router(name: str, args: RouterArgs, opts: Any = None) -> Any:
        waited_for.extend(dep._name for dep in args.depends_on)
        return Router(name, args, opts)

    monkeypatch.setattr(components.stack, "Router", recording_router)
    error = run_stack_file(REPO / "stacks" / ROUTED, extra={"api_key": NEW, "api_key_previous": OLD})[1]
    assert error is None, error
    assert "vllm-router-two-replicas-server-rollout-gate-job" in waited_for, waited_for


def test_setting_the_previous_key_changes_the_fingerprint_so_the_pods_roll() -> None:
    assert fingerprint(ROUTED, NEW, OLD) != fingerprint(ROUTED, NEW, None)


def test_changing_only_the_previous_key_changes_the_fingerprint() -> None:
    assert fingerprint(ROUTED, NEW, OLD) != fingerprint(ROUTED, NEW, "sk-another-old-key-000000")


def test_neither_key_reaches_any_object_but_the_secret() -> None:
    others = [o for o in registered(ROUTED) if "stringData" not in o]
    assert [o["metadata"]["name"] for o in others if NEW in json.dumps(o) or OLD in json.dumps(o)] == []


def test_without_require_api_key_the_previous_key_is_refused_and_nothing_is_registered() -> None:
    count, error = refusal(ROUTED, security={"require_api_key": False}, exposure={})
    assert count == 0
    assert "vllm-serving:api_key_previous: is set, but security.require_api_key is false" in error
    assert "pulumi config rm api_key_previous" in error


def test_the_docker_target_refuses_the_previous_key_and_registers_nothing() -> None:
    count, error = refusal("Pulumi.docker-8b.yaml", security={"require_api_key": True})
    assert count == 0
    assert "vllm-serving:api_key_previous: is set, but the docker target runs one container" in error


def stack_on(version: str) -> StackConfig:
    raw, _, _ = read_stack_file(REPO / "stacks" / "Pulumi.dev.yaml")
    return validate_config({**raw, "vllm": {"version": version}, "security": {"require_api_key": True}})


def test_a_release_that_logs_its_command_line_keys_refuses_the_previous_key_naming_the_first_safe_one() -> None:
    verdict = assess(stack_on("0.28.0"), frozenset({"api_key", "api_key_previous", "hf_token"}))
    assert verdict.outcome is Outcome.CONFIG_ERROR
    (issue,) = [issue for issue in verdict.issues if issue.key == "api_key_previous"]
    assert "vLLM 0.28.0 prints the keys of its command line in its start-up log" in issue.message
    assert "set vllm.version to 0.29.0 or newer" in issue.fix


def test_the_first_release_that_redacts_its_keys_takes_the_previous_key() -> None:
    verdict = assess(stack_on("0.29.0"), frozenset({"api_key", "api_key_previous", "hf_token"}))
    assert [issue.key for issue in verdict.issues] == []
    assert verdict.plan is not None and verdict.plan.server.api_key_previous


def test_a_release_before_key_lists_refuses_the_previous_key_saying_it_takes_one_key() -> None:
    verdict = assess(stack_on("0.10.0"), frozenset({"api_key", "api_key_previous", "hf_token"}))
    (issue,) = [issue for issue in verdict.issues if issue.key == "api_key_previous"]
    assert "vLLM 0.10.0 takes one --api-key only" in issue.message


STACK_FILE_WITH_PREVIOUS_KEY = """config:
  vllm-serving:model:
    id: meta-llama/Llama-3.1-8B-Instruct
  vllm-serving:gpu:
    product: A100-SXM4-40GB
  vllm-serving:api_key_previous:
    secure: v1:AAAAAAAAAAAAAAAA:BBBBBBBBBBBB
"""


def test_the_offline_preflight_refuses_a_stack_file_whose_previous_key_no_server_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stack = tmp_path / "Pulumi.rotating.yaml"
    stack.write_text(STACK_FILE_WITH_PREVIOUS_KEY, encoding="utf-8")
    assert preflight_main([str(stack)]) == Outcome.CONFIG_ERROR
    assert "vllm-serving:api_key_previous: is set, but security.require_api_key is false" in capsys.readouterr().err


def test_the_offline_render_writes_no_file_for_a_stack_file_whose_previous_key_no_server_checks(tmp_path: Path) -> None:
    stack, out = tmp_path / "Pulumi.rotating.yaml", tmp_path / "rendered"
    stack.write_text(STACK_FILE_WITH_PREVIOUS_KEY, encoding="utf-8")
    assert render_main([str(stack), str(out)]) == Outcome.CONFIG_ERROR
    assert not out.exists() or not any(out.iterdir())
