"""The Pulumi program under mocks on the dev scale-to-zero example: it registers the HTTPScaledObject in place
of the ScaledObject, and the ReferenceGrant in the add-on's namespace (not the stack's)."""

from __future__ import annotations

from functools import cache

from tests.factories import STACKS
from tests.harness import Registered
from tests.program import run_stack_file

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
