"""GPU memory the way vLLM accounts it: weights, activation peak, non-torch and CUDA-graph memory, KV budget.

Per GPU, following vLLM's start-up profiling (docs/sources.md §M0-§M5):
    requested = total_gpu_memory x gpu_memory_utilization
    kv_cache  = requested - weights - activation_peak - non_torch [- cuda_graph_estimate on >= 0.21]
The activation and non-torch terms are measured by vLLM at start-up; here they are modelled per memory era
with coefficients fitted to public start-up logs (tests/data/vllm-startup-memory.csv, see test_calibration).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog.models import Architecture
from catalog.vllm_versions import MemoryEra
from preflight.lora import LoraShape, lora_gib_per_gpu

GIB = 1024**3

# Bytes per parameter for each --dtype; "auto" keeps the checkpoint's 16-bit type. vLLM also casts a
# float32 checkpoint down to 16 bits under "auto" (config/model.py _get_and_verify_dtype).
DTYPE_BYTES = {"auto": 2, "half": 2, "float16": 2, "bfloat16": 2, "float": 4, "float32": 4}

# Linear-layer bytes per parameter under --quantization; embeddings and LM head stay 16-bit.
# 4-bit methods carry one 16-bit scale (+ 4-bit zero point) per group of 128 weights: 0.5 + 2.5/128.
QUANTIZED_LINEAR_BYTES = {
    "fp8": 1.0,
    "awq": 0.52,
    "awq_marlin": 0.52,
    "gptq": 0.52,
    "gptq_marlin": 0.52,
    "bitsandbytes": 0.5 + 4 / 64,  # NF4 with one fp32 absmax per 64 weights
}

# The profiling run is two phases (v1/worker/gpu_model_runner.py profile_run, 0.11.0:3391-3401): a forward
# pass of max_num_batched_tokens, whose intermediates are freed when it returns, then the sampler warm-up
# (_dummy_sampler_run) on max_num_seqs rows of full-vocabulary logits. The torch peak is the larger phase,
# not their sum; the sampler phase is the same on every TP rank (logits are gathered), the forward phase
# shrinks with TP (each rank holds intermediate_size / TP of the MLP). The forward pass's hidden states
# (max_num_batched_tokens x hidden_size, 16-bit) stay alive through the sampler phase (`del hidden_states,
# output` only after it), which is why a 70B model's peak is ~0.07 GiB above an 8B model's (T14 vs R08).
# Sampler bytes per (sequence x vocabulary entry): logits plus the sort/softmax copies of top-k/top-p,
# fitted per era on sampler-bound rows after the hidden states: V1-early 38.35 (R14, R21, R22: 5.64, 4.76,
# 5.56 GiB at 1024 seqs), V1 14.88 (R01, R03, R15: 1.89, 2.21, 2.23 GiB), V0 39.2 (R37: 1.26 GiB at 256).
SAMPLER_BYTES = {
    MemoryEra.V0_LEGACY: 39.2,
    MemoryEra.V0: 39.2,
    MemoryEra.V1_EARLY: 38.35,
    MemoryEra.V1: 14.88,
    MemoryEra.V1_CUDAGRAPH: 14.88,
}
# Forward-phase bytes per (batched token x MLP width per rank): the gate/up output (2 x I) and the activated
# half (I) in 16 bits plus a partial buffer, ~4 x I x 2 B. Reproduces R28/R29 (V0, 20k/29k tokens).
MLP_ACTIVATION_BYTES = 8.0

# Non-torch memory per GPU (CUDA context, NCCL and custom all-reduce buffers), in GiB: (TP 1, TP 2, TP >= 4).
# R28 (v0.6.4) 0.35; R37 (v0.6.5) 1.79 and PR #10511 3.58 at TP 2; v0.16 0.13; v0.19 0.25 at TP 1,
# 2.07-2.10 at TP 2 (R08, R10, T14, T16, T17) and 2.13-2.21 at TP 4 (R09, R11, T15, T18).
# V1-early (0.9.2 - 0.16): init_device takes the baseline snapshot AFTER init_worker_distributed_environment
# "so NCCL buffers are allocated before we measure" (0.11.0 v1/worker/gpu_worker.py:165-182, 0.16.0
# :228-251), so what vLLM subtracts at TP > 1 is only what the profile run allocates: the TP 1 figure, as
# issue 12's 0.9-0.16 TP 2 start-ups show (non-KV ~2 GiB below the 2.13 taken before). The snapshot order is
# unchanged in 0.30.0 (:432-451): the ~2.1 GiB of 0.17+ is allocated during the profile run there.
NON_TORCH_GIB = {
    MemoryEra.V0_LEGACY: (0.35, 3.58, 3.58),
    MemoryEra.V0: (1.79, 3.58, 3.58),
    MemoryEra.V1_EARLY: (0.13, 0.13, 0.13),
    MemoryEra.V1: (0.25, 2.08, 2.17),
    MemoryEra.V1_CUDAGRAPH: (0.25, 2.08, 2.17),
}

# CUDA-graph pool estimate subtracted from the KV budget from v0.21 (PR #30515): anchored on the
# "Estimated CUDA graph memory: 0.84 GiB total" of R01 (Llama-3.1-8B, 32 layers) and scaled by layers.
# The 0.19 logs print the estimate without subtracting it ("Estimated CUDA graph memory: X GiB total"):
# R01 0.84 (32 layers), T17 0.82 (32), T18 1.09 (48), T14 1.82 / T15 1.70 / T16 1.63 (80, TP 2/4/2).
# A fixed part plus a per-layer part fits them within 0.1 GiB: 0.237 + 0.01854 x layers on this stage.
CUDA_GRAPH_GIB_FIXED = 0.237
CUDA_GRAPH_GIB_PER_LAYER = 0.01854
CUDA_GRAPH_GIB_BOUNDS = (0.5, 2.5)  # the pool sizes seen in logs (docs/sources.md §M5.4)


@dataclass(frozen=True)
class MemoryInputs:
    """Everything the accounting depends on, resolved (no defaults left to vLLM)."""

    arch: Architecture
    era: MemoryEra
    version: tuple[int, int, int]
    gpu_memory_gib: float
    gpu_memory_utilization: float
    tensor_parallel_size: int
    pipeline_parallel_size: int
    max_model_len: int
    max_num_seqs: int
    max_num_batched_tokens: int
    block_size: int
    dtype: str
    quantization: str | None
    kv_cache_dtype: str
    enforce_eager: bool
    draft: Architecture | None = None  # speculative-decoding draft model, if any
    draft_tensor_parallel_size: int = 1
    lora: LoraShape | None = None  # --max-loras x --max-lora-rank buffers, with LoRA adapters


@dataclass(frozen=True)
class MemoryEstimate:
    requested_gib: float
    weights_gib_per_gpu: float
    draft_gib_per_gpu: float
    activation_gib: float
    non_torch_gib: float
    cuda_graph_gib: float
    kv_cache_gib_per_gpu: float  # may be negative: nothing left for the cache
    per_token_kv_bytes: int  # this GPU's layers, draft included
    lora_gib_per_gpu: float = 0.0  # LoRA buffers, allocated with the weights (preflight/lora.py)
    lora: LoraShape | None = None  # what they are sized for; None without adapters

    @property
    def loaded_gib_per_gpu(self) -> float:
        """What vLLM's `Model loading took` counts: the weights, a draft model's and the LoRA buffers."""
        return self.weights_gib_per_gpu + self.draft_gib_per_gpu + self.lora_gib_per_gpu


def linear_bytes(arch: Architecture, dtype: str, quantization: str | None) -> float:
    """Bytes of one linear-layer weight under `quantization` (the runtime method, see preflight.quantization):
    the checkpoint's own figure when it is the checkpoint's method, else the method's, else the dtype's."""
    if quantization is None:
        return DTYPE_BYTES[dtype]
    if (
        arch.quantized_linear_bytes is not None
        and arch.quantization is not None
        and (quantization.split("_")[0] == arch.quantization.split("_")[0])
    ):
        return arch.quantized_linear_bytes
    return QUANTIZED_LINEAR_BYTES.get(quantization, arch.quantized_linear_bytes or 1.0)


def weight_bytes(arch: Architecture, dtype: str, quantization: str | None) -> tuple[float, float]:
    """(linear-layer bytes, bytes of one embedding-sized matrix) for the whole model."""
    dense_bytes = DTYPE_BYTES[dtype]
    embedding = arch.embedding_parameters
    heads = 1 if arch.tie_word_embeddings else 2
    linear_params = max(arch.num_parameters - embedding * heads, 0)
    return linear_params * linear_bytes(arch, dtype, quantization), embedding * dense_bytes


def weights_on_disk_gib(arch: Architecture) -> float:
    """Checkpoint size: what the cache volume holds, what is downloaded and read at start-up. Always the
    checkpoint's storage (Architecture.quantization or torch_dtype), whatever vLLM quantizes it to at load."""
    stored = arch.quantization
    linear, embedding = weight_bytes(arch, "auto" if stored else arch.torch_dtype, stored)
    heads = 1 if arch.tie_word_embeddings else 2
    return (linear + embedding * heads) / GIB


