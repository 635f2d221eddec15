"""The fixed phases of a vLLM start-up, fitted on public GPU start-ups: the seconds each takes for a stack, and from
them the shares by which the startup budget's terms split into phases (preflight/startup_phases.py).

What the phases follow, from what vLLM does (the log lines are quoted per row in tests/data/startup-phases.csv):
- Process start (the first log line to `Starting to load model`): imports, the API server, the engine core. A pod
  of several GPUs adds the multiprocessing executor's worker processes: they are spawned together and each imports
  vLLM and torch again and joins NCCL, so the pod pays that once (a step: 18-29 s on one H100, 32 s at TP 2 and 34 s
  at TP 4 for the same 70B) plus a small part per extra GPU (each rank's peer set-up).
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
- KV cache initialisation (`init engine` less compile and graphs: the memory profile, the CUDA-graph memory
  profile, the KV allocation, the warm-up) does not follow the KV cache's size (20.6 GiB: 7.96 s, 66.5 GiB: 7.08 s
  on the same H100): a constant per engine generation, plus a step when the pod has several GPUs (every rank
  profiles and the engine waits for the slowest; 10.5 and 10.8 s at TP 2 and 4 against ~8 s on one GPU).
- API ready (`init engine` to `Starting vLLM server`): the handshake and the chat-template warm-up, a constant;
  no feature the model sees explains the rest (a multimodal warm-up adds ~3 s, not in its inputs).
A model whose layers are not stated gets the mean layers of the rows fitted. Mixture-of-experts rows take no part
in the compile and graph fits (no expert term): gpt-oss-20b captured 166 graphs x 24 layers in 17 s, about four
times the dense rate.

Fitted by scripts/fit_startup_phases.py (least squares over the start-ups not held out) on
tests/data/startup-phases.csv: public start-ups with phase timings (llm-d-planner's vLLM 0.19.0 H100 logs at TP 1,
2 and 4, a 0.21.0 and a 0.22.1 start on an RTX 3090 Ti, vLLM and run-ai issue threads, upb-cn/vllm-startup-profiler's
0.10.1.1 starts with and without the compile cache; sources per row), the
held-out ones declared in tests/data/startup-phases/README.md. How well the figures predict the held-out starts:
docs/calibration.md "Start-up phases" (asserted by tests/test_startup_phases.py).
"""

from __future__ import annotations

from dataclasses import dataclass


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
    compile_base: float  # V1, a compile-cache miss
    compile_per_layer_pass: float  # per layer and pass (Dynamo's trace, Inductor per compile range)
    compile_hit_fraction: float  # a compile from vLLM's compile cache, as a share of the miss
    unknown_layers: float  # the mean layers of the rows fitted: a model whose layers are not stated
    graph_seconds_v0: float  # per captured graph x layer
    graph_seconds_v1: float
    kv_cache_init_v0: float
    kv_cache_init_v1: float
    kv_cache_init_multi_gpu: float  # added when the pod has several GPUs
    api_ready: float

    def seconds(self, engine: str, layers: int | None, graphs: int | None, gpus: int = 1) -> dict[str, float]:
        """Each fixed phase of a start-up of a model with `layers` (per pipeline stage) capturing `graphs`, on a pod
        of `gpus` GPUs."""
        v1, multi = engine == "V1", gpus > 1
        stage_layers = self.unknown_layers if layers is None else layers
        per_graph = self.graph_seconds_v1 if v1 else self.graph_seconds_v0
        process = self.process_start + (self.process_start_multi_gpu if multi else 0.0)
        kv_cache = (self.kv_cache_init_v1 if v1 else self.kv_cache_init_v0) + (self.kv_cache_init_multi_gpu if multi else 0.0)
        return {
            "process_start": round(process + self.process_start_per_extra_gpu * (gpus - 1), 2),
            "compile": round(self.compile_base + self.compile_per_layer_pass * stage_layers * compile_passes(gpus), 2),
            "cuda_graphs": round(per_graph * (graphs or 0) * stage_layers, 2),
            "kv_cache_init": round(kv_cache, 2),
            "api_ready": self.api_ready,
        }

    def compile_hit(self, compile_miss: float) -> float:
        """The compile of a start that finds its compile cache, from the miss's seconds (`compile` of `seconds`)."""
        return round(compile_miss * self.compile_hit_fraction, 2)


FITTED = FittedPhases(
    process_start=21.2,
    process_start_multi_gpu=9.8,
    process_start_per_extra_gpu=1.0,
    compile_base=0.4,
    compile_per_layer_pass=0.1712,
    compile_hit_fraction=0.355,
    unknown_layers=43.8,
    graph_seconds_v0=0.013393,
    graph_seconds_v1=0.000977,
    kv_cache_init_v0=4.97,
    kv_cache_init_v1=8.23,
    kv_cache_init_multi_gpu=2.38,
    api_ready=3.15,
)
# What the startup probe allows over a fitted fixed term: the largest ratio of a public start-up's logged fixed phases
# to the fit's prediction (3.43, I1: a 131,072-token start of 2025-06; gpt-oss-20b's MoE graphs 3.12; an RTX 3090 Ti
# 1.96), rounded up to a half (scripts/fit_startup_phases.py probe_margin). The expected start stays the prediction;
# the probe, which restarts a pod that outlasts it, allows a start as slow as any seen. Set terms get no margin.
PROBE_MARGIN = 3.5
# The budget's terms and the phases they cover (preflight/delivery.py delivery_budget).
ENGINE_START_PHASES = ("process_start", "kv_cache_init", "api_ready")  # probes.engine_start_seconds (+ per GPU)
GRAPH_PHASES = ("compile", "cuda_graphs")  # probes.cuda_graph_capture_seconds
