"""Properties of the preflight over generated valid stacks.

It never raises on a valid config; more GPU memory, a lower max_model_len or a smaller max_num_seqs never
turns a fit into a block. max_num_batched_tokens is held fixed: vLLM 0.7.2 derives its default from
max_model_len and turns chunked prefill on above 32768 tokens, so there a *lower* max_model_len can really
raise the activation peak (vllm#10517: 29k failed where 35k started) — that is vLLM's behaviour, not ours.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog.gpus import GPUS
from catalog.models import MODELS
from plan.sizing import resolve_sizing
from preflight.checks import valid_tp_sizes
from tests.factories import merge
from validation.keys import validate_config

PROPERTY_SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def stacks(draw: st.DrawFn) -> dict[str, Any]:
    model_id = draw(st.sampled_from(sorted(MODELS)))
    arch = MODELS[model_id]
    version = draw(st.sampled_from(["0.7.2", "0.33.0"]))
    longest = min(arch.max_position_embeddings, 32768) if version == "0.7.2" else arch.max_position_embeddings
    max_model_len = draw(st.integers(256, longest))
    max_num_seqs = draw(st.integers(1, 512))
    floor = max(max_model_len, max_num_seqs, 2048) if version == "0.7.2" else max(max_num_seqs, 512)
    return {
        "model": {"id": model_id},
        "gpu": {"product": draw(st.sampled_from(sorted(GPUS)))},
        "vllm": {"version": version},
        "engine": {
            "tensor_parallel_size": draw(st.sampled_from(valid_tp_sizes(arch, 8))),
            "max_model_len": max_model_len,
            "max_num_seqs": max_num_seqs,
            "max_num_batched_tokens": draw(st.integers(floor, max(floor, 16384))),
            "gpu_memory_utilization": draw(st.floats(0.5, 0.98)),
            "kv_cache_dtype": draw(st.sampled_from(["auto", "fp8"])),
            "enforce_eager": draw(st.booleans()),
        },
        "preflight": {
            "concurrency": {
                "mode": draw(st.sampled_from(["average", "strict"])),
                "average_request_tokens": draw(st.integers(64, 8192)),
            }
        },
    }


def fits(raw: dict[str, Any]) -> bool:
    return resolve_sizing(validate_config(raw)).verdict.fits


def changed(raw: dict[str, Any], group: str, **values: Any) -> dict[str, Any]:
    return {**raw, group: {**raw[group], **values}}


@PROPERTY_SETTINGS
@given(stacks())
def test_the_preflight_never_raises_on_a_valid_config(raw: dict[str, Any]) -> None:
    report = resolve_sizing(validate_config(raw))
    assert report.verdict.fits == (not report.verdict.reasons)


@PROPERTY_SETTINGS
@given(stacks(), st.sampled_from(sorted(GPUS)))
def test_more_gpu_memory_never_turns_a_fit_into_a_block(raw: dict[str, Any], other: str) -> None:
    bigger = other if GPUS[other].memory_gib >= GPUS[raw["gpu"]["product"]].memory_gib else raw["gpu"]["product"]
    if fits(raw):  # the same node size: GPUs per node differ between products (GH200 nodes hold one)
        same_node = raw["gpu"].get("gpus_per_node") or GPUS[raw["gpu"]["product"]].gpus_per_node
        assert fits(changed(raw, "gpu", product=bigger, gpus_per_node=same_node))


@PROPERTY_SETTINGS
@given(stacks(), st.floats(0.1, 1.0))
def test_a_lower_max_model_len_never_turns_a_fit_into_a_block(raw: dict[str, Any], share: float) -> None:
    shorter = max(1, int(raw["engine"]["max_model_len"] * share))
    if fits(raw):
        assert fits(changed(raw, "engine", max_model_len=shorter))


@PROPERTY_SETTINGS
@given(stacks(), st.floats(0.1, 1.0))
def test_a_smaller_max_num_seqs_never_turns_a_fit_into_a_block(raw: dict[str, Any], share: float) -> None:
    fewer = max(1, int(raw["engine"]["max_num_seqs"] * share))
    if fits(raw):
        assert fits(changed(raw, "engine", max_num_seqs=fewer))


@st.composite
def blocked_candidates(draw: st.DrawFn) -> dict[str, Any]:
    """Generated stacks, some leaving the batch limits to vLLM's defaults or setting their own target."""
    raw = draw(stacks())
    engine = dict(raw["engine"])
    for key in ("max_num_seqs", "max_num_batched_tokens"):
        if draw(st.booleans()):
            engine.pop(key)
    concurrency = dict(raw["preflight"]["concurrency"])
    if draw(st.booleans()):
        concurrency["requests"] = draw(st.integers(1, 1024))
    return {**raw, "engine": engine, "preflight": {"concurrency": concurrency}}


@PROPERTY_SETTINGS
@given(blocked_candidates())
def test_every_suggested_change_makes_the_stack_fit_when_applied(raw: dict[str, Any]) -> None:
    report = resolve_sizing(validate_config(raw))
    for text, change in zip(report.verdict.suggestions, report.verdict.suggested_changes, strict=True):
        applied = resolve_sizing(validate_config(merge(raw, change)))
        assert applied.verdict.fits, f"{text} -> {applied.verdict.reasons}"
