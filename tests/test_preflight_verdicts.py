"""What the preflight blocks, what it warns about, and what it suggests instead."""

from __future__ import annotations

import re

import pytest

from catalog.models import MODELS
from plan.sizing import resolve_sizing
from preflight.plain import plain_kv_estimate
from preflight.suggest import apply_changes
from tests.factories import example_stack, make_config, shipped_stack


def test_the_prod_stack_fits_with_the_figures_of_a_tp4_llama_70b() -> None:
    report = resolve_sizing(shipped_stack("prod"))
    assert report.verdict.fits
    assert report.memory.weights_gib_per_gpu == pytest.approx(32.85, abs=0.01)
    assert report.memory.per_token_kv_bytes == 81_920  # 80 layers x 2 KV heads per GPU x 128 x 2 x 2 B
    assert report.memory.kv_cache_gib_per_gpu == pytest.approx(34.38, abs=0.05)


def test_the_dev_stack_fits_on_one_a100_40gb() -> None:
    report = resolve_sizing(shipped_stack("dev"))
    assert report.verdict.fits
    assert report.resolved.gpu.name == "A100-SXM4-40GB"
    assert report.resolved.gpu.memory_gib == 39.49


def test_70b_on_two_a100_40gb_is_blocked_naming_the_shortfall_in_gib() -> None:
    report = resolve_sizing(example_stack("blocked-70b-on-2x-a100-40gb"))
    assert not report.verdict.fits
    assert report.verdict.reasons == (
        "the weights need 65.71 GiB per GPU but vLLM may use only 35.54 GiB (39.49 GiB x "
        "engine.gpu_memory_utilization 0.9); short by 30.17 GiB before any KV cache. Fix: more GPUs per replica "
        "(engine.tensor_parallel_size), a larger GPU, or a quantized checkpoint.",
    )


def test_a_blocked_70b_is_told_which_tensor_parallel_size_and_gpus_would_fit() -> None:
    report = resolve_sizing(example_stack("blocked-70b-on-2x-a100-40gb"))
    assert "engine.tensor_parallel_size 8 (gpu.count 8) fits with everything else unchanged." in report.verdict.suggestions
    assert not any(s.startswith("gpu.product A100-SXM4-80GB") for s in report.verdict.suggestions)
    assert any("H200" in s for s in report.verdict.suggestions)


def test_tensor_parallel_that_does_not_divide_the_heads_blocks_with_the_valid_sizes() -> None:
    report = resolve_sizing(make_config(engine={"tensor_parallel_size": 3}, gpu={"count": 3}))
    assert report.verdict.reasons[0] == (
        "engine.tensor_parallel_size (3) does not divide the model's 32 attention heads; vLLM refuses to start. "
        "Fix: use one of 1, 2, 4, 8."
    )


def test_more_gpus_per_replica_than_a_node_has_blocks() -> None:
    cfg = make_config(model={"id": "meta-llama/Llama-3.1-405B-Instruct"}, engine={"tensor_parallel_size": 16})
    report = resolve_sizing(cfg)
    assert any("a replica needs 16 GPUs" in reason and "node has 8" in reason for reason in report.verdict.reasons)


def test_gpus_per_node_from_config_overrides_the_catalog_node_shape() -> None:
    report = resolve_sizing(make_config(engine={"tensor_parallel_size": 4}, gpu={"gpus_per_node": 2}))
    assert any("a A100-SXM4-80GB node has 2" in reason for reason in report.verdict.reasons)


def test_max_model_len_beyond_the_model_maximum_blocks() -> None:
    report = resolve_sizing(make_config(model={"id": "Qwen/Qwen2.5-7B-Instruct"}, engine={"max_model_len": 65536}))
    assert report.verdict.reasons[0].startswith(
        "engine.max_model_len (65536) exceeds the model's max_position_embeddings (32768)"
    )


def test_one_request_longer_than_the_cache_blocks_naming_the_length_the_cache_holds() -> None:
    report = resolve_sizing(make_config(gpu={"product": "L4"}, engine={"max_model_len": 131072}))
    assert report.verdict.reasons[0].startswith("one request of engine.max_model_len 131072 tokens needs 16.00 GiB")
    assert "Fix: lower engine.max_model_len (this cache holds 29184 tokens)" in report.verdict.reasons[0]


def test_a_request_too_long_for_the_cache_is_told_the_longest_max_model_len_that_fits() -> None:
    report = resolve_sizing(make_config(gpu={"product": "L4"}, engine={"max_model_len": 131072, "max_num_seqs": 16}))
    assert "engine.max_model_len 35504 is the longest that fits with everything else unchanged." in report.verdict.suggestions


def test_when_neither_length_nor_count_fits_alone_both_are_suggested_together() -> None:
    report = resolve_sizing(make_config(gpu={"product": "L4"}, engine={"max_model_len": 131072}))
    assert report.verdict.suggestions[0] == (
        "engine.max_model_len 29184 with engine.max_num_seqs 34 fits: the longest "
        "request this cache holds, and 34 concurrent requests of 1024 tokens."
    )


