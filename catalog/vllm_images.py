"""The compressed size of the vllm/vllm-openai image per release: what a node without it pulls.

Public figures (Docker Hub shows the compressed size; users quote it):
- 9 GB: "the 9GB which is published in the dockerhub", vllm-project/vllm#7609 (2024-08-16, the 0.5 releases;
  used for 0.6 and 0.7, the catalog's oldest).
- 12.64 GB: "Current vLLM docker image size is 12.64GB" (discuss.vllm.ai/t/1204), quoted in
  vllm-project/vllm#27154 (2025-10-18: "docker pull vllm/vllm-openai:latest — the image is around 12 GB", 0.11).
  Used from 0.8 (vllm-project/vllm#17163, 2025-04, reports the image growing to 25 GB unpacked on the node).
No figure was found for the releases after 0.11: the newest figure stands for them, and the report says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.vllm_releases import version_key

GB_IN_GIB = 1e9 / 2**30


@dataclass(frozen=True)
class ImageSize:
    gib: float  # compressed
    source: str


# (first release, compressed GB, source), oldest first
_SIZES: tuple[tuple[str, float, str], ...] = (
    ("0.0.0", 9.0, "vllm-project/vllm#7609: 9 GB on Docker Hub (2024-08)"),
    ("0.8.0", 12.64, "12.64 GB, discuss.vllm.ai/t/1204 via vllm-project/vllm#27154 (2025-10)"),
)
_NEWEST_MEASURED = "0.11.2"


def image_size(version: str) -> ImageSize:
    """The compressed vllm/vllm-openai image of this release (the last figure at or before it)."""
    _, gb, source = next(row for row in reversed(_SIZES) if version_key(row[0]) <= version_key(version))
    if version_key(version) > version_key(_NEWEST_MEASURED):
        source += f"; no public figure for {version}, the newest one is used"
    return ImageSize(round(gb * GB_IN_GIB, 2), source)
