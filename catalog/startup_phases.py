"""The fixed phases of a vLLM start-up, fitted on public GPU start-ups: the seconds each takes for a stack, and from
them the shares by which the startup budget's terms split into phases (preflight/startup_phases.py).

What the phases follow, from what vLLM does:
- CUDA graphs: vLLM replays the model once per captured size, so the capture takes a time per graph and per layer
  (launches scale with the layers). V1 captures PIECEWISE graphs over every capture size and FULL graphs over the
  decode sizes (preflight/cuda_graphs.py `graphs_captured`; the 0.19.0 logs print `PIECEWISE=51 (largest=512),
  FULL=51`); V0 captured one full graph per batch size up to max_num_seqs. V0 and V1 get a coefficient each.
- Compile: Dynamo traces the whole forward (its time grows with the layers) and Inductor compiles the piecewise
  subgraphs, the identical layers hitting its in-process cache (`Store the 42-th graph` for 42 layers): a base plus
  a part per layer, fitted on V1 starts that missed the compile cache (`Compiling a graph for compile range ...
  takes`). None of the public starts hit the cache, so a hit is not modelled.
- KV cache initialisation (`init engine` less compile and graphs: the memory profile, the KV allocation, the
  warm-up) does not follow the KV cache's size in these logs (20.6 GiB: 7.96 s, 66.5 GiB: 7.08 s on the same H100):
  one constant per engine generation.
- Process start and API ready: constants (imports, the API server and engine processes; the handshake and the
  chat-template warm-up), as no feature of the stack explains them in the data.

Fitted by scripts/fit_startup_phases.py (least squares over the start-ups not held out) on
tests/data/startup-phases.csv: fifteen public start-ups with phase timings (llm-d-planner's vLLM 0.19.0 H100 logs,
vLLM and run-ai issue threads, sources per row), four held out. How well the figures predict the held-out starts:
docs/calibration.md "Start-up phases" (asserted by tests/test_startup_phases.py). Mostly 2-27B models on one H100:
the probes' defaults (60 s engine start, 120 s compile and graphs) stay above these sums on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass

ENGINES = ("V0", "V1")  # vLLM's engine generations; every release the catalog serves runs V1


@dataclass(frozen=True)
class FittedPhases:
    process_start: float  # one GPU
    process_start_per_extra_gpu: float  # each tensor/pipeline-parallel worker beyond the first (spawn, NCCL init)
    compile_base: float  # V1, a compile-cache miss
    compile_per_layer: float
    compile_unknown_layers: float  # the mean of the compile rows fitted: a model whose layers are not stated
    graph_seconds_v0: float  # per captured graph x layer
    graph_seconds_v1: float
    kv_cache_init_v0: float
    kv_cache_init_v1: float
    api_ready: float

    def seconds(self, engine: str, layers: int | None, graphs: int | None, gpus: int = 1) -> dict[str, float]:
        """Each fixed phase of a start-up of a model with `layers` (per pipeline stage) capturing `graphs`, on a pod
        of `gpus` GPUs."""
        v1 = engine == "V1"
        compile_s = self.compile_unknown_layers if layers is None else self.compile_base + self.compile_per_layer * layers
        per_graph = self.graph_seconds_v1 if v1 else self.graph_seconds_v0
        return {
            "process_start": round(self.process_start + self.process_start_per_extra_gpu * (gpus - 1), 2),
            "compile": round(compile_s, 2),
            "cuda_graphs": round(per_graph * (graphs or 0) * (layers or 0), 2),
            "kv_cache_init": self.kv_cache_init_v1 if v1 else self.kv_cache_init_v0,
            "api_ready": self.api_ready,
        }


FITTED = FittedPhases(
    process_start=19.67,
    process_start_per_extra_gpu=12.33,
    compile_base=4.1,
    compile_per_layer=0.2242,
    compile_unknown_layers=12.1,
    graph_seconds_v0=0.013393,
    graph_seconds_v1=0.000974,
    kv_cache_init_v0=4.97,
    kv_cache_init_v1=7.97,
    api_ready=2.78,
)
# The budget's terms and the phases they cover (preflight/delivery.py delivery_budget).
ENGINE_START_PHASES = ("process_start", "kv_cache_init", "api_ready")  # probes.engine_start_seconds (+ per GPU)
GRAPH_PHASES = ("compile", "cuda_graphs")  # probes.cuda_graph_capture_seconds
