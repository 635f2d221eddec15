"""The GPU memory vLLM reserves for LoRA adapters, and the shape it reserves it for. Pure.

With --enable-lora vLLM wraps every linear layer it supports for LoRA in the model (all of them unless
--lora-target-modules narrows it), whatever modules the adapters target, and gives each wrapped layer two
stacked buffers per output slice, allocated at model load (so they count in the weights vLLM subtracts
before the KV cache): A of max_loras x max_lora_rank x input_size and B of max_loras x output_size x
max_lora_rank, in the model's dtype (`lora_dtype` auto). Column-parallel layers (qkv_proj, gate_up_proj)
shard their output by tensor parallelism, row-parallel ones (o_proj, down_proj) their input
(vllm-project/vllm vllm/lora/layers/base_linear.py@1ace43ed7b3c79daba3b4828fdaf30dcb4094adb:35-86;
vllm/config/lora.py@a78dc92f43ae2471dd40675a47079aa1a9a157c1:25-37 for the ranks and the defaults).
The embedding and LM-head buffers of older releases (lora_extra_vocab_size) are left out: a few MiB.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.models import Architecture
from config.lora import LoraConfig

# The --max-lora-rank choices every deployable release accepts (MaxLoRARanks; 1 only in recent ones).
VLLM_LORA_RANKS = (8, 16, 32, 64, 128, 256, 320, 512)
ATTENTION_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj")
MLP_MODULES = ("gate_proj", "up_proj", "down_proj")


@dataclass(frozen=True)
class LoraShape:
    """What vLLM's buffers are sized for: --max-loras and --max-lora-rank."""

    max_loras: int
    max_lora_rank: int


def lora_shape(lora: LoraConfig) -> LoraShape | None:
    """None without adapters. max_loras: every adapter in one batch unless set; max_lora_rank: the smallest
    rank vLLM accepts that holds the largest adapter, unless set."""
    if not lora.enabled:
        return None
    largest = max((adapter.rank for adapter in lora.adapters), default=VLLM_LORA_RANKS[0])
    rank = lora.max_lora_rank or next((r for r in VLLM_LORA_RANKS if r >= largest), VLLM_LORA_RANKS[-1])
    return LoraShape(max_loras=lora.max_loras or max(1, len(lora.adapters)), max_lora_rank=rank)


def supported_modules(arch: Architecture) -> tuple[str, ...]:
    """The target modules the preflight can size: attention, and the MLP of a dense model (an MoE model's
    experts are wrapped differently, by release, and are not sized here; nor is multi-head latent attention)."""
    if arch.uses_mla:
        return ()
    return ATTENTION_MODULES if arch.num_local_experts else ATTENTION_MODULES + MLP_MODULES


def _layer_elements(arch: Architecture, tp: int, rank: int) -> int:
    """Elements of one layer's A and B buffers for one adapter slot, on one TP rank."""
    hidden, q = arch.hidden_size, arch.num_attention_heads * arch.head_dim
    kv = max(1, arch.num_key_value_heads // tp) * arch.head_dim
    qkv = 3 * rank * hidden + rank * (q // tp + 2 * kv)  # three slices: three A buffers
    o_proj = rank * (q // tp) + hidden * rank
    elements = qkv + o_proj
    if not arch.num_local_experts:
        inter = arch.intermediate_size // tp
        elements += 2 * rank * hidden + rank * 2 * inter  # gate_up_proj: two slices
        elements += rank * inter + hidden * rank  # down_proj
    return elements


def lora_gib_per_gpu(arch: Architecture, shape: LoraShape | None, tp: int, stage_layers: int, dtype_bytes: int) -> float:
    if shape is None:
        return 0.0
    elements = shape.max_loras * stage_layers * _layer_elements(arch, tp, shape.max_lora_rank)
    return elements * dtype_bytes / 1024**3
