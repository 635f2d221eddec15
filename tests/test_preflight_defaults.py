"""Defaults that match vLLM: its own batch limits per GPU and release, its block size, and what blocks."""

from __future__ import annotations

from plan.sizing import resolve_sizing
from tests.factories import make_config
from validation.keys import validate_config

ONLY_MODEL_AND_GPU = {"model": {"id": "meta-llama/Llama-3.1-8B-Instruct"}, "gpu": {"product": "H100-80GB-HBM3"}}


def test_llama_8b_on_one_h100_with_only_model_and_gpu_fits_with_a_target_warning() -> None:
    report = resolve_sizing(validate_config(ONLY_MODEL_AND_GPU))
    assert report.verdict.fits and report.resolved.max_model_len == 131072
    assert any(w.startswith("concurrency target: 1024 requests") for w in report.verdict.warnings)


def test_the_default_target_follows_vllms_h100_default_of_1024_sequences_and_8192_tokens() -> None:
    report = resolve_sizing(validate_config(ONLY_MODEL_AND_GPU))
    assert (report.resolved.max_num_seqs, report.resolved.max_num_batched_tokens) == (1024, 8192)


def test_the_same_stack_reports_vllms_own_concurrency_at_max_model_len() -> None:
    report = resolve_sizing(validate_config(ONLY_MODEL_AND_GPU))
    assert 3.0 < report.capacity.max_concurrency_at_max_model_len < 4.0  # vLLM 0.33 logged 3.3x (issue 12)


def test_a_target_the_user_set_with_max_num_seqs_blocks() -> None:
    report = resolve_sizing(validate_config({**ONLY_MODEL_AND_GPU, "engine": {"max_num_seqs": 1024}}))
    assert not report.verdict.fits and report.verdict.reasons[0].startswith("concurrency target: 1024 requests")


def test_an_explicit_concurrency_target_blocks() -> None:
    report = resolve_sizing(validate_config({**ONLY_MODEL_AND_GPU, "preflight": {"concurrency": {"requests": 1024}}}))
    assert not report.verdict.fits


def test_an_explicit_warn_policy_keeps_a_user_target_a_warning() -> None:
    stack = {**ONLY_MODEL_AND_GPU, "engine": {"max_num_seqs": 1024}, "preflight": {"concurrency": {"policy": "warn"}}}
    assert resolve_sizing(validate_config(stack)).verdict.fits


def test_one_request_of_max_model_len_that_does_not_fit_always_blocks() -> None:
    report = resolve_sizing(make_config(gpu={"product": "L4"}, engine={"max_model_len": 131072}))
    assert not report.verdict.fits and "vLLM refuses to start" in report.verdict.reasons[0]


def test_no_memory_for_the_cache_always_blocks() -> None:
    report = resolve_sizing(make_config(gpu={"product": "L4"}, engine={"gpu_memory_utilization": 0.7}))
    assert not report.verdict.fits and report.verdict.reasons[0].startswith("no memory is left for the KV cache")


def test_an_a100_keeps_vllms_small_batch_defaults() -> None:
    report = resolve_sizing(make_config(gpu={"product": "A100-SXM4-80GB"}))
    assert (report.resolved.max_num_seqs, report.resolved.max_num_batched_tokens) == (256, 2048)


def test_a_b200_on_0_33_gets_the_160_gib_branch_of_16384_tokens() -> None:
    report = resolve_sizing(make_config(gpu={"product": "B200"}, vllm={"version": "0.33.0"}))
    assert (report.resolved.max_num_seqs, report.resolved.max_num_batched_tokens) == (1024, 16384)


def test_a_b200_on_0_19_gets_8192_tokens_as_that_release_had_no_160_gib_branch() -> None:
    report = resolve_sizing(make_config(gpu={"product": "B200"}, vllm={"version": "0.19.1"}))
    assert (report.resolved.max_num_seqs, report.resolved.max_num_batched_tokens) == (1024, 8192)


def test_the_preflight_models_vllms_block_size_of_16_when_unset() -> None:
    assert resolve_sizing(make_config()).resolved.block_size == 16


def test_a_block_size_the_user_set_is_used() -> None:
    assert resolve_sizing(make_config(engine={"block_size": 32})).resolved.block_size == 32


def test_an_mla_model_on_hopper_is_modelled_with_flashmla_block_size_64() -> None:
    mla = {
        "num_hidden_layers": 27,
        "num_attention_heads": 16,
        "num_key_value_heads": 16,
        "hidden_size": 2048,
        "intermediate_size": 10944,
        "vocab_size": 102400,
        "max_position_embeddings": 163840,
        "kv_lora_rank": 512,
        "qk_rope_head_dim": 64,
        "head_dim": 192,
    }
    cfg = make_config(model={"id": "example/mla-model", "architecture": mla}, gpu={"product": "H100-80GB-HBM3"})
    assert resolve_sizing(cfg).resolved.block_size == 64


def test_v0_long_context_profiles_512_tokens_on_0_6_3_with_chunked_prefill() -> None:
    from catalog.vllm_versions import default_batch_limits

    assert default_batch_limits((0, 6, 3), 79.15, True, 131072) == (256, 512)


def test_v0_long_context_without_chunked_prefill_profiles_the_whole_context() -> None:
    from catalog.vllm_versions import default_batch_limits

    assert default_batch_limits((0, 7, 2), 79.15, True, 131072, chunked_prefill_allowed=False) == (256, 131072)


def test_a_v0_draft_model_at_131072_tokens_is_blocked_by_its_profiling_peak() -> None:
    report = resolve_sizing(
        make_config(
            vllm={"version": "0.7.2"},
            engine={
                "max_model_len": 131072,
                "speculative": {
                    "method": "draft_model",
                    "model": "meta-llama/Llama-3.1-8B-Instruct",
                    "num_speculative_tokens": 4,
                },
            },
            gpu={"product": "L40S"},
        )
    )
    assert report.resolved.max_num_batched_tokens == 131072 and not report.verdict.fits


def test_v1_on_0_8_5_defaults_to_1024_sequences_on_a_70_gib_gpu_even_an_a100() -> None:
    report = resolve_sizing(make_config(gpu={"product": "A100-SXM4-80GB"}, vllm={"version": "0.8.5"}))
    assert (report.resolved.max_num_seqs, report.resolved.max_num_batched_tokens) == (
        1024,
        8192,
    )  # the A100 exclusion came in 0.9
