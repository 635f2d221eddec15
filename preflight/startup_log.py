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
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from preflight.report import PreflightReport
from reading.numbers import NumberError
from reading.numbers import figure as parse_figure

MAX_LOG_BYTES = 16 * 1024 * 1024  # the figures are in the first lines a server prints
# Each pattern is matched only at an occurrence of its literal start, on at most this many characters from
# there (re's match with endpos): the longest line it reads is ~150 characters, and a 2 MiB line costs each
# pattern no more than one pass per occurrence of its start.
MATCH_WINDOW = 512
_NUMBER = r"(-?[0-9][0-9,]*(?:\.[0-9]+)?)"
_VERSION = r"([\w.+]{1,64})"
PATTERNS: dict[str, tuple[str, ...]] = {
    "version": (
        rf"V1 LLM engine \(v{_VERSION}\)",
        rf"vLLM API server version {_VERSION}",
        rf"Initializing an LLM engine \(v{_VERSION}\)",
    ),
    # V0 and V1 both print the model first: "... LLM engine (v0.6.3) with config: model='org/name', ..."
    "model": (r"LLM engine \(v[\w.+]{1,64}\) with config: model=['\"]([^'\"\n]{1,400})['\"]",),
    "total_gpu_gib": (rf"total_gpu_memory[ =(]{{1,8}}{_NUMBER}\s*GiB",),
    "requested_gib": (
        rf"gpu_memory_utilization \([0-9.]+\) = {_NUMBER}\s*GiB",
        rf"Requested memory: [0-9.]+ \(util\), {_NUMBER} GiB",
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
    "num_gpu_blocks": (rf"num_gpu_blocks is: {_NUMBER}", rf"# GPU blocks: {_NUMBER}", rf"# cuda blocks: {_NUMBER}"),
    "kv_cache_tokens": (rf"GPU KV cache size: {_NUMBER} tokens",),
    "max_concurrency": (rf"Maximum concurrency for [0-9,]+ tokens per request: {_NUMBER}x",),
}
REFUSALS: dict[str, tuple[str, ...]] = {
    "no-kv-memory": (r"No available memory for the cache blocks",),
    "max-seq-len": (
        r"To serve at least one request with the model'?s'? max seq len",
        r"The model's max seq len \([0-9]+\) is larger than the maximum number of tokens",
    ),
    "out-of-memory": (r"CUDA out of memory", r"OutOfMemoryError"),
    "free-memory": (r"Free memory on device [^\n]{0,160}? is less than desired GPU memory utilization",),
}
TEXT_FIELDS = ("version", "model")
WHOLE_FIELDS = ("num_gpu_blocks", "kv_cache_tokens")


class LogError(ValueError):
    """A --log file that cannot be compared; the message names the file and the fix."""


@dataclass(frozen=True)
class AnchoredPattern:
    """A pattern and the literal text it starts with, found with str.find (linear) before the regex runs."""

    anchor: str
    regex: re.Pattern[str]

    def first(self, text: str) -> re.Match[str] | None:
        position = text.find(self.anchor)
        while position >= 0:
            found = self.regex.match(text, position, position + MATCH_WINDOW)
            if found:
                return found
            position = text.find(self.anchor, position + 1)
        return None


def literal_start(pattern: str) -> str:
    """The literal characters a pattern starts with (`V1 LLM engine (v` of `V1 LLM engine \\(v(...)`)."""
    literal: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern) and not pattern[index + 1].isalnum():
            char, index = pattern[index + 1], index + 1
        elif char in "\\()[]{}.*+?|^$":
            if char in "?*{" and literal:
                literal.pop()  # the character before an optional quantifier may be absent
            break
        literal.append(char)
        index += 1
    return "".join(literal)


def _anchored(patterns: Iterable[str]) -> tuple[AnchoredPattern, ...]:
    return tuple(AnchoredPattern(literal_start(p), re.compile(p, re.ASCII)) for p in patterns)


FIGURE_MATCHERS = {name: _anchored(patterns) for name, patterns in PATTERNS.items()}
REFUSAL_MATCHERS = {kind: _anchored(patterns) for kind, patterns in REFUSALS.items()}


