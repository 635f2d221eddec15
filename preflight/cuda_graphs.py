"""vLLM's estimate of the CUDA-graph pool, computed the way `profile_cudagraph_memory` measures it.

vLLM captures the two largest graphs of each mode into a scratch pool and extrapolates (vllm 0.32.0
v1/worker/gpu_model_runner.py:6394-6423, :6468; the 0.19.0 logs print the same lines from :5876-:5955):

    estimate = max(first_capture per mode) + sum over modes of (graphs_in_mode - 1) x per_graph

The modes are PIECEWISE over every capture size and FULL over the uniform-decode sizes up to max_num_seqs
(FULL_AND_PIECEWISE, the default cudagraph_mode, vllm 0.32.0 config/vllm.py:303, and what the 0.19 and 0.21
logs print). The capture sizes follow
max_num_seqs: `max_cudagraph_capture_size = min(2 x max_num_seqs, 512)`, capped at max_num_batched_tokens,
then [1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16) (vllm 0.32.0 config/vllm.py:2357-2364, :2446, :2472-2486).
"""

from __future__ import annotations

from catalog.models import Architecture

MIB = 1024**2
GIB = 1024**3
DEFAULT_MAX_CAPTURE_SIZE = 512  # 1024 on the sm100 family (vllm 0.32.0 config/vllm.py:2357-2359), not modelled
# A FULL graph's first capture holds FlashAttention's split-KV accumulators, [num_splits, num_heads, num_tokens,
# head_size] in fp32, "pre-allocated during capture" with flash_attn_max_num_splits_for_cuda_graph = 32 (vllm
# 0.32.0 v1/attention/backends/flash_attn.py:762-766, :853-860; config/attention.py:61). 32 x 512 x 32 x 128 x 4 B
# = 256 MiB for every 4096-wide attention at 512 tokens: the logs print 260 - 262 MiB (R01, C07, C08, C10).
FLASH_ATTN_MAX_NUM_SPLITS = 32
ACCUMULATOR_BYTES = 4
# Fitted (tests/test_calibration.py, rows not held out): a PIECEWISE first capture per token x (hidden +
# MLP width per rank), from the four logged lines (R01 138, C07 124, C08 122, C10 172 MiB at 512 tokens);
# and each further graph's memory, a constant per graph plus, with tensor parallel, a part per layer x
# hidden/4096 (the captured all-reduces), least squares on the totals of R01, T14 - T17, C01, C03, C05, C07,
# C08, C10, C11. The logs' per-graph figures come in 2 MiB steps (4 or 6 MiB at TP 1).
PIECEWISE_FIRST_BYTES = 15.0
PER_GRAPH_MIB = 5.86
PER_GRAPH_MIB_PER_TP_LAYER = 0.0597


def capture_sizes(max_num_seqs: int, max_num_batched_tokens: int) -> list[int]:
    """cudagraph_capture_sizes as vLLM derives them when neither they nor max_cudagraph_capture_size are set."""
    largest = min(2 * max_num_seqs, DEFAULT_MAX_CAPTURE_SIZE, max_num_batched_tokens)
    sizes = [size for size in (1, 2, 4) if size <= largest]
    if largest >= 8:
        sizes += list(range(8, min(largest + 1, 256), 8))
    if largest >= 256:
        sizes += list(range(256, largest + 1, 16))
    return sizes


def graphs_captured(engine: str, max_num_seqs: int, max_num_batched_tokens: int) -> int:
    """How many CUDA graphs a start captures (what the capture time follows, catalog/startup_phases.py): V1 a
    PIECEWISE graph per capture size and a FULL one per decode size; V0 one graph per batch size of
    [1, 2, 4, 8, 16, ...] up to max_num_seqs (vllm-project/vllm vllm/worker/model_runner.py
    `_BATCH_SIZES_TO_CAPTURE`@002a0ba9645e705311e4cbaab24282448240419a: "depending on the model's max_num_seqs")."""
    if engine == "V0":
        return sum(1 for size in (1, 2, 4, *range(8, max_num_seqs + 1, 8)) if size <= max_num_seqs)
    piecewise = capture_sizes(max_num_seqs, max_num_batched_tokens)
    return len(piecewise) + len(full_decode_sizes(piecewise, max_num_seqs))


def full_decode_sizes(sizes: list[int], max_num_seqs: int) -> list[int]:
    """The FULL (uniform decode, one token per request) graphs: the capture sizes up to max_num_seqs."""
    return [size for size in sizes if size <= max_num_seqs]


def cuda_graph_estimate_gib(arch: Architecture, tp: int, stage_layers: int, max_num_seqs: int, max_tokens: int) -> float:
    """`Estimated CUDA graph memory: X GiB total` for this model, parallelism and batch limits."""
    piecewise = capture_sizes(max_num_seqs, max_tokens)
    full = full_decode_sizes(piecewise, max_num_seqs)
    first = max(piecewise_first_bytes(arch, tp, max(piecewise)), full_first_bytes(arch, tp, max(full, default=0)))
    per_graph = per_graph_bytes(arch, tp, stage_layers)
    extra_graphs = (len(piecewise) - 1) + max(len(full) - 1, 0)
    return (first + extra_graphs * per_graph) / GIB


def piecewise_first_bytes(arch: Architecture, tp: int, tokens: int) -> float:
    return PIECEWISE_FIRST_BYTES * tokens * (arch.hidden_size + arch.intermediate_size / tp)


def full_first_bytes(arch: Architecture, tp: int, tokens: int) -> float:
    heads = max(1, arch.num_attention_heads // tp)
    return FLASH_ATTN_MAX_NUM_SPLITS * tokens * heads * arch.head_dim * ACCUMULATOR_BYTES


def per_graph_bytes(arch: Architecture, tp: int, stage_layers: int) -> float:
    all_reduce = PER_GRAPH_MIB_PER_TP_LAYER * stage_layers * arch.hidden_size / 4096 if tp > 1 else 0.0
    return (PER_GRAPH_MIB + all_reduce) * MIB
