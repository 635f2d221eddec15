"""Under Pulumi mocks, a download Job whose await fails (the provider raises, as pulumi-kubernetes does for a
Job that reached its backoff limit or deadline) fails `pulumi up` naming the Job, and the server is never
created: it waits for the Job (components/serving_stack.py)."""

from __future__ import annotations

import gc
import logging
from pathlib import Path

import pulumi
import pytest

from plan.names import instance_name
from tests.harness import RecordingMocks
from tests.kubernetes_fixtures import plan_of
from tests.program import run_stack_file
from validation.sources import load_stack_file_with_secrets

STACKS = Path(__file__).parent.parent / "stacks"
API_KEY = {"api_key": "sk-test"}
FAILED = "BackoffLimitExceeded: download failed: 401 Unauthorized (the hf_token is missing, wrong or expired)"


def failing_job(args: pulumi.runtime.MockResourceArgs) -> str | None:
    if args.typ != "kubernetes:batch/v1:Job":
        return None
    name = args.inputs["metadata"]["name"]
    return f"Job {name!r} failed: {FAILED}"


def test_a_failed_download_job_fails_up_naming_the_job_and_its_status() -> None:
    _registered, error = run_stack_file(
        STACKS / "examples" / "Pulumi.prod-on-efs.yaml", API_KEY, mocks=RecordingMocks(fail=failing_job)
    )
    job = plan_of(
        load_stack_file_with_secrets(STACKS / "examples" / "Pulumi.prod-on-efs.yaml")[0], instance_name("prod-on-efs")
    ).delivery.download_job
    assert error is not None and f"Job {job!r} failed: {FAILED}" in str(error)


def test_the_server_is_not_created_after_its_download_failed() -> None:
    created, _ = run_stack_file(STACKS / "examples" / "Pulumi.prod-on-efs.yaml", API_KEY)
    failed, _ = run_stack_file(STACKS / "examples" / "Pulumi.prod-on-efs.yaml", API_KEY, mocks=RecordingMocks(fail=failing_job))
    deployment = "kubernetes:apps/v1:Deployment"
    assert (len(created.of_type(deployment)), failed.of_type(deployment)) == (1, [])


def test_a_failed_up_leaves_no_unretrieved_future_to_print_into_a_later_test(caplog: pytest.LogCaptureFixture) -> None:
    run_stack_file(STACKS / "examples" / "Pulumi.prod-on-efs.yaml", API_KEY, mocks=RecordingMocks(fail=failing_job))
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        gc.collect()
    assert [r.getMessage() for r in caplog.records if "never retrieved" in r.getMessage()] == []
