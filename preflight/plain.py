"""The plain KV estimate capacity guides use: whole model, every layer and KV head, no parallelism.

For Llama-3.1-70B (80 layers, 8 KV heads, head_dim 128, 16-bit): 2 x 80 x 8 x 128 x 2 B = 327,680 B per
token; a 16-token block is 5,242,880 B; 64 requests x 4096 tokens = 16,384 blocks = 80.0 GiB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog.models import Architecture
from preflight.memory import kv_bytes_per_element, kv_bytes_per_token_per_layer


@dataclass(frozen=True)
class PlainKvEstimate:
    bytes_per_token: int
    bytes_per_block: int
    blocks: int
    total_bytes: int


def plain_kv_estimate(
    arch: Architecture, dtype: str, kv_cache_dtype: str, requests: int, tokens: int, block_size: int
) -> PlainKvEstimate:
    element = kv_bytes_per_element(dtype, kv_cache_dtype)
    per_token = arch.num_hidden_layers * kv_bytes_per_token_per_layer(arch, 1, element)
    blocks = requests * math.ceil(tokens / block_size)
    return PlainKvEstimate(per_token, per_token * block_size, blocks, blocks * block_size * per_token)
