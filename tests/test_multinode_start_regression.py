"""vLLM 0.17.0 and 0.17.1 build a worker's message queues before the process group they need, so every rank of a
multi-node group stops at start (vllm-project/vllm issue #36389, fixed in 0.18.0). Those releases are refused with
engine.nnodes > 1, naming vllm.version, and accepted with one node per replica (catalog/vllm_versions.py
MULTINODE_BROKEN_RELEASES, validation/multinode.py, docs/multinode.md)."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.vllm_versions import MULTINODE_BROKEN_RELEASES, RELEASES
from config.multinode import supports_native_multinode
from plan.frontier import resolve_frontier
from plan.sizing import resolve_sizing, sizing_inputs
from tests.factories import make_config
from tests.kubernetes_fixtures import plan_of
from tests.test_deployable import refusal
from tests.test_landing import refusals, refused_key

BROKEN = ["0.17.0", "0.17.1"]
GROUP = {"tensor_parallel_size": 8, "pipeline_parallel_size": 2, "nnodes": 2}
RWX = {"storage_class_name": "efs-sc"}  # a group's nodes share one ReadWriteMany copy
LLAMA_405B = {"id": "meta-llama/Llama-3.1-405B-Instruct"}


def group_on(version: str, **engine: Any) -> dict[str, Any]:
    """The base stack's changes for a two-node group on `version`."""
    return {"engine": {**GROUP, **engine}, "cache": RWX, "vllm": {"version": version}}


def test_the_table_holds_exactly_0_17_0_and_0_17_1() -> None:
    assert sorted(MULTINODE_BROKEN_RELEASES) == BROKEN


@pytest.mark.parametrize("version", BROKEN)
def test_a_broken_release_is_deployable_and_has_native_multinode_flags(version: str) -> None:
    assert (version in RELEASES, supports_native_multinode(version)) == (True, True)


@pytest.mark.parametrize("version", BROKEN)
def test_a_group_on_a_broken_release_is_refused_naming_vllm_version(version: str) -> None:
    issue = refused_key("vllm.version", **group_on(version))
    assert f"is {version}," in issue.message and "inner dp world group is not initialized" in issue.message


@pytest.mark.parametrize("version", BROKEN)
def test_the_refusal_names_0_18_0_and_0_16_0_as_the_fix(version: str) -> None:
    fix = refused_key("vllm.version", **group_on(version)).fix
    assert "vllm.version: 0.18.0 or newer" in fix and "0.16.0" in fix and "engine.nnodes: 1" in fix


@pytest.mark.parametrize("version", BROKEN)
def test_a_broken_release_is_the_only_refusal_of_an_otherwise_valid_group(version: str) -> None:
    assert [issue.key for issue in refusals(**group_on(version))] == ["vllm.version"]


@pytest.mark.parametrize("version", BROKEN)
def test_a_broken_release_with_one_node_per_replica_is_accepted(version: str) -> None:
    assert refusals(vllm={"version": version}) == []


@pytest.mark.parametrize("version", ["0.16.0", "0.18.0"])
def test_a_group_on_the_release_before_or_after_is_accepted(version: str) -> None:
    assert refusals(**group_on(version)) == []


def test_the_program_registers_nothing_for_a_group_on_0_17_0() -> None:
    error, registered = refusal(group_on("0.17.0"))
    assert "vllm-serving:vllm.version" in error and registered == 0


def test_a_stack_on_a_broken_release_that_does_not_fit_one_node_is_not_suggested_a_group() -> None:
    cfg = make_config(model=LLAMA_405B, cache=RWX, engine={"tensor_parallel_size": 8}, vllm={"version": "0.17.0"})
    report = resolve_sizing(cfg)
    assert not report.verdict.fits
    assert [c for c in report.verdict.suggested_changes if "nnodes" in c.get("engine", {})] == []


def test_the_frontier_of_a_broken_release_lists_no_layout_across_nodes() -> None:
    cfg = make_config(model=LLAMA_405B, engine={"tensor_parallel_size": 8}, vllm={"version": "0.17.0"})
    frontier = resolve_frontier(sizing_inputs(cfg), plan_of(cfg).cost)
    assert [x for x in frontier.layouts if x.nnodes > 1] == []
