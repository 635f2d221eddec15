"""The fixed phases of a vLLM start-up, fitted on public GPU start-ups: the seconds each takes for a stack, and from
them the shares by which the startup budget's terms split into phases (preflight/startup_phases.py).

What the phases follow, from what vLLM does (the log lines are quoted per row in tests/data/startup-phases.csv):
- Process start (the first log line to `Starting to load model`): imports, the API server, the engine core. A pod
  of several GPUs adds the multiprocessing executor's worker processes: they are spawned together and each imports
  vLLM and torch again and joins NCCL, so the pod pays that once (a step: 32 s at TP 2 and 34 s at TP 4 for the same
  70B against 19-21 s on one H100 for a text model that finds vLLM's model-info cache, 30-33 s for one that does not:
  `Cached model info file ... not found`, a step of its own below). The part per extra GPU (each rank's
  peer set-up) fitted negative with Llama-4-Scout's 48 s at TP 4 and was held at 0 (the fit keeps no coefficient
  below 0) until the model-info step (below) took the misses' share of the base: 0.36 s.
- Compile (`torch.compile took X s in total`, a compile-cache miss): Dynamo traces the forward once (its time grows
  with the layers, `Dynamo bytecode transform time`), then Inductor compiles the piecewise subgraphs once per
  compile range (`Compiling a graph for compile range (1, 8192) takes`), again per layer. A pod of several GPUs
  compiles two ranges: the all-reduce + RMSNorm fusion splits the range at its token threshold (0.19.0 on H100:
  `compile_ranges_endpoints` [4096, 8192] at TP 2, [128, 8192] at TP 4, [8192] at TP 1; each range ~14 s for 80
  layers). So compile = a base + a part per layer and pass, passes = 1 + the ranges.
- Compile from the cache (`Directly load the compiled graph(s) for ... from the cache, took X s`, a restart that
  finds VLLM_CACHE_ROOT): Dynamo still traces, then Inductor's artifacts load instead of compiling; both follow the
  layers, so a hit is a share of the miss (0.33-0.37 over eleven models of 24-48 layers on one GPU, rows N7-N17).
  CUDA graphs are captured again on a hit (`Graph capturing finished in 1.46 secs` on the hit, 1.54 on the miss).
- CUDA graphs (`Graph capturing finished in X secs`): vLLM replays the model once per captured size, so the capture
  takes a time per graph and per layer. V1 captures PIECEWISE graphs over every capture size and FULL graphs over
  the decode sizes (preflight/cuda_graphs.py `graphs_captured`; the 0.19.0 logs print `PIECEWISE=51 (largest=512),
  FULL=51`); V0 captured one full graph per batch size up to max_num_seqs. V0 and V1 get a coefficient each.
- KV cache initialisation (`init engine` less compile and graphs: `determine_available_memory`'s profile run, a
  dummy forward of max_num_batched_tokens tokens and a sampler run, then the KV allocation and
  `compile_or_warm_up_model`'s sampler warm-up; vllm-project/vllm
  vllm/v1/worker/gpu_worker.py@0012cf691b7e69423244d2b1405f4b6832156e19:188 `profile_run`, :231
  `initialize_kv_cache`, :257 `_dummy_sampler_run`) does not follow the KV cache's size (20.6 GiB: 7.96 s, 66.5 GiB:
  7.08 s on the same H100) nor, on the H100, the model's size (gemma-2-27b 7.96 s, gemma-2-2b 7.08 s at 8192
  tokens; a term in parameters per rank x max_num_batched_tokens fits at 0 there, docs/calibration.md): a constant
  from 0.11 on. Before 0.11 it grows with the layers on every GPU of the fit (H100 NVL 2.97 s at 24 layers, 5.62 s at
  48; most of it is the first forward through the freshly compiled pieces, between Inductor's `Compiling a graph`
  and `torch.compile takes X s in total`, 8.7 s of R3's 10.73 s), so those releases take a part per layer instead.
  Then a part per GPU beyond the first (each rank sets its peers' communication buffers up
  in the profile run, and the engine waits for the slowest: 10.5 s at TP 2, 10.8 and 11.9 s at TP 4, 15.4 s at TP 8
  against ~8 s on one GPU; a single step for any pod of several GPUs over-predicted the held-out TP 2 starts N3 and
  R24 by 41 % and 53 %).
- API ready (`init engine` to `Starting vLLM server`): the engine core's last steps before it reports `READY`
  (v1/engine/utils.py:1158 in the 0.19.0 logs), then the API server's `init_app_state`, which warms the chat
  template up (`await state.openai_serving_chat.warmup()`, vllm-project/vllm
  vllm/entrypoints/openai/api_server.py@048027fbbdb8c252560205a6159ba3288ede291e `init_app_state`; 0.19.0 logs
  `Warming up chat template processing...` at renderers/base.py:197, 0.7-3.2 s), before it logs `Starting vLLM server`
  and uvicorn its `Application startup complete`. A base, a step when the pod has several GPUs (4-5 s at TP 2-4 for
  text models against 2-3 s on one GPU), and a step for a multimodal model (below).
- A multimodal checkpoint (config.json with a `vision_config` or `audio_config`: vLLM's `is_multimodal_model`) costs
  more in three phases. Process start: the API server and the engine core each build the multi-modal processor
  (vllm-project/vllm vllm/renderers/base.py@43e62814534e8b7c9317697d336411f8f8b95a25:86, `BaseRenderer.__init__`:
  `if config.model_config.is_multimodal_model: ... mm_registry.create_processor`; gemma-3: 40-51 s against 19-21 s).
  KV cache init: the profile run also profiles the encoder (`Encoder cache will be initialized with a budget of 8192
  tokens, and profiled with 32 image items of the maximum feature size`, gpu_model_runner.py:5753 in 0.19.0). API
  ready: `Warming up multi-modal processing...` to `Multi-modal warmup completed in 5.709s` (renderers/base.py:218-231
  in 0.19.0), after the chat template's. A step each, fitted on the multimodal rows not held out.
- The GPU and the release (round 5, rows R1-R70: upb-cn/vllm-startup-profiler's L40S, A100 40 GB and H100 NVL starts
  of 0.9.2, 0.10.0 and 0.10.1.1, and Qwen3-235B-A22B at TP 8 on H100). CUDA-graph capture and KV-cache
  initialisation run on the GPU: each gets a factor per GPU family with start-ups in the fit (A100, L40S; H100 SXM and
  NVL are the base), fitted through the origin over the family's rows against the H100 prediction. Compile runs on
  the host CPU (Dynamo and Inductor): the same models compiled alike on the H100 NVL and the L40S of one host
  (Llama-3.2-3B 21.47 s and 21.17 s, Yi-9B 33.65 s and 33.60 s, rows R4/R64 and R11/R70), so it has no GPU factor.
  What a release does differs by era, so the releases before 0.11 get a factor per phase where their rows allow one:
  0.10.x (its compile 1.7 times 0.19.0's for the same layers) and the
  releases before 0.10 (0.9.2 captured the same 67 graphs on the same A100 in 24.19 s that 0.10.0 captured in 2.9 s,
  R28 and R58). Each era factor holds that era's release and hosts together (one host per era until round 7's T1, an 8x H100
  0.9.2 start, gave the releases before 0.10 a second). The A100 has no KV-cache factor: its KV-cache rows are 0.9.2
  starts, which the era's factor holds, and T2, an RTX A5000 (Ampere) with 0.21.0, faster than the H100 constant.
  A GPU with no start-up in the
  fit (H200, B200, L4, A10G, ...) keeps the H100 figures.
- A start that finds no model-info cache (round 10: `Registry inspect model class: Elapsed time 9.7-9.9 secs` in the
  DEBUG logs of L8, L9, N22, N27; 18 other 0.19.0 starts log `Loaded model info for class ... from cache` in under a
  millisecond): vLLM's registry imports the model class in a subprocess and writes
  `$VLLM_CACHE_ROOT/modelinfos/<module>-<class>.json` (vllm-project/vllm vllm/model_executor/models/registry.py
  `inspect_model_cls`; tests/data/startup-phases/README.md "Round 10"). A step in the process start, fitted on the
  rows not held out that say which; the plan's start is a first start, on an empty VLLM_CACHE_ROOT, so it takes the
  step, and a restart that finds its caches on its volume does not (preflight/delivery.py).
A model whose layers are not stated gets the mean layers of the rows fitted. Mixture-of-experts rows take no part
in the compile fit and the dense graph fit; their graphs get a coefficient of their own, about four times the dense
one (gpt-oss-20b: 166 graphs x 24 layers in 17 s; Llama-4-Scout: 51 x 48 in 14 s; the logs do not say which part
of the capture takes the longer).

Fitted by scripts/fit_startup_phases.py (least squares over the start-ups not held out) on
tests/data/startup-phases.csv: public start-ups with phase timings (llm-d-planner's vLLM 0.19.0 H100 logs at TP 1,
2 and 4, dense, MoE and multimodal, a 0.21.0 and a 0.22.1 start on an RTX 3090 Ti, vLLM and run-ai issue threads,
upb-cn/vllm-startup-profiler's 0.10.1.1 starts with and without the compile cache, an 8x H100 0.9.2 start and an
RTX A5000 0.21.0 start from issue threads (round 7); sources per row), the held-out
ones declared in tests/data/startup-phases/README.md. How well the figures predict the held-out starts:
docs/calibration.md "Start-up phases" (asserted by tests/test_startup_phases.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# The GPU families the fit holds start-ups of (catalog/gpus.py names start with them). H100 (SXM, NVL) is the base;
# A100 and L40S get factors. The rows each family's figures rest on:
FAMILY_ROWS = {"H100": "L1-L9, N1-N5, N19-N27, R62-R70, T1", "A100": "R26-R61, T2, U1-U4", "L40S": "R1-R25"}
FACTOR_FAMILIES = ("A100", "L40S")
# A GPU without start-ups of its own takes the family of its architecture (nvidia.com/gpu.family, catalog/gpus.py)
# that has some: an Ampere board (A10G, A40, an RTX 3090) the A100's factors, an Ada board (L4, L40, RTX 6000 Ada)
# the L40S's. Hopper and Blackwell boards keep the H100 figures, which are the slowest of those architectures; so
# does a GPU of an unknown architecture.
ARCHITECTURE_FAMILIES = {"ampere": "A100", "ada-lovelace": "L40S"}
# The eras of the releases before 0.11 that the fit sets apart (catalog: FittedPhases `<phase>_<era>` factors).
ERAS = ("pre-0.10", "0.10")


def own_family(gpu: str) -> str | None:
    """The family of a GPU product name (`gpu.product`, catalog/gpus.py) that the fit holds start-ups of, else None."""
    return next((family for family in FAMILY_ROWS if gpu.startswith(family)), None)


def gpu_family(gpu: str, architecture: str | None = None) -> str | None:
    """The family whose figures a GPU takes: its own, else its architecture's (ARCHITECTURE_FAMILIES), else None
    (the H100 figures)."""
    return own_family(gpu) or ARCHITECTURE_FAMILIES.get(architecture or "")


def release_era(version: tuple[int, ...] | None) -> str | None:
    """The era of a V1 release the fit sets apart: "pre-0.10", "0.10", or None from 0.11 on (the base) or unknown."""
    if version is None or version >= (0, 11):
        return None
    return "0.10" if version >= (0, 10) else "pre-0.10"


def fitted_source(gpu: str, architecture: str | None, phases: tuple[str, ...]) -> str:
    """Which start-ups the fitted figures of a GPU's `phases` (a budget term's) rest on (the report's `fixed` how):
    its family's where the family has a factor for one of them, else the H100 figures."""
    own, family = own_family(gpu), gpu_family(gpu, architecture)
    if family is not None and not FITTED.has_factor(family, phases):
        whose = f"the {family} start-ups" if own else f"no {gpu} start-up in the fit, and the {family} start-ups"
        return f"the H100 figures: {whose} {FAMILY_ROWS[family]} give these phases no factor"
    if own is not None:
        return f"{own} start-ups {FAMILY_ROWS[own]}"
    if family is not None:
        return f"no {gpu} start-up in the fit: the {family} figures of its architecture ({architecture}), {FAMILY_ROWS[family]}"
    return f"no {gpu} start-up in the fit: the H100 figures"


def factor_name(phase: str, key: str) -> str:
    """The FittedPhases field of a phase's factor for a GPU family or a release era ("cuda_graphs_a100")."""
    return f"{phase}_{key.lower().replace('-', '_').replace('.', '_')}"


def compile_passes(gpus: int) -> int:
    """Dynamo's trace plus Inductor's compile per range: the passes over every layer of a compile. A pod of several
    GPUs compiles two ranges (the all-reduce + RMSNorm fusion's split), one GPU one (0.19.0 logs,
    tests/data/startup-phases.csv L4, L5, N3 `compile_ranges_endpoints`)."""
    return 1 + (2 if gpus > 1 else 1)


@dataclass(frozen=True)
class FittedPhases:
    process_start: float  # one GPU
    process_start_multi_gpu: float  # once a pod has worker processes (TP/PP > 1): spawn, imports, NCCL init
    process_start_per_extra_gpu: float  # each worker beyond the first
    process_start_multimodal: float  # the multi-modal processor, built in the API server and the engine core
    process_start_model_info_miss: float  # the registry inspects the model class in a subprocess: no model-info cache
    compile_base: float  # V1, a compile-cache miss
    compile_per_layer_pass: float  # per layer and pass (Dynamo's trace, Inductor per compile range)
    compile_hit_fraction: float  # a compile from vLLM's compile cache, as a share of the miss
    unknown_layers: float  # the mean layers of the rows fitted: a model whose layers are not stated
    graph_seconds_v0: float  # per captured graph x layer
    graph_seconds_v1: float
    graph_seconds_v1_moe: float  # a mixture-of-experts model's
    kv_cache_init_v0: float
    kv_cache_init_v1: float
    kv_cache_init_per_layer: float  # V1 releases before 0.11: per layer (per pipeline stage), in place of the constant
    kv_cache_init_per_extra_gpu: float  # added for each GPU of the pod beyond the first
    kv_cache_init_multimodal: float  # the encoder's profile run
    api_ready: float
    api_ready_multi_gpu: float  # added when the pod has several GPUs
    api_ready_multimodal: float  # the multi-modal warm-up
    # Factors on the H100 figures (1 where the fit has no rows): per release era before 0.11, per GPU family.
    compile_pre_0_10: float
    compile_0_10: float
    cuda_graphs_pre_0_10: float
    cuda_graphs_0_10: float
    kv_cache_init_pre_0_10: float
    cuda_graphs_a100: float
    cuda_graphs_l40s: float
    kv_cache_init_l40s: float

    def has_factor(self, family: str, phases: tuple[str, ...]) -> bool:
        """Whether the GPU `family` has a factor of its own for one of `phases`."""
        return any(hasattr(self, factor_name(phase, family)) for phase in phases)

    def factor(self, phase: str, family: str | None, era: str | None) -> float:
        """What a phase takes on a GPU `family` under a release `era` as a multiple of the H100 figure of 0.11 on."""
        return math.prod(float(getattr(self, factor_name(phase, key), 1.0)) for key in (family, era) if key)

    def seconds(
        self,
        engine: str,
        layers: int | None,
        graphs: int | None,
        gpus: int = 1,
        multimodal: bool = False,
        moe: bool = False,
        family: str | None = None,
        era: str | None = None,
        model_info_miss: bool = True,
    ) -> dict[str, float]:
        """Each fixed phase of a start-up of a model with `layers` (per pipeline stage) capturing `graphs`, on a pod
        of `gpus` GPUs; `multimodal`: the checkpoint has a vision or audio encoder; `moe`: it routes to experts;
        `family`: the GPU's (gpu_family), `era`: a V1 release's before 0.11 (release_era); `model_info_miss`: the
        start finds no model-info cache (a first start: VLLM_CACHE_ROOT is empty)."""
        v1, multi, mm = engine == "V1", float(gpus > 1), float(multimodal)
        era = era if v1 else None
        stage_layers = self.unknown_layers if layers is None else layers
        per_graph = (self.graph_seconds_v1_moe if moe else self.graph_seconds_v1) if v1 else self.graph_seconds_v0
        process = self.process_start + self.process_start_multi_gpu * multi + self.process_start_multimodal * mm
        process += self.process_start_model_info_miss * model_info_miss
        kv_cache = self._kv_cache_base(v1, era, stage_layers) + self.kv_cache_init_per_extra_gpu * (gpus - 1)
        api_ready = self.api_ready + self.api_ready_multi_gpu * multi + self.api_ready_multimodal * mm
        return {
            "process_start": round(process + self.process_start_per_extra_gpu * (gpus - 1), 2),
            "compile": round(
                (self.compile_base + self.compile_per_layer_pass * stage_layers * compile_passes(gpus))
                * self.factor("compile", family, era),
                2,
            ),
            "cuda_graphs": round(per_graph * (graphs or 0) * stage_layers * self.factor("cuda_graphs", family, era), 2),
            "kv_cache_init": round(
                (kv_cache + self.kv_cache_init_multimodal * mm) * self.factor("kv_cache_init", family, era), 2
            ),
            "api_ready": round(api_ready, 2),
        }

    def _kv_cache_base(self, v1: bool, era: str | None, stage_layers: float) -> float:
        """One GPU's KV-cache initialisation before the per-GPU and multimodal parts: V0's constant, V1's from 0.11
        on, or per layer for a V1 release before 0.11."""
        if not v1:
            return self.kv_cache_init_v0
        return self.kv_cache_init_v1 if era is None else self.kv_cache_init_per_layer * stage_layers

    def compile_hit(self, compile_miss: float) -> float:
        """The compile of a start that finds its compile cache, from the miss's seconds (`compile` of `seconds`)."""
        return round(compile_miss * self.compile_hit_fraction, 2)


FITTED = FittedPhases(
    process_start=19.26,
    process_start_multi_gpu=12.38,
    process_start_per_extra_gpu=0.36,
    process_start_multimodal=16.57,
    process_start_model_info_miss=13.22,
    compile_base=9.63,
    compile_per_layer_pass=0.1297,
    compile_hit_fraction=0.378,
    unknown_layers=39.4,
    graph_seconds_v0=0.013393,
    graph_seconds_v1=0.001105,
    graph_seconds_v1_moe=0.004665,
    kv_cache_init_v0=4.97,
    kv_cache_init_v1=9.92,
    kv_cache_init_per_layer=0.1186,
    kv_cache_init_per_extra_gpu=0.7,
    kv_cache_init_multimodal=0.0,
    api_ready=3.33,
    api_ready_multi_gpu=2.0,
    api_ready_multimodal=6.67,
    compile_pre_0_10=2.265,
    compile_0_10=1.308,
    cuda_graphs_pre_0_10=5.36,
    cuda_graphs_0_10=0.95,
    kv_cache_init_pre_0_10=3.003,
    cuda_graphs_a100=1.675,
    cuda_graphs_l40s=1.203,
    kv_cache_init_l40s=2.628,
)
# What the startup probe allows over a fitted fixed term: the largest ratio of a public start-up's logged fixed phases
# to the fit's prediction (2.22, U4: Llama-3.1-8B W8A8 on an A40 with 0.26.0, whose compile took 46 s and its KV-cache
# initialisation 23 s; U1, the same GPU in bf16, 2.03; R62, Qwen3-235B-A22B at TP 8, whose compile took 111 s, 2.07,
# 1.99 before round 9; I6, V0 on an H100, 1.45; I1, 3.49 before its release era had factors, 1.47 with them), times a
# headroom of 1.25 (a host or GPU slower than any row must not crash-loop), rounded up to a half
# (scripts/fit_startup_phases.py probe_margin). The expected start stays the prediction; the probe, which restarts a
# pod that outlasts it, allows a start a quarter slower than any seen. Set terms get no margin.
PROBE_MARGIN = 3.0
# The fixed phases, in the order of a start-up; a stack scales each by its measured factor (probes.phase_factors).
FIXED_PHASES = ("process_start", "compile", "cuda_graphs", "kv_cache_init", "api_ready")
# What a measured factor may be: a ratio beyond is an excerpt or a broken start, not a host's speed.
PHASE_FACTOR_BOUNDS = (0.1, 10.0)
# The budget's terms and the phases they cover (preflight/delivery.py delivery_budget).
ENGINE_START_PHASES = ("process_start", "kv_cache_init", "api_ready")  # probes.engine_start_seconds (+ per GPU)
GRAPH_PHASES = ("compile", "cuda_graphs")  # probes.cuda_graph_capture_seconds
