"""The model cache's names, size and deadlines, from the delivery's decisions. Pure.

Names carry what the cache holds and how its volume is made, so a change creates new objects beside the old
(components/render/cache.py says why per object).
"""

from __future__ import annotations

import math

from config.delivery import CacheVolume
from config.engine import SpeculativeConfig
from plan.names import HF_HOME, HOME, MARKER_DIR, Names, cache_key

Downloads = tuple[tuple[str, str | None], ...]  # (repository, revision) pairs


def downloads(
    model_id: str, revision: str | None, speculative: SpeculativeConfig | None, adapters: Downloads = ()
) -> Downloads:
    """What the Job fetches: the model, then any speculative draft model, then the LoRA adapters from the Hub."""
    pairs: list[tuple[str, str | None]] = [(model_id, revision)]
    if speculative is not None and speculative.model:
        pairs.append((speculative.model, speculative.revision))
    return (*pairs, *adapters)


def _parts(pairs: Downloads) -> list[str | None]:
    return [part for pair in pairs for part in pair]


def marker_path(pairs: Downloads) -> str:
    """The completion marker, named after what is in the cache (models and revisions)."""
    return f"{HF_HOME}/{MARKER_DIR}/complete-{cache_key(*_parts(pairs))}"


def failure_marker_path(pairs: Downloads) -> str:
    """Written by a download that failed for a cause no retry fixes (its text is the reason); the server's wait
    container stops on it. Removed by the download that completes."""
    return f"{HF_HOME}/{MARKER_DIR}/failed-{cache_key(*_parts(pairs))}"


def default_size_gib(weights_gib: float, headroom_percent: float) -> int:
    """`weights_gib`: every checkpoint the cache holds (the model and any draft model)."""
    return math.ceil(weights_gib * (1 + headroom_percent / 100) + 1)


def cache_size_gib(configured_gib: float | None, weights_gib: float, headroom_percent: float) -> int:
    """cache.size_gib, else the weights with headroom."""
    return math.ceil(configured_gib) if configured_gib else default_size_gib(weights_gib, headroom_percent)


def volume_key(pairs: Downloads, size_gib: int, volume: CacheVolume | None) -> str:
    """What the volume holds and how it is made: content (models, revisions), size, class and access mode.

    A new model.revision gets a new claim sized for it, filled beside the old one: pulumi-kubernetes replaces a
    PVC on any `.spec` change (provider diff.go forceNew), and a new name makes that create-before-delete, so
    the old claim is released only after the new replicas are ready, and never reused when too small.
    """
    access, storage_class = (volume.access_mode, volume.storage_class_name) if volume else (None, None)
    return cache_key(cache_key(*_parts(pairs)), str(size_gib), storage_class, access)


def download_job_name(names: Names, claim: str, pairs: Downloads) -> str:
    """A new Job for new content or a new volume: a Job that already completed never runs again, so a
    replaced (empty) volume would otherwise leave the server waiting for the marker forever."""
    return names.download_job(cache_key(claim, *_parts(pairs)))


def copy_job_name(names: Names, uri: str, pairs: Downloads) -> str:
    """A new Job per model, revision and bucket folder."""
    return names.download_job(cache_key(uri, *_parts(pairs)))


def download_seconds(weights_gib: float, download_gib_per_s: float) -> int:
    """One attempt's deadline, counted from the script's start: the download at the configured speed x1.5."""
    return math.ceil(weights_gib / download_gib_per_s * 1.5)


COPY_FACTOR = 1.5 * 2  # fetching and uploading (twice the bytes), x1.5


def copy_seconds(weights_gib: float, download_gib_per_s: float) -> int:
    """One attempt: fetching and uploading (twice the bytes) at the configured download speed, x1.5."""
    return int(weights_gib / download_gib_per_s * COPY_FACTOR)


def copy_seconds_per_gib(download_gib_per_s: float) -> float:
    """The same rate per GiB: the bucket copy's deadline for each file is its size times this."""
    return COPY_FACTOR / download_gib_per_s


# hf_xet's download buffer (bytes downloaded and not yet written) from the memory a container may use, as hf_xet
# 1.7.0 and later derive it from the cgroup limit themselves (huggingface/xet-core#943; hf_xet 1.8.0 sdist
# xet_runtime/src/utils/system_memory.rs:79-83 the fractions, :100-105 the floors and ceilings, :108-118 the
# rounding). Set explicitly, the same figures bound the hf_xet in an older image: 1.4 to 1.6 default to 2 GB plus
# 512 MB per file being downloaded, up to 8 GB (hf_xet 1.6.0 xet_runtime/src/config/groups/reconstruction.rs:31,
# :39, :47), 6.1 GB with snapshot_download's 8 workers; docs/sources.md §S13.
XET_ROUND_BYTES = 8_000_000
XET_BUFFERS = {  # variable: (divisor of the memory limit, floor, ceiling), bytes
    "HF_XET_RECONSTRUCTION_DOWNLOAD_BUFFER_SIZE": (16, 64_000_000, 16_000_000_000),
    "HF_XET_RECONSTRUCTION_DOWNLOAD_BUFFER_PERFILE_SIZE": (64, 16_000_000, 2_000_000_000),
    "HF_XET_RECONSTRUCTION_DOWNLOAD_BUFFER_LIMIT": (4, 264_000_000, 64_000_000_000),
}
XORB_BYTES = 64 * 2**20  # the largest range one range get fetches (hf_xet 1.2.1 deduplication/src/constants.rs:15)
XET_RANGE_GETS = 48  # hf_xet 1.2.1's default (xet_config/src/groups/client.rs:50): only ever lowered


def xet_download_env(memory_gib: float) -> dict[str, str]:
    """hf_xet's settings for a container fetching from the Hub within `memory_gib`: the download buffer bounded
    by the limit; hf_xet 1.0-1.2's range gets (48 at once, each up to one 64 MiB xorb: hf_xet 1.2.1
    xet_config/src/groups/client.rs:50, the old name aliased at xet_config/src/aliases.rs:10) to the same bound;
    high-performance mode off (in 1.6.0 it is applied after the variables and overrides them,
    xet_runtime/src/config/xet_config.rs:141-143); and no chunk cache, a second copy of the bytes on the volume
    being filled: 10 GB under $HF_HOME/xet in hf_xet 1.2.0 and earlier (chunk_cache/src/disk.rs:31), built off
    from 1.2.1 (hf_xet/Cargo.toml:52 `no-default-cache`). Its small metadata stays in HOME."""
    usable = int(memory_gib * 2**30)
    buffers = {
        name: (min(max(usable // divisor, floor), ceiling) // XET_ROUND_BYTES) * XET_ROUND_BYTES
        for name, (divisor, floor, ceiling) in XET_BUFFERS.items()
    }
    range_gets = min(XET_RANGE_GETS, max(1, buffers["HF_XET_RECONSTRUCTION_DOWNLOAD_BUFFER_LIMIT"] // XORB_BYTES))
    return {name: str(value) for name, value in buffers.items()} | {
        "HF_XET_NUM_CONCURRENT_RANGE_GETS": str(range_gets),
        "HF_XET_HIGH_PERFORMANCE": "0",
        "HF_XET_CACHE": f"{HOME}/.cache/xet",
        "HF_XET_CHUNK_CACHE_SIZE_BYTES": "0",
    }