def test_strict_concurrency_blocks_when_every_request_may_use_max_model_len() -> None:
    report = resolve_sizing(make_config(engine={"max_num_seqs": 256}, preflight={"concurrency": {"mode": "strict"}}))
    assert not report.verdict.fits
    assert report.verdict.reasons[0].startswith("concurrency target: 256 requests x 8192 tokens need 256.00 GiB")


def test_a_warn_policy_turns_a_concurrency_shortfall_into_a_warning() -> None:
    report = resolve_sizing(make_config(preflight={"concurrency": {"mode": "strict", "policy": "warn"}}))
    assert report.verdict.fits
    assert report.verdict.warnings[0].startswith("concurrency target: 256 requests x 8192 tokens")


def test_the_suggested_max_num_seqs_really_fits() -> None:
    blocked = resolve_sizing(make_config(preflight={"concurrency": {"mode": "strict"}}))
    change = next(c for c in blocked.verdict.suggested_changes if "max_num_seqs" in c.get("engine", {}))
    assert resolve_sizing(make_config(**change, preflight={"concurrency": {"mode": "strict"}})).verdict.fits


def test_a_larger_gpu_whose_vllm_defaults_would_not_fit_is_suggested_with_the_limits_pinned() -> None:
    report = resolve_sizing(example_stack("blocked-70b-on-2x-a100-40gb"))
    assert (
        "gpu.product H200 fits with the same parallelism if engine.max_num_seqs 256 and "
        "engine.max_num_batched_tokens 2048 are set (vLLM's defaults differ on that GPU)." in report.verdict.suggestions
    )


def test_a_larger_gpu_alone_is_not_suggested_when_its_vllm_defaults_do_not_fit() -> None:
    report = resolve_sizing(example_stack("blocked-70b-on-2x-a100-40gb"))
    assert "gpu.product H200 fits with the same parallelism." not in report.verdict.suggestions


def test_with_an_explicit_concurrency_target_the_suggestion_lowers_that_target() -> None:
    report = resolve_sizing(make_config(preflight={"concurrency": {"mode": "strict", "requests": 256}}))
    assert any(s.startswith("preflight.concurrency.requests ") for s in report.verdict.suggestions)
    assert not any(s.startswith("engine.max_num_seqs ") for s in report.verdict.suggestions)


@pytest.mark.parametrize(
    "changes",
    [
        {"gpu": {"product": "L4"}, "engine": {"gpu_memory_utilization": 0.7}},  # no memory left for the KV cache
        {"gpu": {"product": "L4"}, "engine": {"max_model_len": 131072}},  # one request does not fit
        {"preflight": {"concurrency": {"mode": "strict", "requests": 256}}},  # an asked-for target does not fit
    ],
    ids=["no-kv-memory", "one-request", "concurrency-target"],
)
def test_every_memory_block_names_the_shortfall_in_gib_and_a_fix(changes: dict[str, object]) -> None:
    reason = resolve_sizing(make_config(**changes)).verdict.reasons[0]
    assert re.search(r"short by \d+\.\d\d GiB", reason) and " Fix: " in reason, reason


def test_utilization_above_095_warns() -> None:
    report = resolve_sizing(make_config(engine={"gpu_memory_utilization": 0.97}))
    assert any(w.startswith("engine.gpu_memory_utilization 0.97 leaves under 5 %") for w in report.verdict.warnings)


def test_fp8_weights_on_an_a100_warn_that_they_run_weight_only() -> None:
    report = resolve_sizing(make_config(engine={"quantization": "fp8"}))
    assert any("W8A16" in w for w in report.verdict.warnings)


def test_fp8_weights_on_an_h100_do_not_warn() -> None:
    report = resolve_sizing(make_config(gpu={"product": "H100-80GB-HBM3"}, engine={"quantization": "fp8"}))
    assert not any("W8A16" in w for w in report.verdict.warnings)


def test_several_acceptable_products_are_sized_for_the_smallest() -> None:
    report = resolve_sizing(make_config(gpu={"also_accept": ["A100-SXM4-40GB"]}))
    assert report.resolved.gpu.name == "A100-SXM4-40GB"
    assert any(w.startswith("sized for the smallest acceptable GPU, A100-SXM4-40GB") for w in report.verdict.warnings)


def test_a_thin_margin_warns() -> None:
    cfg = apply_changes(example_stack("qwen-72b-on-h100-long-context"), {"preflight": {"min_margin_percent": 15.0}})
    report = resolve_sizing(cfg)
    assert report.verdict.fits
    assert (
        "only 13.4 % of the KV cache is left after the concurrency target (preflight.min_margin_percent 15.0)."
        in report.verdict.warnings
    )


def test_enforce_eager_removes_the_cuda_graph_term() -> None:
    assert resolve_sizing(make_config(engine={"enforce_eager": True})).memory.cuda_graph_gib == 0.0
    assert resolve_sizing(make_config()).memory.cuda_graph_gib == pytest.approx(0.61, abs=0.01)


