"""The CUDA-graph estimate follows vLLM's capture sizes (preflight/cuda_graphs.py)."""

from __future__ import annotations

import pytest

from catalog.models import MODELS
from preflight.cuda_graphs import (
    MIB,
    capture_sizes,
    cuda_graph_estimate_gib,
    full_decode_sizes,
    full_first_bytes,
    per_graph_bytes,
)

LLAMA = MODELS["meta-llama/Llama-3.1-8B-Instruct"]


def test_1024_sequences_capture_51_piecewise_and_51_full_graphs_up_to_512_tokens() -> None:
    """As the 0.19 logs print it: 'PIECEWISE=51 (largest=512), FULL=51 (largest=512)'."""
    sizes = capture_sizes(1024, 8192)
    assert (len(sizes), max(sizes), len(full_decode_sizes(sizes, 1024))) == (51, 512, 51)


def test_256_sequences_capture_35_full_graphs_up_to_256() -> None:
    """As row C06 (0.21.0, LLM class) logs it: 'PIECEWISE=51 (largest=512), FULL=35 (largest=256)'."""
    full = full_decode_sizes(capture_sizes(256, 8192), 256)
    assert (len(full), max(full)) == (35, 256)


def test_the_largest_capture_size_is_capped_by_the_batched_tokens() -> None:
    assert max(capture_sizes(1024, 256)) == 256


def test_a_full_graph_first_capture_holds_32_fp32_attention_splits() -> None:
    """32 splits x 512 tokens x 32 heads x 128 x 4 B: the 260 - 262 MiB the 0.19 logs print for 4096-wide attention."""
    assert full_first_bytes(LLAMA, 1, 512) / MIB == 256


@pytest.mark.parametrize(("fewer", "more"), [(256, 1024), (16, 256)])
def test_fewer_sequences_give_a_smaller_estimate(fewer: int, more: int) -> None:
    assert cuda_graph_estimate_gib(LLAMA, 1, 32, fewer, 8192) < cuda_graph_estimate_gib(LLAMA, 1, 32, more, 8192)


def test_with_tensor_parallel_each_graph_grows_with_the_layers() -> None:
    assert per_graph_bytes(LLAMA, 1, 80) == per_graph_bytes(LLAMA, 1, 32) < per_graph_bytes(LLAMA, 2, 32)
    assert per_graph_bytes(LLAMA, 2, 32) < per_graph_bytes(LLAMA, 2, 80)
