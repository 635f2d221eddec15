"""The report nests its sections: the objects the accounting produced, not copies of their fields."""

from __future__ import annotations

import json

import pytest

import preflight
from plan.sizing import resolve_sizing, sizing_inputs
from preflight.evaluate import Evaluation, evaluate
from tests.factories import shipped_stack

SECTIONS = {"verdict", "gpu", "engine", "memory", "capacity", "target", "startup"}


def test_the_json_report_is_nested_by_section() -> None:
    data = json.loads(json.dumps(resolve_sizing(shipped_stack("prod")).as_dict()))
    assert set(data) == SECTIONS
    assert (data["verdict"]["fits"], data["gpu"]["name"], data["engine"]["tensor_parallel_size"]) == (True, "A100-SXM4-80GB", 4)
    assert (data["memory"]["kv_cache_gib_per_gpu"], data["target"]["tokens_per_request"]) == (34.377, 1024)
    assert not SECTIONS & {key for section in SECTIONS - {"startup"} for key in data[section]}  # no section repeats


def test_the_report_sections_are_the_objects_the_accounting_produced(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = shipped_stack("prod")
    found = evaluate(sizing_inputs(cfg))

    def the_same_evaluation(_: object) -> Evaluation:
        return found

    monkeypatch.setattr(preflight, "evaluate", the_same_evaluation)
    report = resolve_sizing(cfg)
    mine = (report.resolved, report.memory, report.capacity, report.target)
    theirs = (found.resolved, found.memory, found.capacity, found.target)
    assert [a is b for a, b in zip(mine, theirs, strict=True)] == [True, True, True, True]


def test_the_json_figures_are_the_sections_rounded_once() -> None:
    report = resolve_sizing(shipped_stack("prod"))
    data = report.as_dict()
    assert data["memory"]["weights_gib_per_gpu"] == round(report.memory.weights_gib_per_gpu, 3)
    assert data["capacity"]["max_concurrency_at_max_model_len"] == round(report.capacity.max_concurrency_at_max_model_len, 2)
    assert data["target"]["kv_tokens"] == report.target.requests * report.target.tokens_per_request


def test_the_sizing_figures_read_through_to_their_sections() -> None:
    report = resolve_sizing(shipped_stack("prod"))
    assert (report.kv_cache_tokens, report.target_tokens_per_request) == (
        report.capacity.kv_cache_tokens,
        report.target.tokens_per_request,
    )
