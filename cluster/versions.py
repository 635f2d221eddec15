"""Version tables the cluster checks compare against, each in one place.

KEDA: the feature table is catalog/keda.py's (fallback.behavior from v2.17.0, a fallback with a metricType
Value trigger from v2.18.0; until then the webhook rejects it: apis/keda/v1alpha1/scaledobject_types.go@v2.17.0:286-316).
CUDA: the vllm/vllm-openai images moved to a CUDA 13 base (nvidia/cuda:13.0.3) and need driver >= 580;
`-cu129` tags are CUDA 12.9 builds (docs/sources.md §A.6, "serving-at-scale-
facts.md" docs/sources.md §S3 GFD row).
"""

from __future__ import annotations

from collections.abc import Iterable

from catalog.keda import FEATURES
from catalog.keda import parse_version as parse_keda_version

# Feature -> first KEDA release that accepts it: catalog/keda.py is the one table; SCALED_OBJECT is the
# keda.sh/v1alpha1 ScaledObject itself.
SCALED_OBJECT = "scaledobject"
KEDA_FEATURES: dict[str, tuple[int, int, int]] = {
    SCALED_OBJECT: (2, 0, 0),
    **{str(feature): (*parse_keda_version(first), 0) for feature, (first, _source) in FEATURES.items()},
}

# vLLM release -> CUDA major of its official vllm/vllm-openai image (unknown releases: not checked).
IMAGE_CUDA_MAJOR: dict[str, int] = {"0.33.0": 13}
MIN_DRIVER_MAJOR: dict[int, int] = {13: 580}  # CUDA major -> oldest driver branch that runs it
OFFICIAL_IMAGE = "vllm/vllm-openai"


def keda_minimum(features: Iterable[str]) -> tuple[tuple[int, int, int], list[str]]:
    """The oldest KEDA that accepts every feature, and the features that need exactly that version."""
    wanted = sorted(set(features))
    unknown = [f for f in wanted if f not in KEDA_FEATURES]
    if unknown:
        raise KeyError(f"unknown KEDA feature(s) {unknown}; known: {sorted(KEDA_FEATURES)}")
    minimum = max((KEDA_FEATURES[f] for f in wanted), default=KEDA_FEATURES[SCALED_OBJECT])
    return minimum, [f for f in wanted if KEDA_FEATURES[f] == minimum]


def image_cuda_major(image: str, tag: str, vllm_version: str) -> int | None:
    """The CUDA major of an official image tag, or None when unknown (a custom image or release)."""
    if image != OFFICIAL_IMAGE:
        return None
    if tag.endswith("-cu129"):
        return 12
    return IMAGE_CUDA_MAJOR.get(vllm_version) if tag in (f"v{vllm_version}", f"v{vllm_version}-ubuntu2404") else None


def show(version: tuple[int, ...]) -> str:
    return ".".join(str(p) for p in version)