def test_vllm_0_7_2_subtracts_no_cuda_graph_memory_and_profiles_max_model_len_tokens() -> None:
    report = resolve_sizing(make_config(vllm={"version": "0.7.2"}))
    assert report.memory.cuda_graph_gib == 0.0
    assert report.resolved.max_num_batched_tokens == 8192


def test_vllm_0_7_2_refuses_batched_tokens_below_max_model_len() -> None:
    report = resolve_sizing(make_config(vllm={"version": "0.7.2"}, engine={"max_num_batched_tokens": 4096}))
    assert report.verdict.reasons[0].startswith("engine.max_num_batched_tokens (4096) is below engine.max_model_len (8192)")


def test_batched_tokens_below_max_num_seqs_blocks() -> None:
    report = resolve_sizing(make_config(engine={"max_num_batched_tokens": 128, "max_num_seqs": 256}))
    assert report.verdict.reasons[0].startswith("engine.max_num_batched_tokens (128) is below engine.max_num_seqs (256)")


def test_fp8_kv_cache_halves_bytes_per_token() -> None:
    auto = resolve_sizing(make_config())
    fp8 = resolve_sizing(make_config(engine={"kv_cache_dtype": "fp8"}))
    assert fp8.memory.per_token_kv_bytes * 2 == auto.memory.per_token_kv_bytes
    assert fp8.capacity.kv_cache_tokens == pytest.approx(2 * auto.capacity.kv_cache_tokens, rel=0.001)


def test_kv_heads_are_replicated_when_tensor_parallel_exceeds_them() -> None:
    report = resolve_sizing(make_config(model={"id": "Qwen/Qwen2.5-7B-Instruct"}, engine={"tensor_parallel_size": 4}))
    assert report.memory.per_token_kv_bytes == 28 * 2 * 1 * 128 * 2  # 4 KV heads over TP 4: one per GPU


def test_a_draft_model_costs_weights_and_kv_bytes() -> None:
    plain = resolve_sizing(make_config(model={"id": "meta-llama/Llama-3.1-70B-Instruct"}, engine={"tensor_parallel_size": 4}))
    draft = resolve_sizing(
        make_config(
            model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
            engine={
                "tensor_parallel_size": 4,
                "speculative": {
                    "method": "draft_model",
                    "model": "meta-llama/Llama-3.1-8B-Instruct",
                    "num_speculative_tokens": 4,
                },
            },
        )
    )
    assert draft.memory.draft_gib_per_gpu == pytest.approx(14.96 / 4, abs=0.01)
    assert draft.memory.per_token_kv_bytes == plain.memory.per_token_kv_bytes + 32 * 2 * 2 * 128 * 2
    assert draft.memory.kv_cache_gib_per_gpu < plain.memory.kv_cache_gib_per_gpu


def test_sliding_window_layers_hold_only_their_window() -> None:
    report = resolve_sizing(example_stack("gemma-2-27b-on-l40s"))
    assert report.verdict.fits
    # 23 full + 23 sliding layers on each GPU form two groups of 23: the log's token count halves the blocks.
    assert report.capacity.kv_cache_tokens == report.capacity.num_gpu_blocks // 2 * 16


def test_the_capacity_guide_estimate_for_llama_70b_matches_the_published_numbers() -> None:
    plain = plain_kv_estimate(MODELS["meta-llama/Llama-3.1-70B-Instruct"], "auto", "auto", 64, 4096, 16)
    assert (plain.bytes_per_token, plain.bytes_per_block, plain.blocks) == (327_680, 5_242_880, 16_384)
    assert plain.total_bytes / 1024**3 == 80.0


def test_an_unpinned_revision_warns_that_replicas_can_serve_different_weights() -> None:
    report = resolve_sizing(make_config())
    assert any(w.startswith("model.revision is not pinned") for w in report.verdict.warnings)


def test_an_unpinned_revision_of_a_bucket_copy_asks_to_record_the_commit_copied() -> None:
    bucket = {"mode": "object_storage", "object_storage": {"uri": "s3://models/llama-8b/", "credentials_secret": "bucket-keys"}}
    report = resolve_sizing(make_config(delivery=bucket))
    (warning,) = [w for w in report.verdict.warnings if w.startswith("model.revision")]
    assert "streams the copy in s3://models/llama-8b/" in warning and warning.endswith("the commit you copied there.")


def test_a_pinned_revision_does_not_warn() -> None:
    report = resolve_sizing(make_config(model={"revision": "0e9e39f2"}))
    assert not any(w.startswith("model.revision") for w in report.verdict.warnings)


def test_a_warned_concurrency_shortfall_is_not_reported_twice_as_a_thin_margin() -> None:
    report = resolve_sizing(make_config(preflight={"concurrency": {"mode": "strict", "policy": "warn"}}))
    assert not any(w.startswith("only ") for w in report.verdict.warnings)
