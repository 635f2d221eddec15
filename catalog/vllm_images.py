"""The compressed size of the vllm/vllm-openai image per release: what a node without it pulls.

Public figures (Docker Hub shows the compressed size; users quote it):
- 9 GB: "the 9GB which is published in the dockerhub", vllm-project/vllm#7609 (2024-08-16, the 0.5 releases;
  used for 0.6 and 0.7, the catalog's oldest).
- 12.64 GB: "Current vLLM docker image size is 12.64GB" (discuss.vllm.ai/t/1204), quoted in
  vllm-project/vllm#27154 (2025-10-18: "docker pull vllm/vllm-openai:latest — the image is around 12 GB", 0.11).
  Used from 0.8 (vllm-project/vllm#17163, 2025-04, reports the image growing to 25 GB unpacked on the node).
No figure was found for the releases after 0.11: the newest figure stands for them, and the report says so.

And the CUDA build of each official tag, which sets the oldest NVIDIA driver the image runs on (the driver floor):
- From 0.20.0 the unsuffixed tag (and `-ubuntu2404`) is a CUDA 13.0 build and `-cu129` the CUDA 12.9 one; before
  it the unsuffixed tag was CUDA 12.9 and `-cu130` the CUDA 13 one (vllm-project/vllm#39878 "Switch default CUDA
  to 13.0", 2026-04-15; vast-ai/base-image#158: "the unsuffixed base tag (e.g. v0.20.0) now means CUDA 13.0";
  ai-dynamo/nixl#2140: "Starting with vLLM v0.20.0, CUDA 13 became the default").
- CUDA 13 needs driver >= 580 (the v0.30.0 image: "driver 580 or newer", docs/sources.md §A.6). No floor is
  kept for CUDA 12 builds: 12.x runs on older drivers through minor-version compatibility, so they are not checked.
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


OFFICIAL_IMAGE = "vllm/vllm-openai"
CUDA13_DEFAULT_FROM = "0.20.0"  # the first release whose unsuffixed tag is a CUDA 13 build
MIN_DRIVER_MAJOR: dict[int, int] = {13: 580}  # CUDA major -> oldest driver branch that runs it
_DRIVER_SOURCE = "vllm-project/vllm#39878 (CUDA 13 default from 0.20.0); CUDA 13 needs driver >= 580"


@dataclass(frozen=True)
class DriverFloor:
    cuda_major: int
    min_driver_major: int
    source: str


def image_cuda_major(image: str, tag: str, version: str) -> int | None:
    """The CUDA major of an official image tag, or None when unknown (a custom image or tag)."""
    if image != OFFICIAL_IMAGE:
        return None
    if tag == f"v{version}-cu129":
        return 12
    if tag == f"v{version}-cu130":
        return 13
    if tag in (f"v{version}", f"v{version}-ubuntu2404"):
        return 13 if version_key(version) >= version_key(CUDA13_DEFAULT_FROM) else 12
    return None


def driver_floor(image: str, tag: str, version: str) -> DriverFloor | None:
    """The oldest NVIDIA driver major the image runs on, when the image's CUDA build has one in the table."""
    cuda = image_cuda_major(image, tag, version)
    minimum = MIN_DRIVER_MAJOR.get(cuda) if cuda is not None else None
    return None if cuda is None or minimum is None else DriverFloor(cuda, minimum, _DRIVER_SOURCE)
