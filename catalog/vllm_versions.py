"""vLLM releases this program deploys, and how each one accounts GPU memory.

Every release with a generated table in catalog/data/vllm/ (scripts/vllm_release_tables.py reads the
released wheel) is deployable. Each release's memory era is assigned from what its wheel's code does
(`ReleaseTable.memory`, with the file:line of each feature): whether V1 is the default engine, whether the
worker uses `memory_profiling()` (PR #10511 for V0, #19312 for V1) and whether the CUDA-graph estimate is
subtracted by default (envs.py VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS, PR #30515).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any

from catalog.vllm_releases import ReleaseTable, available_versions, release_table, version_key


class MemoryEra(Enum):
    """How a vLLM release turns GPU memory into KV-cache blocks (calibration/vllm-memory-accounting.md)."""

    V0_LEGACY = "v0-legacy"  # V0 engine; worker.py profiles peak torch memory incl. weights + non-torch
    V0 = "v0"  # V0 engine with the memory_profiling() split (PR #10511)
    V1_EARLY = "v1-early"  # V1 engine by default, before 0.17: large sampler warm-up peak
    V1 = "v1"  # 0.17 - 0.19: activation peak ~60 % lower (llm-d-planner sweep); CUDA graphs not subtracted
    V1_CUDAGRAPH = "v1-cudagraph"  # CUDA-graph estimate subtracted from the KV budget by default


# The V1_EARLY / V1 boundary is not a switch in the code: the activation peak of the same model fell ~60 %
# between the 0.16.0 and 0.17.0 start-up logs (calibration rows R14 -> R15, llm-d-planner sweep).
ACTIVATION_DROP = (0, 17, 0)


def parse_version(text: str) -> tuple[int, int, int]:
    """'0.33.0' -> (0, 33, 0); '0.6.6.post1' and '0.10.1.1' -> their first three numbers. Else ValueError."""
    cleaned = text.strip().lstrip("v")
    release = cleaned.partition(".post")[0]
    parts = release.split(".")
    if len(parts) not in (3, 4) or not all(part.isdigit() for part in parts):
        raise ValueError(f"not a vLLM release number: {text!r}")
    major, minor, patch = (int(part) for part in parts[:3])
    return major, minor, patch


def memory_era(version: tuple[int, int, int]) -> MemoryEra:
    """The era by release number; equal to `era_of(release_table(v))` for every generated release."""
    if version < (0, 6, 5):
        return MemoryEra.V0_LEGACY
    if version < (0, 8, 0):
        return MemoryEra.V0
    if version < ACTIVATION_DROP:
        return MemoryEra.V1_EARLY
    if version < (0, 20, 0):  # 0.20.0 envs.py already defaults VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS to 1
        return MemoryEra.V1
    return MemoryEra.V1_CUDAGRAPH


def era_of(table: ReleaseTable) -> MemoryEra:
    """The era from the features read in the wheel (see each feature's `*_source` in the table)."""
    memory = table.memory
    if not memory["v1_default"]:
        return MemoryEra.V0 if memory["v0_memory_profiling"] else MemoryEra.V0_LEGACY
    if memory["cudagraph_estimate_default"]:
        return MemoryEra.V1_CUDAGRAPH
    return MemoryEra.V1_EARLY if parse_version(table.version) < ACTIVATION_DROP else MemoryEra.V1


@dataclass(frozen=True)
class VllmRelease:
    version: str
    prefix_caching_default: bool  # what vLLM does when neither flag form is given
    image_tag: str
    era: MemoryEra
    table: ReleaseTable

    @property
    def number(self) -> tuple[int, int, int]:
        return parse_version(self.version)

    @property
    def is_v0_engine(self) -> bool:
        return self.era in (MemoryEra.V0_LEGACY, MemoryEra.V0)

    @property
    def flashinfer_sampler_default(self) -> bool:
        """Whether the V1 sampler uses FlashInfer's top-k/top-p kernel unless VLLM_USE_FLASHINFER_SAMPLER says
        otherwise (read from the wheel: `memory["flashinfer_sampler_source"]`). The V0 engine's sampler needs the
        variable set to 1 (vllm 0.7.2 model_executor/layers/sampler.py tests it for truth)."""
        return not self.is_v0_engine and bool(self.table.memory["flashinfer_sampler_default"])


def _release(version: str) -> VllmRelease:
    table = release_table(version)
    era = era_of(table)
    # Prefix caching: off by default on the V0 engine (0.7.2 arg_utils.py:210-213), on for V1
    # (0.33.0 arg_utils.py:3075-3076; CacheConfig.enable_prefix_caching default in `table.defaults`).
    v0 = era in (MemoryEra.V0_LEGACY, MemoryEra.V0)
    # Images are published as vllm/vllm-openai:v<version> for every release (v0.6.6.post1 included).
    return VllmRelease(version, not v0, f"v{version}", era, table)


class _Releases(Mapping[str, VllmRelease]):
    """version -> VllmRelease, built on first use from the generated tables."""

    def __init__(self) -> None:
        self._built: dict[str, VllmRelease] = {}

    def __getitem__(self, version: str) -> VllmRelease:
        if version not in self._built:
            if version not in available_versions():
                raise KeyError(version)
            self._built[version] = _release(version)
        return self._built[version]

    def __iter__(self) -> Iterator[str]:
        return iter(available_versions())

    def __len__(self) -> int:
        return len(available_versions())

    def __contains__(self, version: object) -> bool:
        return version in available_versions()


# Releases whose multi-node group (engine.nnodes > 1) dies at start, read from each wheel (the one whose file name
# and sha256 catalog/data/vllm/<version>.json holds). WorkerProc builds its message queues before
# `self.worker.init_device()`; with nnodes_within_dp > 1, which every multi-node group at data parallel 1 has
# (config/parallel.py), `_init_message_queues` asks for the inner-DP world group, which only init_device creates
# (gpu_worker.py, init_worker_distributed_environment), and parallel_state.py's assert "inner dp world group is not
# initialized" stops every rank. The regression came with vllm-project/vllm PR #34861 and was reported on 0.17.0 as
# issue #36389; 0.16.0 calls init_device first (multiproc_executor.py@v0.16.0:571, queues :579), and so does
# 0.18.0, the fix (multiproc_executor.py@v0.18.0:614, queues :626 after a comment saying why).
MULTINODE_START_FAILURE = (
    "its workers build their message queues before the process group the queues need, so every rank stops on the "
    "assert 'inner dp world group is not initialized' (vllm-project/vllm issue #36389)"
)
MULTINODE_BROKEN_RELEASES: Mapping[str, tuple[str, ...]] = {
    version: (
        f"vllm-project/vllm/vllm/v1/executor/multiproc_executor.py@v{version}:589",  # self._init_message_queues(...)
        f"vllm-project/vllm/vllm/v1/executor/multiproc_executor.py@v{version}:592",  # self.worker.init_device()
        f"vllm-project/vllm/vllm/v1/executor/multiproc_executor.py@v{version}:527",  # get_inner_dp_world_group()
        f"vllm-project/vllm/vllm/distributed/parallel_state.py@v{version}:1128",  # the assert
        f"vllm-project/vllm/vllm/v1/worker/gpu_worker.py@v{version}:265",  # init_device sets the group up here
        f"vllm-project/vllm/vllm/config/parallel.py@v{version}:564",  # nnodes_within_dp: nnodes at data parallel 1
    )
    for version in ("0.17.0", "0.17.1")  # the same lines in both wheels
}

RELEASES: Mapping[str, VllmRelease] = _Releases()
SUPPORTED_VERSIONS: tuple[str, ...] = available_versions()
LATEST_VERSION = max(SUPPORTED_VERSIONS, key=version_key)
OLDEST_VERSION = min(SUPPORTED_VERSIONS, key=version_key)

GIB = 1024**3
_COMPARE = {
    ast.GtE: operator.ge,
    ast.Gt: operator.gt,
    ast.LtE: operator.le,
    ast.Lt: operator.lt,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


def _evaluate(node: ast.AST, names: dict[str, Any]) -> Any:
    """A branch condition of EngineArgs' batch defaults, e.g. `device_memory >= 70 * GiB_bytes and
    'a100' not in device_name`. Only comparisons, and/or/not, * and constants/names are allowed."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return names[node.id]
    if isinstance(node, ast.BoolOp):
        values = [_evaluate(value, names) for value in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _evaluate(node.operand, names)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _evaluate(node.left, names) * _evaluate(node.right, names)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return _COMPARE[type(node.ops[0])](_evaluate(node.left, names), _evaluate(node.comparators[0], names))
    raise ValueError(f"unsupported condition: {ast.unparse(node)}")


@cache
def _condition(text: str) -> ast.expr:
    """A branch condition, parsed once a process: every sizing (a preflight sizes each layout it suggests) asks
    the same few branches, and parsing them again was a fifth of assessing prod's stack."""
    return ast.parse(text, mode="eval").body


def _int_default(table: ReleaseTable, key: str) -> int | None:
    text = table.defaults.get(key, "").split(" (")[0]
    return int(text) if text.isdigit() else None


def v0_batched_tokens(version: tuple[int, int, int], max_model_len: int, chunked_prefill_allowed: bool) -> int:
    """V0's default max_num_batched_tokens. Above 32K tokens V0 turns chunked prefill on, unless the model has
    a sliding window or speculative decoding / LoRA is on (0.6.3 engine/arg_utils.py:936-960; 0.7.2
    :1112-1135); then the default is 512 (0.6.3 config.py:983) or 2048 (0.6.6 config.py:1438, 0.7.2
    config.py:1533; 0.6.4-0.6.5 not read, 2048 assumed: the larger profile is the safe side). Without chunked
    prefill the profile batch is max(max_model_len, 2048) (0.6.3 config.py:987), which is what makes a
    131,072-token V0 stack with a sliding window or a draft model refuse to start."""
    if max_model_len > 32768 and chunked_prefill_allowed:
        return 512 if version < (0, 6, 4) else 2048
    return max(max_model_len, 2048)


def default_batch_limits(
    version: tuple[int, int, int],
    gpu_memory_gib: float,
    gpu_is_a100: bool,
    max_model_len: int,
    *,
    device_name: str = "",
    release: str | None = None,
    chunked_prefill_allowed: bool = True,
) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) vLLM picks for the OpenAI server when the flags are absent.

    V1: the first branch of EngineArgs' OpenAI-server defaults whose condition holds for this GPU
    (`ReleaseTable.batch_defaults`, read from the release's arg_utils.py; e.g. 0.19: 1024/8192 on >= 70 GiB
    GPUs that are not A100, else 256/2048 — A100 excluded on purpose, vLLM PR #17885; 0.33: 16384 tokens
    on >= 160 GiB). V0: 256 sequences; batched tokens max(max_model_len, 2048) unless chunked prefill,
    which V0 turns on above 32768 tokens (then 2048).
    """
    if memory_era(version) in (MemoryEra.V0_LEGACY, MemoryEra.V0):
        return 256, v0_batched_tokens(version, max_model_len, chunked_prefill_allowed)
    name = device_name.lower() or ("nvidia a100" if gpu_is_a100 else "")
    table = release_table(release) if release in available_versions() else None
    if table is None:  # a calibration version without a table: the 0.19 rule
        return (1024, 8192) if gpu_memory_gib >= 70 and not gpu_is_a100 else (256, 2048)
    return _table_batch_limits(table, gpu_memory_gib, name)


def _table_batch_limits(table: ReleaseTable, gpu_memory_gib: float, device_name: str) -> tuple[int, int]:
    names = {
        "device_memory": gpu_memory_gib * GIB,
        "GiB_bytes": GIB,
        "device_name": device_name,
        "is_gb10": "gb10" in device_name,
        "chip_name": "",
    }
    seqs = _int_default(table, "EngineArgs.max_num_seqs") or 256
    tokens = 2048
    for branch in table.batch_defaults:
        try:
            holds = _evaluate(_condition(branch["condition"]), names)
        except (KeyError, ValueError):
            continue
        if holds:
            return branch.get("max_num_seqs", seqs), branch.get("max_num_batched_tokens", tokens)
    return seqs, tokens