def weights_gib_per_gpu(arch: Architecture, dtype: str, quantization: str | None, tp: int, pp: int) -> float:
    """The largest stage's weights on one GPU. TP splits every matrix (vocabulary too, VocabParallelEmbedding);
    PP gives the embedding to the first stage and the LM head to the last (a tied head is copied there); with
    layers that do not divide evenly, the largest stage holds ceil(layers / pp) of them (pp_utils.get_pp_indices)."""
    linear, embedding = weight_bytes(arch, dtype, quantization)
    if pp == 1:
        heads = 1 if arch.tie_word_embeddings else 2
        return (linear + embedding * heads) / tp / GIB
    stage_share = layers_per_stage(arch.num_hidden_layers, pp) / arch.num_hidden_layers
    return (linear * stage_share + embedding) / tp / GIB


def kv_bytes_per_element(dtype: str, kv_cache_dtype: str) -> int:
    """--kv-cache-dtype auto follows the model dtype; fp8 variants store one byte (kv_cache_interface.py)."""
    return 1 if kv_cache_dtype.startswith("fp8") else DTYPE_BYTES[dtype]


def kv_bytes_per_token_per_layer(arch: Architecture, tp: int, element_bytes: int) -> int:
    """One layer's KV bytes per token on one GPU (vLLM kv_cache_interface page size / block_size)."""
    if arch.uses_mla:  # one latent "head", copied on every TP rank; no separate K and V
        return ((arch.kv_lora_rank or 0) + (arch.qk_rope_head_dim or 0)) * element_bytes
    heads_per_rank = max(1, arch.num_key_value_heads // tp)  # ModelConfig.get_num_kv_heads
    return 2 * heads_per_rank * arch.head_dim * element_bytes


def layers_per_stage(num_layers: int, pp: int) -> int:
    return math.ceil(num_layers / pp)


def activation_gib(inputs: MemoryInputs) -> float:
    """Peak of the profiling run: the larger of the forward phase (MLP intermediates of the batched tokens on
    this rank) and the sampler warm-up (max_num_seqs rows of full-vocabulary logits)."""
    arch = inputs.arch
    experts = arch.num_experts_per_tok or 1
    per_rank = arch.intermediate_size / inputs.tensor_parallel_size
    forward = inputs.max_num_batched_tokens * per_rank * experts * MLP_ACTIVATION_BYTES
    hidden_states = inputs.max_num_batched_tokens * arch.hidden_size * 2
    sampler = hidden_states + inputs.max_num_seqs * arch.vocab_size * SAMPLER_BYTES[inputs.era]
    return max(forward, sampler) / GIB


def non_torch_gib(era: MemoryEra, tp: int) -> float:
    single, two, four = NON_TORCH_GIB[era]
    return single if tp == 1 else two if tp == 2 else four


def cuda_graph_gib(inputs: MemoryInputs) -> float:
    if inputs.era is not MemoryEra.V1_CUDAGRAPH or inputs.enforce_eager:
        return 0.0
    layers = layers_per_stage(inputs.arch.num_hidden_layers, inputs.pipeline_parallel_size)
    low, high = CUDA_GRAPH_GIB_BOUNDS
    return min(max(CUDA_GRAPH_GIB_FIXED + layers * CUDA_GRAPH_GIB_PER_LAYER, low), high)


def estimate_memory(inputs: MemoryInputs) -> MemoryEstimate:
    tp, pp = inputs.tensor_parallel_size, inputs.pipeline_parallel_size
    requested = inputs.gpu_memory_gib * inputs.gpu_memory_utilization
    weights = weights_gib_per_gpu(inputs.arch, inputs.dtype, inputs.quantization, tp, pp)
    draft = _draft_weights_gib(inputs)
    activation = activation_gib(inputs)
    non_torch = non_torch_gib(inputs.era, tp)
    graphs = cuda_graph_gib(inputs)
    lora = _lora_gib(inputs)
    kv = requested - weights - draft - lora - activation - non_torch - graphs
    return MemoryEstimate(
        requested, weights, draft, activation, non_torch, graphs, kv, per_token_kv_bytes(inputs), lora, inputs.lora
    )


def _lora_gib(inputs: MemoryInputs) -> float:
    stage_layers = layers_per_stage(inputs.arch.num_hidden_layers, inputs.pipeline_parallel_size)
    return lora_gib_per_gpu(inputs.arch, inputs.lora, inputs.tensor_parallel_size, stage_layers, DTYPE_BYTES[inputs.dtype])


def _draft_weights_gib(inputs: MemoryInputs) -> float:
    if inputs.draft is None:
        return 0.0
    return weights_gib_per_gpu(inputs.draft, inputs.dtype, None, inputs.draft_tensor_parallel_size, 1)


def per_token_kv_bytes(inputs: MemoryInputs) -> int:
    """KV bytes per token on one GPU: this stage's layers, plus the draft model's layers."""
    element = kv_bytes_per_element(inputs.dtype, inputs.kv_cache_dtype)
    stage_layers = layers_per_stage(inputs.arch.num_hidden_layers, inputs.pipeline_parallel_size)
    target = stage_layers * kv_bytes_per_token_per_layer(inputs.arch, inputs.tensor_parallel_size, element)
    return target + draft_kv_bytes_per_token(inputs)


def draft_kv_bytes_per_token(inputs: MemoryInputs) -> int:
    if inputs.draft is None:
        return 0
    element = kv_bytes_per_element(inputs.dtype, inputs.kv_cache_dtype)
    per_layer = kv_bytes_per_token_per_layer(inputs.draft, inputs.draft_tensor_parallel_size, element)
    return inputs.draft.num_hidden_layers * per_layer
