"""vLLM versions this program deploys, and how each one accounts GPU memory.

Deployable versions are those whose flags and metrics were read from the released wheel (shared
reference "vllm-kubernetes-facts.md" §A, §B): 0.7.2 (V0 engine) and 0.33.0 (newest on PyPI). The memory
eras below also cover the versions of the calibration logs, so the estimator can be checked against them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class MemoryEra(Enum):
    """How a vLLM release turns GPU memory into KV-cache blocks (calibration/vllm-memory-accounting.md)."""

    V0_LEGACY = "v0-legacy"  # <= 0.6.4: peak torch memory incl. weights + non-torch (worker.py @6ae5229)
    V0 = "v0"  # 0.6.5 - 0.7.x: memory_profiling() split (PR #10511), V0 engine by default
    V1_EARLY = "v1-early"  # 0.9.2 - 0.16: V1 memory_profiling (PR #19312); large sampler warm-up peak
    V1 = "v1"  # 0.17 - 0.20: activation peak ~60 % lower (llm-d-planner sweep); CUDA graphs not subtracted
    V1_CUDAGRAPH = "v1-cudagraph"  # >= 0.21: CUDA-graph estimate subtracted from the KV budget by default


def parse_version(text: str) -> tuple[int, int, int]:
    """'0.33.0' -> (0, 33, 0). Raises ValueError on anything else."""
    parts = text.strip().lstrip("v").split(".")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        raise ValueError(f"not a vLLM release number: {text!r}")
    major, minor, patch = (int(part) for part in parts)
    return major, minor, patch


def memory_era(version: tuple[int, int, int]) -> MemoryEra:
    if version < (0, 6, 5):
        return MemoryEra.V0_LEGACY
    if version < (0, 8, 0):
        return MemoryEra.V0
    if version < (0, 17, 0):
        return MemoryEra.V1_EARLY
    if version < (0, 21, 0):
        return MemoryEra.V1
    return MemoryEra.V1_CUDAGRAPH


@dataclass(frozen=True)
class VllmRelease:
    version: str
    prefix_caching_default: bool  # what vLLM does when neither flag form is given
    image_tag: str

    @property
    def number(self) -> tuple[int, int, int]:
        return parse_version(self.version)

    @property
    def era(self) -> MemoryEra:
        return memory_era(self.number)

    @property
    def is_v0_engine(self) -> bool:
        return self.era in (MemoryEra.V0_LEGACY, MemoryEra.V0)


RELEASES: dict[str, VllmRelease] = {
    # 0.7.2: prefix caching off on V0 (arg_utils.py:210-213). The program always renders
    # --gpu-memory-utilization, so the versions' differing defaults (0.90 vs 0.92) never apply.
    "0.7.2": VllmRelease("0.7.2", False, "v0.7.2"),
    # 0.33.0: prefix caching on for generative models (arg_utils.py:3075-3076).
    "0.33.0": VllmRelease("0.33.0", True, "v0.33.0"),
}

SUPPORTED_VERSIONS: tuple[str, ...] = tuple(RELEASES)
LATEST_VERSION = "0.33.0"


def default_batch_limits(version: tuple[int, int, int], gpu_memory_gib: float, gpu_is_a100: bool,
                         max_model_len: int) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) vLLM picks for the OpenAI server when the flags are absent.

    V1: EngineArgs.get_batch_defaults — 1024/8192 on >= 70 GiB GPUs that are not A100, else 256/2048
    (A100 excluded on purpose, vLLM PR #17885). V0 (0.7.2): 256 sequences; batched tokens
    max(max_model_len, 2048) unless chunked prefill, which V0 turns on above 32768 tokens (then 2048).
    """
    if memory_era(version) in (MemoryEra.V0_LEGACY, MemoryEra.V0):
        return 256, 2048 if max_model_len > 32768 else max(max_model_len, 2048)
    if gpu_memory_gib >= 70 and not gpu_is_a100:
        return 1024, 8192
    return 256, 2048
