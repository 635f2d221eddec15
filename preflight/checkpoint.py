"""A checkpoint's bytes from its safetensors headers: on disk, per pipeline stage and per GPU, and how stored.

Each header gives every tensor's dtype, shape and byte range (`data_offsets`), so the bytes are exact whatever
the packing: MXFP4 experts as U8 blocks + E8M0 scales beside bf16 attention (gpt-oss), FP8 weights with their
scales beside a bf16 `lm_head`, GPTQ/AWQ `qweight`/`qzeros` int32 packs with fp16 `scales`, or the layers a
compressed-tensors config ignores, left in bf16. vLLM loads them as stored when it runs the checkpoint's own
method, so these are its weights too (preflight/memory.py uses them then).

Placement follows vLLM: decoder layer N goes to the pipeline stage `get_pp_indices` gives it (vllm
distributed/utils.py get_pp_indices@v0.11.0: an even split, the remainder to the stages before the last), the
embeddings and a vision tower to the first stage, the final norm and the LM head to the last (a tied head is
copied there). Tensor parallelism splits every matrix, experts included (FusedMoE shards the intermediate
dimension); norms and MoE routers (ReplicatedLinear) stay whole on every rank.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from catalog.models import CheckpointBytes, StageBytes

_LAYER = re.compile(r"(?:^|\.)layers\.(\d+)\.")
_VISION = ("vision", "visual", "multi_modal_projector", "mm_projector")
_OUTPUT = ("lm_head.", "unembedding", "embed_out.")
_FINAL_NORM = re.compile(r"(?:^|\.)(?:model\.)?norm\.(?:weight|bias)$")
# Routers are ReplicatedLinear in vLLM (mixtral.py, qwen3_moe.py, deepseek_v2.py `gate`; gpt_oss.py `router`).
_ROUTER = re.compile(r"\.(?:mlp|block_sparse_moe)\.(?:gate|router)\.(?:weight|bias|e_score_correction_bias)$")


@dataclass(frozen=True)
class Tensor:
    """One header entry: the tensor's name, safetensors dtype ("BF16", "U8", "F8_E4M3", "I32"), shape, bytes."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int


def storage_format(tensor: Tensor) -> str:
    """How the tensor is stored, in the words of the method that wrote it."""
    name = tensor.name
    if name.endswith(("_blocks", "_scales")) and tensor.dtype == "U8":
        return "MXFP4 (U8 blocks + E8M0 scales, 32 per block)"
    if name.endswith((".qweight", ".qzeros", ".g_idx")) or (name.endswith(".scales") and tensor.dtype == "F16"):
        return "int4 packed (GPTQ/AWQ qweight, qzeros, scales)"
    if tensor.dtype.startswith("F8"):
        return f"FP8 ({tensor.dtype.removeprefix('F8_')})"
    if name.endswith(("weight_scale", "input_scale", "weight_scale_inv")):
        return "FP8 scales"
    return tensor.dtype


def checkpoint_bytes(tensors: Iterable[Tensor], num_hidden_layers: int) -> CheckpointBytes:
    """The checkpoint's bytes by stage part, from its headers."""
    # [split, replicated] sums, made StageBytes once at the end: a large MoE checkpoint has tens of thousands
    # of tensors, and a frozen dataclass a tensor was most of a Hub model's sizing.
    layers = [[0, 0] for _ in range(num_hidden_layers)]
    first, last = [0, 0], [0, 0]
    formats: dict[str, int] = {}
    for tensor in tensors:
        label = storage_format(tensor)
        formats[label] = formats.get(label, 0) + tensor.nbytes
        whole = (len(tensor.shape) <= 1 and "norm" in tensor.name) or bool(_ROUTER.search(tensor.name))
        _stage_sums(tensor.name, num_hidden_layers, layers, first, last)[1 if whole else 0] += tensor.nbytes
    shown = tuple(f"{label}: {size / 1024**3:.2f} GiB" for label, size in sorted(formats.items(), key=lambda kv: -kv[1]))
    return CheckpointBytes(tuple(StageBytes(*sums) for sums in layers), StageBytes(*first), StageBytes(*last), shown)


def _stage_sums(name: str, num_hidden_layers: int, layers: list[list[int]], first: list[int], last: list[int]) -> list[int]:
    """Which part's sums a tensor adds to: its decoder layer's, the first stage's or the last stage's."""
    match = _LAYER.search(name)
    if any(word in name for word in _VISION):
        return first
    if match and int(match.group(1)) < num_hidden_layers:
        return layers[int(match.group(1))]
    if name.startswith(_OUTPUT) or _FINAL_NORM.search(name) or ".lm_head." in name:
        return last
    return first  # embeddings, and anything outside the decoder layers


def pp_layer_counts(num_layers: int, pp: int) -> list[int]:
    """Layers per pipeline stage as vLLM splits them (get_pp_indices without VLLM_PP_LAYER_PARTITION)."""
    counts = [num_layers // pp] * pp
    for stage in range(2, num_layers % pp + 2):
        counts[-stage] += 1
    return counts


def largest_stage_bytes(checkpoint: CheckpointBytes, tp: int, pp: int, tied_head: int = 0) -> float:
    """Bytes one GPU of the fullest stage holds. `tied_head`: the embedding's bytes when the LM head is tied to it
    (stored once, loaded again on the last stage when there are several)."""
    stages: list[StageBytes] = []
    start = 0
    for count in pp_layer_counts(len(checkpoint.layers), pp):
        stage = sum(checkpoint.layers[start : start + count], StageBytes())
        stages.append(stage)
        start += count
    stages[0] += checkpoint.first
    stages[-1] += checkpoint.last + (StageBytes(tied_head, 0) if pp > 1 else StageBytes())
    return max(stage.per_rank(tp) for stage in stages)
