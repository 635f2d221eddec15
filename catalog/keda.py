"""KEDA releases and the ScaledObject features this program renders that not every release accepts.

One table, feature -> first KEDA release that accepts it, read by the renderer (components/render/keda.py)
and available to a cluster check that knows the installed KEDA version. Sources: kedacore/keda
CHANGELOG.md and apis/keda/v1alpha1/scaledobject_types.go (docs/sources.md §S4).
"""

from __future__ import annotations

import re
from enum import StrEnum

# The oldest KEDA release the rendering targets, and the default of autoscaling.keda_version: issue 9 names
# 2.16 as a release users still run (managed KEDA builds lag upstream). FEATURES lists what it lacks; the
# ungated fields are older (e.g. the prometheus trigger's ignoreNullValues: kedacore/keda#3073, KEDA 2.8).
OLDEST_SUPPORTED = "2.16"
VERSION = re.compile(r"^v?([0-9]+)\.([0-9]+)(?:\.[0-9]+)?$")


class Feature(StrEnum):
    FALLBACK_BEHAVIOR = "fallback.behavior"
    FALLBACK_WITH_VALUE_TRIGGERS = "fallback with a metricType Value trigger"


# Feature -> (first release, source).
FEATURES: dict[Feature, tuple[str, str]] = {
    # kedacore/keda#6450 "Add Fallback option `behavior` for dynamic fallback calculation", CHANGELOG v2.17.0.
    Feature.FALLBACK_BEHAVIOR: ("2.17", "kedacore/keda#6450, CHANGELOG v2.17.0"),
    # Until 2.17 CheckFallbackValid (apis/keda/v1alpha1/scaledobject_types.go) refused a fallback unless
    # every trigger had metricType AverageValue; kedacore/keda#6655, CHANGELOG v2.18.0, lifted that.
    Feature.FALLBACK_WITH_VALUE_TRIGGERS: ("2.18", "kedacore/keda#6655, CHANGELOG v2.18.0"),
}


def parse_version(text: str) -> tuple[int, int]:
    """(major, minor) of `2.16`, `2.16.1` or `v2.16.1`; ValueError otherwise."""
    match = VERSION.match(text.strip())
    if not match:
        raise ValueError(f"{text!r} is not a KEDA version like 2.16 or v2.17.1")
    return int(match.group(1)), int(match.group(2))


def supports(version: str, feature: Feature) -> bool:
    """Whether KEDA `version` accepts `feature`."""
    return parse_version(version) >= parse_version(FEATURES[feature][0])
