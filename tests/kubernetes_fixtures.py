"""Builders for the Kubernetes target's tests: a config with its preflight report, and lookups in manifests."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi.runtime import mocks as pulumi_mocks

from components.render.manifests import render_manifests
from config.stack import StackConfig
from plan import Plan, resolve
from plan.flows import ROLLOUT_GATE
from plan.placement import Placement
from preflight.report import PreflightReport
from tests.factories import make_config, shipped_stack
from tests.harness import Registered, run_program

INSTANCE = "llama"

# Fixed start-up terms set in the stack (probes.*) instead of fitted: tests whose arithmetic is written out use them.
SET_FIXED_TERMS = {"engine_start_seconds": 60, "per_gpu_start_seconds": 15, "cuda_graph_capture_seconds": 120}


def plan_of(cfg: StackConfig, instance: str = INSTANCE, hf_token: bool = False, api_key_previous: bool = False) -> Plan:
    """The stack's plan (plan.resolve), for the instance the tests name their objects after."""
    return resolve(cfg, instance, hf_token=hf_token, api_key_previous=api_key_previous)


def placement_of(cfg: StackConfig) -> Placement:
    """Where the stack's server pods run (plan.placement)."""
    return plan_of(cfg).placement


def planned(cfg: StackConfig) -> tuple[StackConfig, PreflightReport]:
    """The config and its report as the CLI shows it: with the delivery's startup budget and warnings."""
    return cfg, plan_of(cfg).sizing


def stack(name: str) -> tuple[StackConfig, PreflightReport]:
    """A shipped stack (stacks/Pulumi.<name>.yaml) with its preflight report."""
    return planned(shipped_stack(name))


def stack_with(name: str, **changes: Any) -> tuple[StackConfig, PreflightReport]:
    """A shipped stack with some groups changed (merged one level deep), and its report."""
    from validation.keys import validate_config

    cfg = shipped_stack(name)
    raw = cfg.model_dump(exclude_unset=True)
    for key, value in changes.items():
        raw[key] = {**raw.get(key, {}), **value} if isinstance(value, dict) else value
    return planned(validate_config(raw))


def configured(**changes: Any) -> tuple[StackConfig, PreflightReport]:
    """The factories' base stack (Llama-3.1-8B on one A100-80GB) with changes, and its report."""
    return planned(make_config(**changes))


def checked(**changes: Any) -> tuple[StackConfig, Plan]:
    """The factories' base stack with changes, and its plan: what validation.check_stack takes."""
    cfg = make_config(**changes)
    return cfg, plan_of(cfg)


def manifests(cfg: StackConfig, report: PreflightReport, with_token: bool = False) -> list[dict[str, Any]]:
    """The stack's namespace, cache and server objects (`report` is the plan's own sizing, kept for the callers)."""
    return render_manifests(plan_of(cfg, hf_token=with_token))


def of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [obj for obj in objects if obj["kind"] == kind]


def one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = of_kind(objects, kind)
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def model_cache_jobs(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Jobs that fill the model cache (download or bucket copy): every Job but the rollout gate's."""
    return [
        job for job in of_kind(objects, "Job") if job["metadata"]["labels"].get("app.kubernetes.io/component") != ROLLOUT_GATE
    ]


def model_cache_job(objects: list[dict[str, Any]]) -> dict[str, Any]:
    found = model_cache_jobs(objects)
    assert len(found) == 1, f"expected one model-cache Job, found {len(found)}"
    return found[0]


def workload(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The server's Deployment, or its StatefulSet with per-replica volumes."""
    found = of_kind(objects, "Deployment") + of_kind(objects, "StatefulSet")
    assert len(found) == 1, f"expected one Deployment or StatefulSet, found {len(found)}"
    return found[0]


def pod_spec(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return workload(objects)["spec"]["template"]["spec"]


def server(objects: list[dict[str, Any]]) -> dict[str, Any]:
    """The vllm container of the Deployment."""
    containers = pod_spec(objects)["containers"]
    assert [c["name"] for c in containers] == ["vllm"]
    return containers[0]


def env_of(container: dict[str, Any]) -> dict[str, Any]:
    """name -> value (or valueFrom) of a container's environment."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def flag_value(args: list[str], flag: str) -> str:
    assert args.count(flag) == 1, f"{flag} appears {args.count(flag)} times in {args}"
    return args[args.index(flag) + 1]


@dataclass
class Registration:
    """What the engine was asked for one resource: its parent, dependencies and options."""

    typ: str
    parent: str
    dependencies: list[str]
    ignore_changes: list[str]
    timeouts: dict[str, str]
    aliases: list[Any]  # alias_pb2.Alias: a full URN, or a spec (name, type, parentUrn) the engine resolves
    delete_before_replace: bool | None  # None: not set, so the provider's Diff decides


def run_recording(
    build: Callable[[], Any], config: Mapping[str, Any] | None = None, secret_keys: tuple[str, ...] = ()
) -> tuple[Registered, dict[str, Registration]]:
    """run_program, also keeping each RegisterResource request's options (the mocks only see inputs)."""
    requests: dict[str, Registration] = {}
    original = pulumi_mocks.MockMonitor.RegisterResource

    def spy(monitor: Any, request: Any) -> Any:
        timeouts = request.customTimeouts
        requests[request.name] = Registration(
            request.type,
            request.parent,
            list(request.dependencies),
            list(request.ignoreChanges),
            {"create": timeouts.create, "update": timeouts.update},
            list(request.aliases),
            request.deleteBeforeReplace if request.deleteBeforeReplaceDefined else None,
        )
        return original(monitor, request)

    pulumi_mocks.MockMonitor.RegisterResource = spy  # type: ignore[method-assign]
    try:
        return run_program(build, config, secret_keys), requests
    finally:
        pulumi_mocks.MockMonitor.RegisterResource = original  # type: ignore[method-assign]


def urn_type_chain(urn: str) -> str:
    """'urn:pulumi:stack::project::A$B$C::name' -> 'A$B$C'."""
    return urn.split("::")[2]
