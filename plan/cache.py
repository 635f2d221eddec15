"""The model cache's names, size and deadlines, from the delivery's decisions. Pure.

Names carry what the cache holds and how its volume is made, so a change creates new objects beside the old
(components/render/cache.py says why per object).
"""

from __future__ import annotations

import math

from config.delivery import CacheVolume
from config.engine import SpeculativeConfig
from plan.names import HF_HOME, MARKER_DIR, Names, cache_key

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
