"""GPU memory the way vLLM accounts it: weights, activation peak, non-torch and CUDA-graph memory, KV budget.

Per GPU, following vLLM's start-up profiling (docs/sources.md §M0-§M5):
    requested = total_gpu_memory x gpu_memory_utilization
    kv_cache  = requested - weights - activation_peak - non_torch [- cuda_graph_estimate on >= 0.20]
The activation and non-torch terms are measured by vLLM at start-up; here they are modelled per memory era
with coefficients fitted to public start-up logs (tests/data/vllm-startup-memory.csv, see test_calibration).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog.models import Architecture
from catalog.vllm_versions import MemoryEra
from preflight.checkpoint import largest_stage_bytes
from preflight.cuda_graphs import cuda_graph_estimate_gib
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
# With FlashInfer's top-k/top-p kernel (the release default, ReleaseTable.memory flashinfer_sampler_default read
# from the wheel; VLLM_USE_FLASHINFER_SAMPLER in vllm.extra_env overrides it) the warm-up never sorts: the dummy
# run sets both top-k and top-p (vllm 0.32.0 v1/worker/gpu_model_runner.py:5951-5952), so flashinfer_sample
# (v1/sample/ops/topk_topp_sampler.py:613) calls top_k_top_p_sampling_from_logits, which masks the fp32 logits
# (v1/sample/sampler.py:97) into a copy and softmaxes it (flashinfer-python 0.7.2 sampling.py:1795-1796):
# 2 B model-dtype logits + 4 B fp32 logits + 4 B masked copy + 4 B probabilities. The PyTorch path of the same
# releases adds the fp32 probabilities and the exponential noise (topk_topp_sampler.py:280, :565), fitted at
# 14.88 above. In v1-early the measured figure is the same whichever sampler ran (0.11.0 defaulted to FlashInfer,
# R21/R22; 0.16.0 to PyTorch, R14; all within 0.1 GiB of 38.35), so there FlashInfer changes nothing.
FLASHINFER_SAMPLER_BYTES = 14.0
FLASHINFER_SAMPLER_ERAS = frozenset({MemoryEra.V1, MemoryEra.V1_CUDAGRAPH})
# Forward-phase bytes per (batched token x MLP width per rank): the gate/up output (2 x I) and the activated
# half (I) in 16 bits plus a partial buffer, ~4 x I x 2 B. Reproduces R28/R29 (V0, 20k/29k tokens).
MLP_ACTIVATION_BYTES = 8.0
# MoE forward phase beyond the experts' workspace (router logits, the layer's input, residual and output, the
# attention projections of the same tokens), per token x hidden_size: fitted on the one forward-bound MoE row,
# T17 (Mixtral-8x7B TP 2, 1.21 GiB logged where the workspace alone is 0.66 GiB). The old model charged
# MLP_ACTIVATION_BYTES x top-k x intermediate (0.88 GiB there): KV over-predicted, the unsafe direction. With
# the workspace held through the sampler warm-up, the sampler-bound MoE row C05 (Qwen1.5-MoE, 2.47 GiB logged)
# comes out at 2.48, where the sampler phase alone gives 2.19.
MOE_LAYER_BYTES = 17.72

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
# The 2.08 / 2.17 GiB of 0.17+ were measured on NVSwitch H100s only, where every TP rank reaches every other over
# NVLink. Without that (PCIe cards, bridged pairs beyond two, a TP group across nodes) vLLM's NVLink paths are
# off: custom all-reduce is "disabled because it's not supported on more than two PCIe-only GPUs" (vllm 0.32.0
# distributed/device_communicators/custom_all_reduce.py:204 same node, :270-276; its own buffers are 8 MiB,
# :141 and :319) and the symmetric-memory all-reduce is a multimem/NVLink path (symm_mem.py:137-152). What
# remains is the TP-1 figure plus NCCL's PCIe buffers: an L40S TP 4 start-up logs "0.21 GiB for non-torch
# memory" (row C04, 0.10.2) and an 8-card PCIe TP 8 start-up left 0.83 GiB for activation, non-torch and graphs
# together (row T08, 0.28.0; docs/calibration.md), so those eras charge the TP-1 figure there.
NVLINK_ERAS = frozenset({MemoryEra.V1, MemoryEra.V1_CUDAGRAPH})

# CUDA-graph pool estimate subtracted from the KV budget from v0.21 (PR #30515), computed from the capture sizes
# (preflight/cuda_graphs.py). The 0.19 logs print it without subtracting it ("Estimated CUDA graph memory: X GiB
# total"): R01 0.84, T14 1.82, T15 1.70, T16 1.63, T17 0.82 (docs/calibration.md).
# Releases that do not subtract the estimate still capture the graphs, after the KV cache has taken
# requested - non-KV memory: the pool lands outside gpu_memory_utilization ("increase --gpu-memory-utilization
# from 0.9500 to 0.9606 to maintain the same effective KV cache size", vllm 0.19.0 v1/worker/gpu_worker.py:470,
# row R01), and a GPU without that much left outside the budget runs out of memory after profiling.
GRAPHS_AFTER_PROFILING_ERAS = frozenset({MemoryEra.V1_EARLY, MemoryEra.V1})


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
    fully_connected: bool  # every GPU of the TP group one NVLink hop from the others (GpuProduct.fully_connected)
    flashinfer_sampler: bool  # vLLM samples with FlashInfer's top-k/top-p kernel (release default or extra_env)
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
    after_profiling_gib: float  # allocated after the KV cache, outside the budget (the unsubtracted graph pool)
    kv_cache_gib_per_gpu: float  # may be negative: nothing left for the cache
    per_token_kv_bytes: int  # this GPU's layers, draft included
    sampler: str  # "flashinfer" or "pytorch": the top-k/top-p path whose warm-up the activation peak holds
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


def loads_as_stored(arch: Architecture, dtype: str, quantization: str | None) -> bool:
    """Whether vLLM keeps the checkpoint's own bytes: its method (awq and awq_marlin alike), in a width the
    --dtype keeps (a float32 checkpoint under "auto" is cast to 16 bits)."""
    same_method = (quantization or "").split("_")[0] == (arch.quantization or "").split("_")[0]
    width = DTYPE_BYTES["float32" if arch.torch_dtype == "float32" else "auto"]
    return same_method and (arch.quantization is not None or DTYPE_BYTES[dtype] == width)


def weights_on_disk_gib(arch: Architecture) -> float:
    """Checkpoint size: what the cache volume holds, what is downloaded and read at start-up. Always the
    checkpoint's storage (Architecture.quantization or torch_dtype), whatever vLLM quantizes it to at load;
    exact when its safetensors headers were read."""
    if arch.checkpoint is not None:
        return arch.checkpoint.total_bytes / GIB
    stored = arch.quantization
    linear, embedding = weight_bytes(arch, "auto" if stored else arch.torch_dtype, stored)
    heads = 1 if arch.tie_word_embeddings else 2
    return (linear + embedding * heads) / GIB


def weights_gib_per_gpu(arch: Architecture, dtype: str, quantization: str | None, tp: int, pp: int) -> float:
    """The largest stage's weights on one GPU. TP splits every matrix (vocabulary too, VocabParallelEmbedding);
    PP gives the embedding to the first stage and the LM head to the last (a tied head is copied there); with
    layers that do not divide evenly, the largest stage holds ceil(layers / pp) of them (pp_utils.get_pp_indices)."""
    if arch.checkpoint is not None and loads_as_stored(arch, dtype, quantization):
        tied = arch.embedding_parameters * DTYPE_BYTES["auto"] if arch.tie_word_embeddings else 0
        return largest_stage_bytes(arch.checkpoint, tp, pp, tied) / GIB
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
    this rank) and the sampler warm-up (max_num_seqs rows of full-vocabulary logits). A MoE model's fused-experts
    workspace is one persistent buffer grown to the largest batch and kept (vllm 0.32.0 v1/worker/workspace.py:
    49-53, :209; "locks a process-wide high-water mark", fused_moe/modular_kernel.py:1119-1121), so it is still
    held during the sampler warm-up: it adds to both phases."""
    hidden_states = inputs.max_num_batched_tokens * inputs.arch.hidden_size * 2
    sampler = hidden_states + inputs.max_num_seqs * inputs.arch.vocab_size * sampler_bytes(inputs)
    return (moe_workspace(inputs) + max(forward_bytes(inputs), sampler)) / GIB


