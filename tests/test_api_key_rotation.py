"""A rotated api_key rolls every pod that reads it: vLLM and the router read the key at start only, so each pod
template that takes it from the Secret carries its fingerprint, and `pulumi up` rolls the pods when it changes
(docs/security.md, "Rotating the API key"). The real program under Pulumi's mocks."""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from typing import Any

import pytest
from pulumi.runtime.rpc import _special_sig_key as SECRET_SIG  # the key of a wrapped secret value

from tests.factories import REPO
from tests.program import run_stack_file

ANNOTATION = "vllm-serving.io/api-key-revision"
KEY, ROTATED = "sk-before-rotation-0123456789", "sk-after-rotation-9876543210"

# Each workload kind the server runs as, the pod templates that take the key from the Secret (the smoke test's Job
# too: a rotation reruns it), and those that carry its fingerprint without reading it (the rollout gate, which
# awaits the rollout a rotation starts).
STACKS = {
    "Deployment-and-router": ("examples/Pulumi.router-two-replicas.yaml", ["router", "server", "smoke-test"], ["rollout-gate"]),
    "StatefulSet": ("examples/Pulumi.llama-70b-node-local-nvme.yaml", ["server", "smoke-test"], ["rollout-gate"]),
    "LeaderWorkerSet": (
        "examples/Pulumi.llama-405b-on-2x8-a100-80gb.yaml",
        ["server-leader", "server-worker", "smoke-test"],
        ["rollout-gate"],
    ),
}
CASES = pytest.mark.parametrize("stack", sorted(STACKS))


@cache
def registered(stack: str, key: str | None) -> tuple[dict[str, Any], ...]:
    """The inputs of every Kubernetes object the program registers, with `key` as the api_key (None: no key
    required, and no exposure, which requires one), as the engine receives them (secrets still wrapped)."""
    extra: dict[str, Any] = {"security": {"require_api_key": key is not None}}
    if key is not None:
        extra["api_key"] = key
    else:
        extra["exposure"] = {}
    run, error = run_stack_file(REPO / "stacks" / STACKS[stack][0], extra=extra)
    assert error is None, error
    return tuple(dict(resource.inputs) for resource in run.resources if resource.typ.startswith("kubernetes:"))


def pod_templates(value: Any, role: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every pod template in an object, named by its pods' component label (and LWS role)."""
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(value, dict):
        if "containers" in value.get("spec", {}):
            found.append((value["metadata"]["labels"]["app.kubernetes.io/component"] + role, value))
        for name, item in value.items():
            found += pod_templates(item, {"leaderTemplate": "-leader", "workerTemplate": "-worker"}.get(name, role))
    elif isinstance(value, list):
        for item in value:
            found += pod_templates(item, role)
    return found


def reads_the_key(template: dict[str, Any]) -> bool:
    """A container takes the key from the Secret into its environment (VLLM_API_KEY, ROUTER_API_KEY), or the pod
    mounts the Secret (the smoke test's key file)."""
    refs = [env.get("valueFrom", {}).get("secretKeyRef", {}) for c in template["spec"]["containers"] for env in c["env"]]
    mounted = [volume.get("secret", {}).get("secretName", "") for volume in template["spec"].get("volumes", [])]
    return any(name.endswith("-api-key") for name in [ref.get("name", "") for ref in refs] + mounted)


def carriers(stack: str) -> list[str]:
    """The pod templates that carry the fingerprint: every reader of the key, and what follows their rollout."""
    return sorted(STACKS[stack][1] + STACKS[stack][2])


def fingerprints(stack: str, key: str | None) -> dict[str, Any]:
    """The annotation's value on each pod template of the stack that carries it."""
    templates = [named for obj in registered(stack, key) for named in pod_templates(obj)]
    annotations = {name: template["metadata"].get("annotations", {}) for name, template in templates}
    return {name: found[ANNOTATION] for name, found in annotations.items() if ANNOTATION in found}


@CASES
def test_every_pod_template_that_reads_the_api_key_carries_its_fingerprint(stack: str) -> None:
    templates = [named for obj in registered(stack, KEY) for named in pod_templates(obj)]
    readers = sorted(name for name, template in templates if reads_the_key(template))
    assert (readers, sorted(fingerprints(stack, KEY))) == (STACKS[stack][1], carriers(stack))


@CASES
def test_a_rotated_api_key_changes_the_fingerprint_on_every_pod_template_that_reads_it(stack: str) -> None:
    before, after = fingerprints(stack, KEY), fingerprints(stack, ROTATED)
    assert sorted(before) == sorted(after) == carriers(stack)
    assert all(before[name] != after[name] for name in before)


def test_the_same_api_key_gives_the_same_fingerprint_so_an_unchanged_key_rolls_nothing() -> None:
    again = run_stack_file(
        REPO / "stacks" / STACKS["Deployment-and-router"][0], extra={"security": {"require_api_key": True}, "api_key": KEY}
    )[0]
    templates = [named for resource in again.resources for named in pod_templates(dict(resource.inputs))]
    annotations = {name: t["metadata"].get("annotations", {}) for name, t in templates}
    repeated = {name: found[ANNOTATION] for name, found in annotations.items() if ANNOTATION in found}
    assert repeated == fingerprints("Deployment-and-router", KEY)


def test_only_stacks_that_require_an_api_key_carry_its_fingerprint() -> None:
    with_key, without = fingerprints("Deployment-and-router", KEY), fingerprints("Deployment-and-router", None)
    assert (sorted(with_key), without) == (carriers("Deployment-and-router"), {})


@CASES
def test_the_fingerprint_is_a_short_salted_hash_never_the_key(stack: str) -> None:
    plain_sha256, values = hashlib.sha256(KEY.encode()).hexdigest(), fingerprints(stack, KEY)
    assert sorted(values) == carriers(stack)
    for name, value in values.items():
        assert re.fullmatch(r"[0-9a-f]{16}", value), (name, value)
        assert value not in plain_sha256, name  # salted: not a prefix a lookup table of plain hashes holds


@CASES
def test_the_key_reaches_no_object_but_its_secret(stack: str) -> None:
    others = [obj for obj in registered(stack, KEY) if "stringData" not in obj]
    assert fingerprints(stack, KEY)
    assert [obj["metadata"]["name"] for obj in others if KEY in json.dumps(obj)] == []


def test_the_fingerprint_is_plain_so_the_preview_shows_the_pod_template_change() -> None:
    """A secret annotation would mark the whole template secret in the diff (pulumi/pulumi-kubernetes#1464)."""
    values = fingerprints("Deployment-and-router", KEY)
    assert sorted(values) == carriers("Deployment-and-router")
    assert [name for name, value in values.items() if not isinstance(value, str) or SECRET_SIG in value] == []


def test_one_key_in_two_stacks_gives_two_fingerprints() -> None:
    from plan.security import api_key_revision  # here, so that the other tests fail on their assertions without it

    assert api_key_revision(KEY, "vllm-a", "vllm-a-api-key") != api_key_revision(KEY, "vllm-b", "vllm-b-api-key")
