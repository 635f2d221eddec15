"""Every shipped stack renders to byte-identical JSON every time: in one process and across processes.

Across processes matters: set and dict-of-set ordering changes with PYTHONHASHSEED, so a renderer that
iterates a set would pass the in-process check and still churn `pulumi preview` diffs between runs.
Covered: the validated config, the preflight report, every Kubernetes manifest and the NetworkPolicies, and
every resource the whole program registers under Pulumi's mocks for each deployable stack.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from components.render.manifests import render_manifests
from components.render.network_policy import render_network_policies
from tests.factories import load_stack_file
from tests.kubernetes_fixtures import plan_of
from tests.program import run_stack_file

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted([*ROOT.glob("stacks/*.yaml"), *ROOT.glob("stacks/examples/*.yaml")])


def instance_name(path: Path) -> str:
    return path.stem.removeprefix("Pulumi.")


def render_stack(path: Path) -> dict[str, Any]:
    """Everything the pure pieces render for one stack file, as JSON-ready data."""
    cfg = load_stack_file(path)
    instance = instance_name(path)
    plan = plan_of(cfg, instance)
    report = plan.sizing
    return {
        "config": cfg.model_dump(mode="json"),
        "preflight": report.as_dict(),
        "manifests": render_manifests(plan),
        "network_policies": render_network_policies(plan.identity, plan.traffic),
    }


def as_bytes(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, allow_nan=False).encode()


def dump_all() -> str:
    """Every shipped stack's rendering, one JSON line each (run by the cross-process test)."""
    return "\n".join(f"{path.name} {as_bytes(render_stack(path)).decode()}" for path in SHIPPED)


def test_there_are_shipped_stacks_to_render() -> None:
    assert len(SHIPPED) >= 2, SHIPPED


@pytest.mark.parametrize("path", SHIPPED, ids=[instance_name(path) for path in SHIPPED])
def test_shipped_stack_renders_byte_identical_json_twice(path: Path) -> None:
    assert as_bytes(render_stack(path)) == as_bytes(render_stack(path))


@pytest.mark.parametrize("path", SHIPPED, ids=[instance_name(path) for path in SHIPPED])
def test_shipped_stack_rendering_holds_the_workload_and_its_network_policies(path: Path) -> None:
    rendered = render_stack(path)
    kinds = sorted({m["kind"] for m in rendered["manifests"] + rendered["network_policies"]})
    workload = next((kind for kind in ("LeaderWorkerSet", "StatefulSet") if kind in kinds), "Deployment")
    assert {workload, "NetworkPolicy", "Service"} <= set(kinds), kinds


def _dump_in_process(hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    code = "from tests.test_determinism import dump_all; print(dump_all())"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_processes_of_different_hash_seeds_render_every_shipped_stack_as_this_one_does() -> None:
    first, second = _dump_in_process("1"), _dump_in_process("2")
    assert first == second and first.rstrip("\n") == dump_all()


DEPLOYABLE = sorted(ROOT.glob("stacks/Pulumi.*.yaml"))


def registered(path: Path) -> bytes:
    """Every resource the program registers for a stack: type, name and inputs, in a stable order."""
    result, error = run_stack_file(path, extra={"api_key": "sk-test"})
    assert error is None, error
    resources = sorted((r.typ, r.name, r.inputs) for r in result.resources)
    return as_bytes([[typ, name, inputs] for typ, name, inputs in resources])


@pytest.mark.parametrize("path", DEPLOYABLE, ids=[instance_name(path) for path in DEPLOYABLE])
def test_the_whole_program_registers_byte_identical_resources_twice(path: Path) -> None:
    assert registered(path) == registered(path)