def forward_bytes(inputs: MemoryInputs) -> float:
    """The forward phase's peak on this rank beyond a MoE workspace: the MLP intermediates of a dense model, or
    the rest of a MoE layer (MOE_LAYER_BYTES)."""
    arch, tokens = inputs.arch, inputs.max_num_batched_tokens
    if arch.num_experts_per_tok is None:
        return tokens * arch.intermediate_size / inputs.tensor_parallel_size * MLP_ACTIVATION_BYTES
    return tokens * arch.hidden_size * MOE_LAYER_BYTES


def moe_workspace(inputs: MemoryInputs) -> float:
    arch = inputs.arch
    if arch.num_experts_per_tok is None:
        return 0.0
    per_rank = arch.intermediate_size / inputs.tensor_parallel_size
    return inputs.max_num_batched_tokens * moe_workspace_bytes(arch, per_rank)


def moe_workspace_bytes(arch: Architecture, per_rank: float) -> float:
    """Bytes per token of the Triton fused-experts workspace: workspace13 of (topk, max(N / 2, K)) and workspace2
    of (topk, max(N, K)) in the activation dtype, N = 2 x intermediate per rank, K = hidden (vllm 0.33.0
    model_executor/layers/fused_moe/experts/triton_moe.py:251-254, allocated together by modular_kernel.py:1207)."""
    topk, hidden = arch.num_experts_per_tok or 1, arch.hidden_size
    return topk * (max(per_rank, hidden) + max(2 * per_rank, hidden)) * 2


