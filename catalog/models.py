"""Model architectures: the `config.json` facts vLLM's memory accounting needs.

Keys are spelled as in each model's Hugging Face `config.json`. Parameter counts are the published
totals (model cards / safetensors metadata). Sources: the `config.json` of each Hugging Face repository
named below; layer layouts for sliding-window models from vLLM `model_executor/models/gemma2.py`
(even layers use the sliding window).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StageBytes:
    """Checkpoint bytes one pipeline stage is made of: `split` bytes that tensor parallelism divides across the
    ranks (every matrix, experts included), `replicated` bytes each rank holds whole (norms, MoE routers)."""

    split: int = 0
    replicated: int = 0

    def per_rank(self, tp: int) -> float:
        return self.split / tp + self.replicated

    def __add__(self, other: StageBytes) -> StageBytes:
        return StageBytes(self.split + other.split, self.replicated + other.replicated)


@dataclass(frozen=True)
class CheckpointBytes:
    """A checkpoint's exact bytes from its safetensors headers (preflight/checkpoint.py): per decoder layer, the
    input side (embeddings, a vision tower: the first stage) and the output side (final norm, LM head: the last
    stage), and which tensors are quantized how (`formats`: "MXFP4 (U8 blocks + E8M0 scales): 10.2 GB", ...)."""

    layers: tuple[StageBytes, ...]
    first: StageBytes
    last: StageBytes
    formats: tuple[str, ...] = ()

    @property
    def total_bytes(self) -> int:
        parts = (*self.layers, self.first, self.last)
        return sum(part.split + part.replicated for part in parts)


@dataclass(frozen=True)
class Architecture:
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    hidden_size: int
    intermediate_size: int
    vocab_size: int
    max_position_embeddings: int
    num_parameters: int
    torch_dtype: str = "bfloat16"
    tie_word_embeddings: bool = False
    # Sliding-window attention: the window, and how many layers use it (the rest attend fully).
    sliding_window: int | None = None
    num_sliding_window_layers: int = 0
    # Mixture of experts: experts per layer and experts each token uses.
    num_local_experts: int | None = None
    num_experts_per_tok: int | None = None
    # Multi-head latent attention (DeepSeek-V2/V3 family): the latent cache replaces K/V heads.
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    # The checkpoint's own quantization: config.json `quantization_config.quant_method` ("awq", "gptq",
    # "compressed-tensors", "fp8", ...), and the bytes one linear-layer weight takes in it (scales included).
    # None: a 16-bit checkpoint stored in torch_dtype. Embeddings and the LM head stay 16-bit either way.
    quantization: str | None = None
    quantized_linear_bytes: float | None = None
    # The linear weights are FP8 (E4M3): vLLM computes in FP8 only on a GPU with FP8 tensor cores, and elsewhere runs
    # them weight-only through its Marlin kernel (preflight/checks.py fp8_weight_only_warning).
    fp8_weights: bool = False
    # A vision or audio encoder beside the language model (config.json `vision_config` / `audio_config`): vLLM then
    # builds a multi-modal processor and warms it up at start (catalog/startup_phases.py).
    multimodal: bool = False
    # The checkpoint's safetensors headers, when read (the Hub or its cache): the exact bytes, which replace
    # the estimate from num_parameters whenever vLLM loads the weights as stored. `source`: where these facts
    # come from ("catalog", "Hub", "Hub cache").
    checkpoint: CheckpointBytes | None = None
    source: str = "catalog"
    gated: bool | None = None  # the Hub's gated flag, when read from the Hub (else gated_on_hub says)
    commit: str | None = None  # the commit the Hub facts were read at

    @property
    def uses_mla(self) -> bool:
        return self.kv_lora_rank is not None

    @property
    def embedding_parameters(self) -> int:
        """Parameters in the input embedding, and again in the LM head when it is not tied."""
        return self.vocab_size * self.hidden_size


def _llama(layers: int, heads: int, hidden: int, intermediate: int, params: int) -> Architecture:
    return Architecture(layers, heads, 8, 128, hidden, intermediate, 128256, 131072, params)


def _qwen25(layers: int, heads: int, kv: int, hidden: int, intermediate: int, params: int) -> Architecture:
    return Architecture(layers, heads, kv, hidden // heads, hidden, intermediate, 152064, 32768, params)


def _qwen3(layers: int, heads: int, hidden: int, intermediate: int, params: int) -> Architecture:
    return Architecture(layers, heads, 8, 128, hidden, intermediate, 151936, 40960, params)


def _quantized(base: Architecture, method: str, linear_bytes: float, fp8: bool = False) -> Architecture:
    fields = {"quantization": method, "quantized_linear_bytes": linear_bytes, "fp8_weights": fp8}
    return Architecture(**{**base.__dict__, **fields})


# 4-bit AWQ/GPTQ with group size 128: 0.5 B per weight + a 16-bit scale and a 4-bit zero point per group.
INT4_G128_BYTES = 0.5 + 2.5 / 128

MODELS: dict[str, Architecture] = {
    # meta-llama/Llama-3.1-*/config.json; counts from the model cards (8.03B, 70.6B, 405B).
    "meta-llama/Llama-3.1-8B-Instruct": _llama(32, 32, 4096, 14336, 8_030_261_248),
    "meta-llama/Llama-3.1-70B-Instruct": _llama(80, 64, 8192, 28672, 70_553_706_496),
    "meta-llama/Llama-3.1-405B-Instruct": _llama(126, 128, 16384, 53248, 405_853_388_800),
    "meta-llama/Llama-3.3-70B-Instruct": _llama(80, 64, 8192, 28672, 70_553_706_496),
    # Qwen/Qwen2.5-*-Instruct/config.json (max_position_embeddings 32768, untied except 0.5-3B).
    "Qwen/Qwen2.5-7B-Instruct": _qwen25(28, 28, 4, 3584, 18944, 7_615_616_512),
    "Qwen/Qwen2.5-14B-Instruct": _qwen25(48, 40, 8, 5120, 13824, 14_770_033_664),
    "Qwen/Qwen2.5-32B-Instruct": _qwen25(64, 40, 8, 5120, 27648, 32_763_876_352),
    "Qwen/Qwen2.5-72B-Instruct": _qwen25(80, 64, 8, 8192, 29568, 72_706_203_648),
    # Qwen/Qwen3-*/config.json (head_dim 128 set explicitly, max_position_embeddings 40960).
    "Qwen/Qwen3-8B": _qwen3(36, 32, 4096, 12288, 8_190_735_360),
    "Qwen/Qwen3-14B": _qwen3(40, 40, 5120, 17408, 14_768_307_200),
    "Qwen/Qwen3-32B": _qwen3(64, 64, 5120, 25600, 32_762_123_264),
    "Qwen/Qwen3-0.6B": Architecture(28, 16, 8, 128, 1024, 3072, 151936, 40960, 596_049_920, tie_word_embeddings=True),
    # mistralai/Mistral-7B-Instruct-v0.3/config.json (vocab 32768 in v0.3).
    "mistralai/Mistral-7B-Instruct-v0.3": Architecture(32, 32, 8, 128, 4096, 14336, 32768, 32768, 7_248_023_552),
    # mistralai/Mixtral-8x7B-Instruct-v0.1/config.json: 8 experts, 2 per token, 46.7B total.
    "mistralai/Mixtral-8x7B-Instruct-v0.1": Architecture(
        32,
        32,
        8,
        128,
        4096,
        14336,
        32000,
        32768,
        46_702_792_704,
        num_local_experts=8,
        num_experts_per_tok=2,
    ),
    # google/gemma-2-*-it/config.json: sliding_window 4096 on every other layer, tied embeddings.
    "google/gemma-2-9b-it": Architecture(
        42,
        16,
        8,
        256,
        3584,
        14336,
        256000,
        8192,
        9_241_705_984,
        tie_word_embeddings=True,
        sliding_window=4096,
        num_sliding_window_layers=21,
    ),
    "google/gemma-2-27b-it": Architecture(
        46,
        32,
        16,
        128,
        4608,
        36864,
        256000,
        8192,
        27_227_128_320,
        tie_word_embeddings=True,
        sliding_window=4096,
        num_sliding_window_layers=23,
    ),
}

PRE_QUANTIZED: dict[str, Architecture] = {
    # hugging-quants/Meta-Llama-3.1-{8B,70B}-Instruct-AWQ-INT4: config.json quantization_config
    # {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": true} (a copy's config.json names
    # it: huggingface.co/PatronusAI/Llama-3.1-70B-Instruct-AWQ-INT4/blob/main/config.json); the 8B files
    # are 4.68 + 1.05 GB (huggingface.co/hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4/tree/f8826dd).
    "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4": _quantized(
        MODELS["meta-llama/Llama-3.1-8B-Instruct"], "awq", INT4_G128_BYTES
    ),
    "hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4": _quantized(
        MODELS["meta-llama/Llama-3.1-70B-Instruct"], "awq", INT4_G128_BYTES
    ),
    # RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic: compressed-tensors FP8 weights (per-channel scales),
    # lm_head kept 16-bit; vLLM 0.19.0 logs 33.88 GiB of weights per GPU at TP 2 (calibration row T14).
    "RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic": _quantized(
        MODELS["meta-llama/Llama-3.3-70B-Instruct"], "compressed-tensors", 1.0, fp8=True
    ),
}
MODELS.update(PRE_QUANTIZED)

# Repositories the Hub gates: a download needs a token whose account accepted the licence on the model's page
# (huggingface.co/docs/hub/models-gated); without one the Hub answers 401, with one that did not accept, 403.
# Sources: every meta-llama/ and google/gemma- repository asks for the licence on its page (the 401 "Access to
# model ... is restricted" of gated Llama and Gemma repos: sgl-project/sglang#387, ariG23498/gemma3-object-
# detection#5); mistralai/ marked its repositories gated in 2024 (huggingface/alignment-handbook#166; Mixtral's
# GatedRepoError 403 in huggingface/transformers#31367). The quantized copies (hugging-quants/, RedHatAI/) are
# public. A model outside the catalog: unknown (gated_on_hub returns None).
GATED_ON_HUB: frozenset[str] = frozenset(
    model_id for model_id in MODELS if model_id.startswith(("meta-llama/", "google/gemma-", "mistralai/"))
)


def gated_on_hub(model_id: str, arch: Architecture | None = None) -> bool | None:
    """Whether the Hub gates the model: the flag read from the Hub with `arch`, else the catalog's list; None
    for a model neither knows."""
    if arch is not None and arch.gated is not None:
        return arch.gated
    return model_id in GATED_ON_HUB if model_id in MODELS else None
