"""Safetensors headers rebuilt from a config.json, named as each family's checkpoint names its tensors.

The popular models' data (tests/data/hub/models.json) carries config.json only; this module lays out the
tensors those checkpoints hold (transformers models/<family>/modeling_<family>.py parameter names; packing
as AWQ, GPTQ (AutoGPTQ), compressed-tensors FP8 and gpt-oss's MXFP4 store it), and writes them as
header-only safetensors files: the real 8-byte length + JSON header, the data left out (the Hub reads
headers with range requests, never the data).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

Entry = tuple[str, str, tuple[int, ...]]  # name, safetensors dtype, shape
ITEM_BYTES = {"BF16": 2, "F16": 2, "F32": 4, "I32": 4, "U8": 1, "F8_E4M3": 1}
DATA = json.loads((Path(__file__).parent / "data" / "hub" / "models.json").read_text(encoding="utf-8"))
MODELS: dict[str, dict[str, Any]] = DATA["models"]


def nbytes(entry: Entry) -> int:
    count = 1
    for size in entry[2]:
        count *= size
    return count * ITEM_BYTES[entry[1]]


def _linear(prefix: str, out: int, inp: int, dtype: str, quantized: str | None, bias: bool = False) -> Iterator[Entry]:
    if quantized == "awq":  # AutoAWQ GEMM: qweight [in, out/8], qzeros [in/128, out/8], scales [in/128, out]
        yield from ((f"{prefix}.qweight", "I32", (inp, out // 8)), (f"{prefix}.qzeros", "I32", (inp // 128, out // 8)))
        yield f"{prefix}.scales", "F16", (inp // 128, out)
    elif quantized == "gptq":  # AutoGPTQ: qweight [in/8, out], qzeros [in/128, out/8], scales, g_idx [in]
        yield from ((f"{prefix}.qweight", "I32", (inp // 8, out)), (f"{prefix}.qzeros", "I32", (inp // 128, out // 8)))
        yield from ((f"{prefix}.scales", "F16", (inp // 128, out)), (f"{prefix}.g_idx", "I32", (inp,)))
    elif quantized == "fp8":  # compressed-tensors float-quantized, per-channel: weight_scale [out, 1]
        yield from ((f"{prefix}.weight", "F8_E4M3", (out, inp)), (f"{prefix}.weight_scale", "BF16", (out, 1)))
    else:
        yield f"{prefix}.weight", dtype, (out, inp)
    if bias:
        yield f"{prefix}.bias", dtype, (out,)


def _attention(p: str, c: dict[str, Any], dtype: str, q: str | None, bias: bool = False) -> Iterator[Entry]:
    h, heads, kv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
    d = c.get("head_dim") or h // heads
    yield from _linear(f"{p}.self_attn.q_proj", heads * d, h, dtype, q, bias)
    yield from _linear(f"{p}.self_attn.k_proj", kv * d, h, dtype, q, bias)
    yield from _linear(f"{p}.self_attn.v_proj", kv * d, h, dtype, q, bias)
    yield from _linear(f"{p}.self_attn.o_proj", h, heads * d, dtype, q)


def _mlp(p: str, h: int, inter: int, dtype: str, q: str | None) -> Iterator[Entry]:
    yield from _linear(f"{p}.gate_proj", inter, h, dtype, q)
    yield from _linear(f"{p}.up_proj", inter, h, dtype, q)
    yield from _linear(f"{p}.down_proj", h, inter, dtype, q)


def _norms(
    p: str, h: int, dtype: str, names: tuple[str, ...] = ("input_layernorm", "post_attention_layernorm")
) -> Iterator[Entry]:
    yield from ((f"{p}.{name}.weight", dtype, (h,)) for name in names)


def _ends(c: dict[str, Any], dtype: str, prefix: str = "model") -> Iterator[Entry]:
    h, vocab = c["hidden_size"], c["vocab_size"]
    yield f"{prefix}.embed_tokens.weight", dtype, (vocab, h)
    yield f"{prefix}.norm.weight", dtype, (h,)
    if not c.get("tie_word_embeddings"):
        yield "lm_head.weight", dtype, (vocab, h)


def _dense(c: dict[str, Any], family: str, quantized: str | None) -> Iterator[Entry]:
    dtype = {"bfloat16": "BF16", "float16": "F16"}[c["torch_dtype"]]
    h = c["hidden_size"]
    yield from _ends(c, dtype)
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}"
        if family == "phi3":  # fused qkv_proj and gate_up_proj (modeling_phi3.py)
            d = h // c["num_attention_heads"]
            yield p + ".self_attn.qkv_proj.weight", dtype, ((c["num_attention_heads"] + 2 * c["num_key_value_heads"]) * d, h)
            yield p + ".self_attn.o_proj.weight", dtype, (h, h)
            yield p + ".mlp.gate_up_proj.weight", dtype, (2 * c["intermediate_size"], h)
            yield p + ".mlp.down_proj.weight", dtype, (h, c["intermediate_size"])
        else:
            yield from _attention(p, c, dtype, quantized, bias=family == "qwen2")
            yield from _mlp(f"{p}.mlp", h, c["intermediate_size"], dtype, quantized)
        if family == "qwen3":
            yield from ((f"{p}.self_attn.{n}.weight", dtype, (c["head_dim"],)) for n in ("q_norm", "k_norm"))
        yield from _norms(p, h, dtype)


def _moe(c: dict[str, Any], family: str) -> Iterator[Entry]:
    h, dtype = c["hidden_size"], "BF16"
    yield from _ends(c, dtype)
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}"
        yield from _norms(p, h, dtype)
        if family == "mixtral":
            yield from _attention(p, c, dtype, None)
            yield f"{p}.block_sparse_moe.gate.weight", dtype, (c["num_local_experts"], h)
            for e in range(c["num_local_experts"]):
                for w, shape in (
                    ("w1", (c["intermediate_size"], h)),
                    ("w2", (h, c["intermediate_size"])),
                    ("w3", (c["intermediate_size"], h)),
                ):
                    yield f"{p}.block_sparse_moe.experts.{e}.{w}.weight", dtype, shape
        elif family == "qwen3_moe":
            yield from _attention(p, c, dtype, None)
            yield from ((f"{p}.self_attn.{n}.weight", dtype, (c["head_dim"],)) for n in ("q_norm", "k_norm"))
            yield f"{p}.mlp.gate.weight", dtype, (c["num_experts"], h)
            for e in range(c["num_experts"]):
                yield from _mlp(f"{p}.mlp.experts.{e}", h, c["moe_intermediate_size"], dtype, None)
        else:  # deepseek_v2 (modeling_deepseek.py): MLA without q compression, shared + routed experts
            heads, nope, rope, v, rank = (
                c[k] for k in ("num_attention_heads", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "kv_lora_rank")
            )
            yield f"{p}.self_attn.q_proj.weight", dtype, (heads * (nope + rope), h)
            yield f"{p}.self_attn.kv_a_proj_with_mqa.weight", dtype, (rank + rope, h)
            yield f"{p}.self_attn.kv_a_layernorm.weight", dtype, (rank,)
            yield f"{p}.self_attn.kv_b_proj.weight", dtype, (heads * (nope + v), rank)
            yield f"{p}.self_attn.o_proj.weight", dtype, (h, heads * v)
            if i < c["first_k_dense_replace"]:
                yield from _mlp(f"{p}.mlp", h, c["intermediate_size"], dtype, None)
                continue
            yield f"{p}.mlp.gate.weight", dtype, (c["n_routed_experts"], h)
            yield from _mlp(f"{p}.mlp.shared_experts", h, c["moe_intermediate_size"] * c["n_shared_experts"], dtype, None)
            for e in range(c["n_routed_experts"]):
                yield from _mlp(f"{p}.mlp.experts.{e}", h, c["moe_intermediate_size"], dtype, None)


def _gpt_oss(c: dict[str, Any]) -> Iterator[Entry]:
    """gpt-oss: bf16 attention (with biases and sinks), router and embeddings; experts in MXFP4 as U8 blocks
    of 16 bytes (32 E2M1 values) and one U8 (E8M0) scale per block, bf16 expert biases."""
    h, inter, experts, heads, kv, d = (
        c[k]
        for k in (
            "hidden_size",
            "intermediate_size",
            "num_local_experts",
            "num_attention_heads",
            "num_key_value_heads",
            "head_dim",
        )
    )
    yield "model.embed_tokens.weight", "BF16", (c["vocab_size"], h)
    yield "model.norm.weight", "BF16", (h,)
    yield "lm_head.weight", "BF16", (c["vocab_size"], h)
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}"
        yield from _norms(p, h, "BF16")
        yield from _linear(f"{p}.self_attn.q_proj", heads * d, h, "BF16", None, True)
        yield from _linear(f"{p}.self_attn.k_proj", kv * d, h, "BF16", None, True)
        yield from _linear(f"{p}.self_attn.v_proj", kv * d, h, "BF16", None, True)
        yield from _linear(f"{p}.self_attn.o_proj", h, heads * d, "BF16", None, True)
        yield f"{p}.self_attn.sinks", "BF16", (heads,)
        yield from _linear(f"{p}.mlp.router", experts, h, "BF16", None, True)
        yield f"{p}.mlp.experts.gate_up_proj_blocks", "U8", (experts, 2 * inter, h // 32, 16)
        yield f"{p}.mlp.experts.gate_up_proj_scales", "U8", (experts, 2 * inter, h // 32)
        yield f"{p}.mlp.experts.gate_up_proj_bias", "BF16", (experts, 2 * inter)
        yield f"{p}.mlp.experts.down_proj_blocks", "U8", (experts, h, inter // 32, 16)
        yield f"{p}.mlp.experts.down_proj_scales", "U8", (experts, h, inter // 32)
        yield f"{p}.mlp.experts.down_proj_bias", "BF16", (experts, h)


def _gemma3(c: dict[str, Any]) -> Iterator[Entry]:
    """Gemma3ForConditionalGeneration: the text model under language_model (tied head, four norms per layer,
    q_norm/k_norm), the SigLIP vision tower and the multimodal projector."""
    t, v, dtype = c["text_config"], c["vision_config"], "BF16"
    h = t["hidden_size"]
    text = {**t, "vocab_size": 262208, "tie_word_embeddings": True}
    yield from _ends(text, dtype, "language_model.model")
    for i in range(t["num_hidden_layers"]):
        p = f"language_model.model.layers.{i}"
        yield from _attention(p, text, dtype, None)
        yield from ((f"{p}.self_attn.{n}.weight", dtype, (t["head_dim"],)) for n in ("q_norm", "k_norm"))
        yield from _mlp(f"{p}.mlp", h, t["intermediate_size"], dtype, None)
        yield from _norms(
            p,
            h,
            dtype,
            ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm"),
        )
    vh, vi, patch = v["hidden_size"], v["intermediate_size"], v["patch_size"]
    base = "vision_tower.vision_model"
    yield from (
        (f"{base}.embeddings.patch_embedding.weight", dtype, (vh, 3, patch, patch)),
        (f"{base}.embeddings.patch_embedding.bias", dtype, (vh,)),
    )
    yield f"{base}.embeddings.position_embedding.weight", dtype, ((v["image_size"] // patch) ** 2, vh)
    for i in range(v["num_hidden_layers"]):
        p = f"{base}.encoder.layers.{i}"
        for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
            yield from _linear(f"{p}.self_attn.{name}", vh, vh, dtype, None, True)
        yield from _linear(f"{p}.mlp.fc1", vi, vh, dtype, None, True)
        yield from _linear(f"{p}.mlp.fc2", vh, vi, dtype, None, True)
        for norm in ("layer_norm1", "layer_norm2"):
            yield from ((f"{p}.{norm}.weight", dtype, (vh,)), (f"{p}.{norm}.bias", dtype, (vh,)))
    yield from ((f"{base}.post_layernorm.weight", dtype, (vh,)), (f"{base}.post_layernorm.bias", dtype, (vh,)))
    yield "multi_modal_projector.mm_input_projection_weight", dtype, (vh, h)
    yield "multi_modal_projector.mm_soft_emb_norm.weight", dtype, (vh,)


def tensors(repo_id: str) -> list[Entry]:
    """The tensors of one of the popular models, in checkpoint order."""
    model = MODELS[repo_id]
    config, layout = model["config"], model["layout"]
    if layout == "gpt_oss":
        return list(_gpt_oss(config))
    if layout == "gemma3":
        return list(_gemma3(config))
    if layout in ("mixtral", "qwen3_moe", "deepseek_v2"):
        return list(_moe(config, layout))
    return list(_dense(config, layout, model.get("quantized")))


def header_only(entries: list[Entry]) -> bytes:
    """A safetensors file's header for `entries` (offsets as if the data followed), without the data."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, dtype, shape in entries:
        size = nbytes((name, dtype, shape))
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the format pads the header to 8 bytes
    return struct.pack("<Q", len(text)) + text


def shards(entries: list[Entry], per_shard: int = 5 * 10**9) -> dict[str, list[Entry]]:
    """The entries split into shards of about `per_shard` bytes, named as transformers names them."""
    groups: list[list[Entry]] = [[]]
    size = 0
    for entry in entries:
        if size + nbytes(entry) > per_shard and groups[-1]:
            groups.append([])
            size = 0
        groups[-1].append(entry)
        size += nbytes(entry)
    count = len(groups)
    return {f"model-{i + 1:05d}-of-{count:05d}.safetensors": group for i, group in enumerate(groups)}


def repository_files(repo_id: str) -> dict[str, bytes]:
    """config.json, model.safetensors.index.json and header-only shards of one of the popular models."""
    entries = tensors(repo_id)
    files = {"config.json": json.dumps(MODELS[repo_id]["config"]).encode()}
    parts = shards(entries)
    weight_map = {name: file for file, group in parts.items() for name, _, _ in group}
    index = {"metadata": {"total_size": sum(nbytes(e) for e in entries)}, "weight_map": weight_map}
    files["model.safetensors.index.json"] = json.dumps(index).encode()
    files.update({file: header_only(group) for file, group in parts.items()})
    return files
