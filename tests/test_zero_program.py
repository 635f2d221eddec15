"""The Pulumi program under mocks on the dev scale-to-zero example: it registers the HTTPScaledObject in place
of the ScaledObject, the ReferenceGrant in the add-on's namespace (not the stack's), and the smoke Job after what
the interceptor routes its Host by."""

from __future__ import annotations

import copy
import json
import runpy
from functools import cache

import pulumi

from tests.factories import REPO, STACKS
from tests.harness import PROJECT, Registered
from tests.kubernetes_fixtures import run_recording
from tests.program import run_stack_file, stack_file_config

EXAMPLE = STACKS / "examples" / "Pulumi.dev-scale-to-zero.yaml"


@cache
def registered() -> Registered:
    found, error = run_stack_file(EXAMPLE, extra={"api_key": "sk-test"})
    assert error is None
    return found


def custom(kind: str) -> list[dict]:  # type: ignore[type-arg]
    """Custom resources register as kubernetes:<apiVersion>:<kind> under the mocks."""
    return [r.inputs for r in registered().resources if r.typ.startswith("kubernetes:") and r.typ.endswith(f":{kind}")]


def test_the_program_registers_one_http_scaled_object_and_no_scaled_object() -> None:
    assert (len(custom("HTTPScaledObject")), custom("ScaledObject")) == (1, [])


def test_the_reference_grant_is_registered_in_the_add_ons_namespace() -> None:
    (grant,) = custom("ReferenceGrant")
    assert grant["metadata"]["namespace"] == "keda"


def test_the_http_scaled_object_starts_at_zero_replicas() -> None:
    (scaled,) = custom("HTTPScaledObject")
    assert scaled["spec"]["replicas"]["min"] == 0


def smoke_job_waits_for(resource: str | None = None) -> set[str]:
    """The Pulumi names the smoke Job depends on, on the example (with `http_add_on.resource` when given)."""
    config, _ = stack_file_config(EXAMPLE)
    config = {**copy.deepcopy(config), "api_key": "sk-test", "hf_token": "hf_test"}
    if resource is not None:
        config["autoscaling"]["http_add_on"]["resource"] = resource

    def build() -> None:
        pulumi.runtime.set_all_config(
            {f"{PROJECT}:{k}": v if isinstance(v, str) else json.dumps(v) for k, v in config.items()},
            [f"{PROJECT}:api_key", f"{PROJECT}:hf_token"],
        )
        runpy.run_path(str(REPO / "__main__.py"), run_name="__main__")

    _, requests = run_recording(build)
    (job,) = [r for name, r in requests.items() if name.endswith("-smoke-test-job")]
    return {dependency.rsplit("::", 1)[1] for dependency in job.dependencies}


def test_the_smoke_job_is_created_after_the_http_scaled_object_the_interceptor_routes_its_host_by() -> None:
    assert "vllm-test-autoscaler-httpscaledobject" in smoke_job_waits_for()


def test_the_smoke_job_is_created_after_the_interceptor_route_the_interceptor_routes_its_host_by() -> None:
    assert "vllm-test-autoscaler-interceptorroute" in smoke_job_waits_for("InterceptorRoute")