@dataclass(frozen=True)
class LoggedStartup:
    """The figures one start-up log holds (None where the release or the excerpt does not print them)."""

    version: str | None = None
    model: str | None = None
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

    @property
    def has_figures(self) -> bool:
        return bool(self.refusals) or any(getattr(self, name) is not None for name in PATTERNS if name not in TEXT_FIELDS)


def parse_startup_log(text: str) -> LoggedStartup:
    """The figures in a log. Raises LogError for a figure with more digits than vLLM prints."""
    found: dict[str, object] = {}
    for name, matchers in FIGURE_MATCHERS.items():
        value = _first(text, matchers)
        if value is not None:
            found[name] = value if name in TEXT_FIELDS else _number(value, name)
    refusals = tuple(kind for kind, matchers in REFUSAL_MATCHERS.items() if any(m.first(text) for m in matchers))
    return LoggedStartup(**found, refusals=refusals)  # type: ignore[arg-type]


def _first(text: str, matchers: tuple[AnchoredPattern, ...]) -> str | None:
    hits = [(match.start(), match.group(1)) for m in matchers if (match := m.first(text))]
    return min(hits)[1] if hits else None


def _number(text: str, name: str) -> float | int:
    try:
        value = parse_figure(text)
    except NumberError as error:
        raise LogError(f"{name}: {error}") from None
    return int(value) if name in WHOLE_FIELDS else value


def read_startup_log(path: str, option: str = "--log") -> str:
    """The file's first MAX_LOG_BYTES as text (a regular file only). Raises LogError naming the option and file."""
    from config.errors import show
    from reading.files import FileReadError, read_text_prefix

    what = "a vLLM server's start-up log was saved to"
    if option == "--events":
        what = "the pod's events were saved to (kubectl describe pod)"
    try:
        return read_text_prefix(path, MAX_LOG_BYTES)
    except FileReadError as error:
        raise LogError(f"{option} {show(path)}: {error.reason}. Fix: pass the file {what}.") from None


def check_startup_log(path: str, text: str, served: tuple[str, ...], timed: bool = False) -> LoggedStartup:
    """The log's figures, when they are a start-up of the model the stack serves (`served`: the model id and
    paths vLLM may have been given; `timed`: the log times a start-up phase, which is enough without memory
    figures). Raises LogError: no figures, another model, a figure out of bounds."""
    try:
        logged = parse_startup_log(text)
    except LogError as error:
        raise LogError(f"--log {path}: {error}. Fix: pass the log vLLM wrote, unedited.") from None
    if not logged.has_figures and not timed:
        raise LogError(
            f"--log {path}: no vLLM start-up figures found in {path}. Fix: pass the log of a vLLM server's "
            "start-up (kubectl logs <pod> > vllm.log), which prints its memory profile and KV cache size."
        )
    if logged.model is not None and not any(same_model(logged.model, name) for name in served if name):
        raise LogError(
            f"--log {path}: is the start-up log of {logged.model[:120]!r}, but the stack serves "
            f"{served[0][:120]!r}; its figures are not comparable. Fix: pass the log of this stack's model."
        )
    return logged


def same_model(logged: str, served: str) -> bool:
    """The logged model is the served one: the same id, a path ending in it, or the same last folder name."""
    logged, served = logged.rstrip("/"), served.rstrip("/")
    return (
        logged == served
        or logged.endswith("/" + served)
        or logged.rpartition("/")[2].casefold() == served.rpartition("/")[2].casefold()
    )


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


def log_check_dict(report: PreflightReport, logged: LoggedStartup) -> dict[str, Any]:
    """The log check as the JSON report's `startup_log` section."""
    return {
        "version": logged.version,
        "model": logged.model,
        "figures": [asdict(check) | {"error_percent": check.error_percent} for check in compare(report, logged)],
        "vllm_started": logged.started,
        "refusals": list(logged.refusals),
        "agrees_with_preflight": logged.started == report.verdict.fits,
        "largest_miss": term_off(report, logged),
    }
