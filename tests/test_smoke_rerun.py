"""The smoke test runs again after a rotated API key, and every change to its Job is a replacement the API server
accepts. The Job's pod template carries the key's fingerprint (as the server's does), so a rotation changes the
template; a Job's template is immutable, so pulumi-kubernetes replaces it, deleting it first when the name stays
and creating the new one first when the name changes. The real program under Pulumi's mocks, its registrations
read field by field (docs/exposure.md, "Reruns")."""

from __future__ import annotations

import runpy
from functools import cache
from typing import Any

from tests.factories import REPO
from tests.harness import Registered
from tests.kubernetes_fixtures import Registration, run_recording
from tests.program import SECRET_VALUES, stack_file_config
from tests.replacement import replacement

ANNOTATION = "vllm-serving.io/api-key-revision"
STACK = REPO / "stacks" / "Pulumi.dev.yaml"
JOB = "kubernetes:batch/v1:Job"
KEY, ROTATED = "sk-first-key-0123456789abcdef", "sk-rotated-key-fedcba98765432"


def program(key: str | None, max_tokens: int, routed: bool) -> tuple[Registered, dict[str, Registration]]:
    """The dev stack's run; `key` None: no API key required; `routed`: behind the router (round_robin)."""
    config, secret_keys = stack_file_config(STACK)
    config |= {"hf_token": SECRET_VALUES["hf_token"], "smoke_test": {"max_tokens": max_tokens}}
    if routed:
        config |= {"routing": {"enabled": True, "policy": "round_robin"}}
    secret_keys += ("hf_token",)
    if key is not None:
        config |= {"security": {"require_api_key": True}, "api_key": key}
        secret_keys += ("api_key",)
    main = str(REPO / "__main__.py")
    return run_recording(lambda: runpy.run_path(main, run_name="__main__"), config, secret_keys)


cached_program = cache(program)


def smoke_job(
    key: str | None = KEY, max_tokens: int = 16, routed: bool = False, run: Any = cached_program
) -> tuple[dict[str, Any], Registration]:
    """The smoke Job's inputs and what the engine was asked for it."""
    registered, requests = run(key, max_tokens, routed)
    (job,) = [r for r in registered.of_type(JOB) if r.name.endswith("-smoke-test-job")]
    return dict(job.inputs), requests[job.name]


def server_annotation(key: str) -> str:
    registered, _ = cached_program(key, 16, False)
    (server,) = [r for r in registered.resources if r.name.endswith("-server-deployment")]
    return str(server.inputs["spec"]["template"]["metadata"]["annotations"][ANNOTATION])


def template_annotations(job: dict[str, Any]) -> dict[str, str]:
    return dict(job["spec"]["template"]["metadata"].get("annotations", {}))


def test_the_smoke_jobs_pod_template_carries_the_same_key_fingerprint_as_the_servers() -> None:
    job, _ = smoke_job()
    assert template_annotations(job)[ANNOTATION] == server_annotation(KEY)


def test_the_fingerprint_on_the_smoke_job_is_filled_in_not_the_offline_placeholder() -> None:
    job, _ = smoke_job()
    assert template_annotations(job)[ANNOTATION] != "<api_key fingerprint>"


def test_a_rotated_key_changes_the_smoke_jobs_template_and_keeps_its_name() -> None:
    (old, _), (new, _) = smoke_job(KEY), smoke_job(ROTATED)
    assert old["metadata"]["name"] == new["metadata"]["name"]
    assert template_annotations(old)[ANNOTATION] != template_annotations(new)[ANNOTATION]


def test_a_stack_without_an_api_key_puts_no_annotation_on_the_smoke_jobs_template() -> None:
    job, _ = smoke_job(key=None)
    assert "annotations" not in job["spec"]["template"]["metadata"]


def test_the_smoke_job_leaves_delete_before_replace_to_the_provider() -> None:
    _, registration = smoke_job()
    assert registration.delete_before_replace is None


def test_a_rotation_replaces_the_completed_smoke_job_by_deleting_it_first() -> None:
    """Created first under the same name, the new Job would be an apply to the old one, whose template the API
    server refuses to change."""
    (old, _), (new, registration) = smoke_job(KEY), smoke_job(ROTATED)
    assert replacement(old, new, registration.delete_before_replace) == "delete-first"


def test_a_change_to_what_the_check_asks_creates_the_new_job_before_deleting_the_old_one() -> None:
    (old, _), (new, registration) = smoke_job(), smoke_job(max_tokens=8)
    assert old["metadata"]["name"] != new["metadata"]["name"]
    assert replacement(old, new, registration.delete_before_replace) == "create-first"


def test_turning_the_router_on_keeps_the_smoke_jobs_name_and_replaces_it_by_deleting_it_first() -> None:
    """The check now calls the router's Service; round_robin leaves the server's command line, so the name, as it
    was."""
    (old, _), (new, registration) = smoke_job(), smoke_job(routed=True)
    assert old["metadata"]["name"] == new["metadata"]["name"]
    assert old["spec"]["template"] != new["spec"]["template"]
    assert replacement(old, new, registration.delete_before_replace) == "delete-first"


def test_an_unchanged_stack_keeps_its_completed_smoke_job() -> None:
    (old, _), (new, registration) = smoke_job(), smoke_job(run=program)  # a second run of the program
    assert new is not old
    assert replacement(old, new, registration.delete_before_replace) is None
