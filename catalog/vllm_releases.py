"""The generated per-release tables: catalog/data/vllm/<version>.json, one per released vLLM wheel.

Written by scripts/vllm_release_tables.py from the wheel's own sources (ast only; vLLM is never
imported), with the wheel's file name and sha256. Loaded lazily: listing the directory is all an
import costs; a table is parsed the first time its release is asked for.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent / "data" / "vllm"


def version_key(version: str) -> tuple[int, ...]:
    """'0.10.1.1' -> (0, 10, 1, 1); '0.6.6.post1' -> (0, 6, 6, 0, 1): sorts releases as PyPI does."""
    release, _, post = version.partition(".post")
    numbers = tuple(int(part) for part in release.split("."))
    return (*numbers, *(0,) * (4 - len(numbers)), int(post or 0))


@dataclass(frozen=True)
class ReleaseTable:
    """What one vLLM release accepts and exports, as read from its wheel."""

    version: str
    wheel: str
    sha256: str
    flags: frozenset[str]  # every long and short flag `vllm serve` accepts (with --no- forms)
    choices: dict[str, tuple[Any, ...]]  # --dtype, --kv-cache-dtype, --quantization, --block-size
    metrics: dict[str, str]  # exposed Prometheus name -> gauge / counter / histogram
    memory: dict[str, Any]  # memory-accounting features with the file:line they were read at
    batch_defaults: tuple[dict[str, Any], ...]  # OpenAI-server branches of EngineArgs
    attention_backends: frozenset[str]
    speculative_methods: frozenset[str]
    env: frozenset[str]
    defaults: dict[str, str]  # `Class.field` -> default source text (file:line)


@cache
def available_versions() -> tuple[str, ...]:
    """Every release with a generated table, oldest first."""
    names = (path.stem for path in DATA_DIR.glob("*.json"))
    return tuple(sorted((n for n in names if re.fullmatch(r"\d+(\.\d+)+(\.post\d+)?", n)), key=version_key))


@cache
def release_table(version: str) -> ReleaseTable:
    if version not in available_versions():
        raise KeyError(version)
    data = json.loads((DATA_DIR / f"{version}.json").read_text())
    return ReleaseTable(
        version=data["version"],
        wheel=data["wheel"],
        sha256=data["sha256"],
        flags=frozenset(data["flags"]),
        choices={flag: tuple(values) for flag, values in data["choices"].items()},
        metrics=dict(data["metrics"]),
        memory=dict(data["memory"]),
        batch_defaults=tuple(data["batch_defaults"]),
        attention_backends=frozenset(data["attention_backends"]),
        speculative_methods=frozenset(data["speculative_methods"]),
        env=frozenset(data["env"]),
        defaults=dict(data["defaults"]),
    )
