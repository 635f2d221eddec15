"""Version tables the cluster checks compare against, each in one place.

KEDA: the feature table is catalog/keda.py's (fallback.behavior from v2.17.0, a fallback with a metricType
Value trigger from v2.18.0; until then the webhook rejects it: apis/keda/v1alpha1/scaledobject_types.go@v2.17.0:286-316).
CUDA: the image's build and its driver floor are catalog/vllm_images.py's (image_cuda_major, MIN_DRIVER_MAJOR).
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


def keda_minimum(features: Iterable[str]) -> tuple[tuple[int, int, int], list[str]]:
    """The oldest KEDA that accepts every feature, and the features that need exactly that version."""
    wanted = sorted(set(features))
    unknown = [f for f in wanted if f not in KEDA_FEATURES]
    if unknown:
        raise KeyError(f"unknown KEDA feature(s) {unknown}; known: {sorted(KEDA_FEATURES)}")
    minimum = max((KEDA_FEATURES[f] for f in wanted), default=KEDA_FEATURES[SCALED_OBJECT])
    return minimum, [f for f in wanted if KEDA_FEATURES[f] == minimum]


def show(version: tuple[int, ...]) -> str:
    return ".".join(str(p) for p in version)