def sampler_bytes(inputs: MemoryInputs) -> float:
    if inputs.flashinfer_sampler and inputs.era in FLASHINFER_SAMPLER_ERAS:
        return FLASHINFER_SAMPLER_BYTES
    return SAMPLER_BYTES[inputs.era]


def non_torch_gib(era: MemoryEra, tp: int, fully_connected: bool) -> float:
    single, two, four = NON_TORCH_GIB[era]
    if tp == 1 or (era in NVLINK_ERAS and not fully_connected):
        return single
    return two if tp == 2 else four


def graph_pool_gib(inputs: MemoryInputs) -> float:
    """vLLM's estimate of the CUDA-graph pool (0 under enforce_eager), whether or not the release subtracts it."""
    if inputs.enforce_eager:
        return 0.0
    layers = layers_per_stage(inputs.arch.num_hidden_layers, inputs.pipeline_parallel_size)
    tp = inputs.tensor_parallel_size
    return cuda_graph_estimate_gib(inputs.arch, tp, layers, inputs.max_num_seqs, inputs.max_num_batched_tokens)


def cuda_graph_gib(inputs: MemoryInputs) -> float:
    return graph_pool_gib(inputs) if inputs.era is MemoryEra.V1_CUDAGRAPH else 0.0


def after_profiling_gib(inputs: MemoryInputs) -> float:
    return graph_pool_gib(inputs) if inputs.era in GRAPHS_AFTER_PROFILING_ERAS else 0.0


def estimate_memory(inputs: MemoryInputs) -> MemoryEstimate:
    tp, pp = inputs.tensor_parallel_size, inputs.pipeline_parallel_size
    requested = inputs.gpu_memory_gib * inputs.gpu_memory_utilization
    weights = weights_gib_per_gpu(inputs.arch, inputs.dtype, inputs.quantization, tp, pp)
    draft = _draft_weights_gib(inputs)
    activation = activation_gib(inputs)
    non_torch = non_torch_gib(inputs.era, tp, inputs.fully_connected)
    graphs = cuda_graph_gib(inputs)
    lora = _lora_gib(inputs)
    kv = requested - weights - draft - lora - activation - non_torch - graphs
    after = after_profiling_gib(inputs)
    sampler = "flashinfer" if inputs.flashinfer_sampler else "pytorch"
    per_token = per_token_kv_bytes(inputs)
    return MemoryEstimate(
        requested, weights, draft, activation, non_torch, graphs, after, kv, per_token, sampler, lora, inputs.lora
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
