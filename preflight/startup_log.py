"""Read a vLLM start-up log and set each figure vLLM logged beside the preflight's prediction.

The wordings differ by release; each pattern below names the release family that prints it (quoted from
the calibration logs in tests/data/startup-logs, which come from the rows of
tests/data/vllm-startup-memory.csv):
- V0 before PR #10511 (<= 0.6.4): "Memory profiling results: total_gpu_memory=23.58GiB ...
  peak_torch_memory=17.06GiB ... non_torch_memory=0.35GiB kv_cache_size=3.81GiB".
- V0 0.6.5 - 0.7.x: "total_gpu_memory (23.55GiB) x gpu_memory_utilization (0.90) = 21.19GiB" and "model
  weights take 14.96GiB; non_torch_memory takes 1.79GiB; PyTorch activation peak memory takes 1.26GiB; the
  rest of the memory reserved for KV Cache is 53.29GiB", "# GPU blocks: N" (later "# cuda blocks: N").
- V1: "Model loading took 14.99 GiB", "Total non KV cache memory: 17.12GiB; torch peak memory increase:
  1.89GiB; non-torch forward increase memory: 0.25GiB; weights memory: 14.99GiB", "Available KV cache
  memory: 58.11 GiB", "GPU KV cache size: 476,016 tokens", "Maximum concurrency for 16,384 tokens per
  request: 29.05x", "Estimated CUDA graph memory: 0.84 GiB total", "num_gpu_blocks is: 15269".
- Refusals: "No available memory for the cache blocks", "To serve at least one request with the models's
  max seq len (...)", "The model's max seq len (X) is larger than the maximum number of tokens that can be
  stored in KV cache (Y)", and CUDA out-of-memory errors.
Only the first occurrence counts: with tensor parallelism every rank logs, rank 0 first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from preflight.report import PreflightReport

_NUMBER = r"(-?[\d,]+(?:\.\d+)?)"
PATTERNS: dict[str, tuple[str, ...]] = {
    "version": (
        r"V1 LLM engine \(v([\w.+]+)\)",
        r"vLLM API server version ([\w.+]+)",
        r"Initializing an LLM engine \(v([\w.+]+)\)",
    ),
    "total_gpu_gib": (rf"total_gpu_memory[ =(]+{_NUMBER}\s*GiB",),
    "requested_gib": (
        rf"gpu_memory_utilization \([\d.]+\) = {_NUMBER}\s*GiB",
        rf"Requested memory: [\d.]+ \(util\), {_NUMBER} GiB",
        rf"requested memory: {_NUMBER}\s*GiB",
    ),
    "weights_gib": (
        rf"weights memory: {_NUMBER}\s*GiB",
        rf"model weights take\s+{_NUMBER}\s*GiB",
        rf"Model loading took {_NUMBER}\s*GiB",
        rf"Loading model weights took {_NUMBER}\s*GB",
    ),
    "activation_gib": (
        rf"torch peak memory increase: {_NUMBER}\s*GiB",
        rf"activation peak memory(?: takes)?\s+{_NUMBER}\s*GiB",
    ),
    "non_torch_gib": (
        rf"non-torch forward increase memory: {_NUMBER}\s*GiB",
        rf"non_torch_memory(?: takes|=|\s)\s*{_NUMBER}\s*GiB",
    ),
    "peak_torch_gib": (rf"peak_torch_memory={_NUMBER}\s*GiB",),
    "non_kv_gib": (rf"Total non KV cache memory: {_NUMBER}\s*GiB",),
    "cuda_graph_estimate_gib": (rf"Estimated CUDA graph memory: {_NUMBER}\s*GiB",),
    "kv_cache_gib": (
        rf"Available KV cache memory: {_NUMBER}\s*GiB",
        rf"reserved for KV Cache is {_NUMBER}\s*GiB",
        rf"available_kv_cache_memory\s+{_NUMBER}\s*GiB",
        rf"kv_cache_size={_NUMBER}\s*GiB",
    ),
    "num_gpu_blocks": (rf"num_gpu_blocks is: {_NUMBER}", rf"# (?:GPU|cuda) blocks: {_NUMBER}"),
    "kv_cache_tokens": (rf"GPU KV cache size: {_NUMBER} tokens",),
    "max_concurrency": (rf"Maximum concurrency for [\d,]+ tokens per request: {_NUMBER}x",),
}
REFUSALS: dict[str, str] = {
    "no-kv-memory": r"No available memory for the cache blocks",
    "max-seq-len": r"To serve at least one request with the model'?s'? max seq len|The model's max seq len \(\d+\) is "
    r"larger than the maximum number of tokens",
    "out-of-memory": r"CUDA out of memory|OutOfMemoryError",
    "free-memory": r"Free memory on device .* is less than desired GPU memory utilization",
}


@dataclass(frozen=True)
class LoggedStartup:
    """The figures one start-up log holds (None where the release or the excerpt does not print them)."""

    version: str | None = None
    total_gpu_gib: float | None = None
    requested_gib: float | None = None
    weights_gib: float | None = None
    activation_gib: float | None = None
    non_torch_gib: float | None = None
    peak_torch_gib: float | None = None  # V0 before PR #10511: weights + activation
    non_kv_gib: float | None = None
    cuda_graph_estimate_gib: float | None = None
    kv_cache_gib: float | None = None
    num_gpu_blocks: int | None = None
    kv_cache_tokens: int | None = None
    max_concurrency: float | None = None
    refusals: tuple[str, ...] = ()

    @property
    def started(self) -> bool:
        """vLLM got past the KV-cache checks (a later CUDA-graph OOM is a different failure)."""
        return not ({"no-kv-memory", "max-seq-len", "free-memory"} & set(self.refusals))


def parse_startup_log(text: str) -> LoggedStartup:
    found: dict[str, object] = {}
    for name, patterns in PATTERNS.items():
        value = _first(text, patterns)
        if value is not None:
            found[name] = value if name == "version" else _number(value, name)
    refusals = tuple(kind for kind, pattern in REFUSALS.items() if re.search(pattern, text))
    return LoggedStartup(**found, refusals=refusals)  # type: ignore[arg-type]


def _first(text: str, patterns: tuple[str, ...]) -> str | None:
    hits = [(match.start(), match.group(1)) for p in patterns if (match := re.search(p, text))]
    return min(hits)[1] if hits else None


def _number(text: str, name: str) -> float | int:
    value = float(text.replace(",", ""))
    return int(value) if name in ("num_gpu_blocks", "kv_cache_tokens") else value


@dataclass(frozen=True)
class FigureCheck:
    figure: str
    logged: float
    predicted: float
    unit: str

    @property
    def error_percent(self) -> float | None:
        return None if self.logged == 0 else (self.predicted - self.logged) / abs(self.logged) * 100


# (figure in LoggedStartup, report figure in its as_dict section, unit): the comparable pairs.
PAIRS = (
    ("total_gpu_gib", "memory_gib", "GiB"),
    ("requested_gib", "requested_gib", "GiB"),
    ("weights_gib", "weights_gib_per_gpu", "GiB"),
    ("activation_gib", "activation_gib", "GiB"),
    ("non_torch_gib", "non_torch_gib", "GiB"),
    ("cuda_graph_estimate_gib", "cuda_graph_gib", "GiB"),
    ("kv_cache_gib", "kv_cache_gib_per_gpu", "GiB"),
    ("num_gpu_blocks", "num_gpu_blocks", "blocks"),
    ("kv_cache_tokens", "kv_cache_tokens", "tokens"),
    ("max_concurrency", "max_concurrency_at_max_model_len", "x"),
)
TERMS = ("total_gpu_gib", "weights_gib", "activation_gib", "non_torch_gib", "cuda_graph_estimate_gib")


def compare(report: PreflightReport, logged: LoggedStartup) -> list[FigureCheck]:
    data = report.as_dict()  # the figures as the report prints them
    printed = data["gpu"] | data["memory"] | data["capacity"]
    checks = []
    for figure, field, unit in PAIRS:
        value = getattr(logged, figure)
        if figure == "cuda_graph_estimate_gib" and report.memory.cuda_graph_gib == 0:
            continue  # logged for information by releases that do not subtract it (0.18 - 0.19)
        if value is not None:
            checks.append(FigureCheck(figure, float(value), float(printed[field]), unit))
    return checks


def term_off(report: PreflightReport, logged: LoggedStartup) -> str | None:
    """The memory term whose prediction misses the log by the most GiB (what to fix first)."""
    misses = {check.figure: check.predicted - check.logged for check in compare(report, logged) if check.figure in TERMS}
    if not misses:
        return None
    figure, miss = max(misses.items(), key=lambda item: abs(item[1]))
    if abs(miss) < 0.05:
        return None
    direction = "over" if miss > 0 else "under"
    return f"{figure.removesuffix('_gib').replace('_', ' ')} is {direction}estimated by {abs(miss):.2f} GiB per GPU"


def render_log_check(report: PreflightReport, logged: LoggedStartup) -> str:
    lines = ["Start-up log against the preflight:", f"  {'figure':<24} {'logged':>12} {'predicted':>12} {'error':>8}"]
    for check in compare(report, logged):
        error = check.error_percent
        lines.append(
            f"  {check.figure:<24} {check.logged:>12,.2f} {check.predicted:>12,.2f} "
            f"{'' if error is None else f'{error:+.1f} %':>8}  {check.unit}"
        )
    lines.append(
        f"  verdict: vLLM {'started' if logged.started else 'refused (' + ', '.join(logged.refusals) + ')'}; "
        f"preflight said {'FITS' if report.verdict.fits else 'BLOCKED'}"
        f"{'' if logged.started == report.verdict.fits else ' -- they disagree'}"
    )
    off = term_off(report, logged)
    if off:
        lines.append(f"  largest miss: {off}")
    return "\n".join(lines)
