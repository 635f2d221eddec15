"""Per-GPU shapes vLLM sizes specially: MLA and sliding-window KV, and pipeline stages of uneven size."""

from __future__ import annotations

from dataclasses import replace

import pytest

from catalog.models import MODELS, Architecture
from catalog.vllm_versions import MemoryEra
from config.errors import ConfigError
from plan.sizing import resolve_sizing
from preflight.kv_cache import kv_capacity, kv_layout
from preflight.memory import GIB, MemoryInputs, per_token_kv_bytes, weight_bytes, weights_gib_per_gpu
from tests.factories import make_config

# deepseek-ai/DeepSeek-V2-Lite/config.json: MLA with a 512-wide latent and 64 rotary dims.
MLA_ARCHITECTURE = {
    "num_hidden_layers": 27,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "hidden_size": 2048,
    "intermediate_size": 10944,
    "vocab_size": 102400,
    "max_position_embeddings": 163840,
    "num_parameters": 15_706_484_224,
    "kv_lora_rank": 512,
    "qk_rope_head_dim": 64,
}
# google/gemma-3-27b-it text config: 62 layers, 10 full attention and 52 with a 1024-token window.
GEMMA_3_27B = Architecture(
    62, 32, 16, 128, 5376, 21504, 262208, 131072, 27_432_406_640, sliding_window=1024, num_sliding_window_layers=52
)


def mla_report(tensor_parallel_size: int) -> object:
    return resolve_sizing(
        make_config(
            model={"id": "deepseek-ai/DeepSeek-V2-Lite", "architecture": MLA_ARCHITECTURE},
            engine={"tensor_parallel_size": tensor_parallel_size},
        )
    )


def gemma_3_inputs() -> MemoryInputs:
    return MemoryInputs(
        arch=GEMMA_3_27B,
        era=MemoryEra.V1,
        version=(0, 19, 0),
        gpu_memory_gib=79.19,
        gpu_memory_utilization=0.9,
        tensor_parallel_size=1,
        pipeline_parallel_size=1,
        max_model_len=131072,
        max_num_seqs=256,
        max_num_batched_tokens=8192,
        block_size=16,
        dtype="auto",
        quantization=None,
        kv_cache_dtype="auto",
        enforce_eager=False,
        fully_connected=True,
        flashinfer_sampler=False,
    )


def test_mla_stores_one_latent_of_kv_lora_rank_plus_rope_dims_per_layer() -> None:
    assert mla_report(1).memory.per_token_kv_bytes == 27 * (512 + 64) * 2  # type: ignore[attr-defined]


def test_mla_kv_bytes_per_gpu_do_not_shrink_with_tensor_parallel() -> None:
    assert mla_report(4).memory.per_token_kv_bytes == mla_report(1).memory.per_token_kv_bytes  # type: ignore[attr-defined]


def test_an_mla_architecture_without_its_rope_dims_is_refused_naming_both_keys() -> None:
    architecture = {key: value for key, value in MLA_ARCHITECTURE.items() if key != "qk_rope_head_dim"}
    with pytest.raises(ConfigError) as caught:
        make_config(model={"id": "deepseek-ai/DeepSeek-V2-Lite", "architecture": architecture})
    assert "needs both kv_lora_rank and qk_rope_head_dim" in caught.value.render()


def test_ten_full_and_fifty_two_sliding_layers_form_seven_groups_of_ten() -> None:
    layout = kv_layout(gemma_3_inputs())
    assert (layout.group_size, layout.full_groups, layout.sliding_groups) == (10, 1, 6)


def test_the_gemma_3_log_token_count_is_reproduced_from_its_kv_memory() -> None:
    # vLLM log (docs/sources.md §M2.2): 19.53 GiB available -> "GPU KV cache size: 36,560 tokens".
    assert kv_capacity(gemma_3_inputs(), 19.53).kv_cache_tokens == 36_560


def test_vllm_0_7_gives_sliding_window_layers_the_full_context() -> None:
    inputs = replace(gemma_3_inputs(), era=MemoryEra.V0, version=(0, 7, 2))
    assert kv_layout(inputs).groups == 1


def test_pipeline_parallel_splits_the_kv_layers_over_the_stages() -> None:
    whole = per_token_kv_bytes(gemma_3_inputs())
    assert per_token_kv_bytes(replace(gemma_3_inputs(), pipeline_parallel_size=2)) * 2 == whole


def test_the_largest_pipeline_stage_carries_the_weights_of_its_extra_layer() -> None:
    arch = MODELS["meta-llama/Llama-3.1-70B-Instruct"]
    linear, embedding = weight_bytes(arch, "auto", None)
    expected = (linear * 27 / 80 + embedding) / GIB  # 80 layers over 3 stages: 27 + 27 + 26
    assert weights_gib_per_gpu(arch, "auto", None, tp=1, pp=3) == pytest.approx(expected)
