"""The KEDA features a rendered ScaledObject spec uses, read back off the spec: the tests hold the plan's
keda_features (plan/scaling.py), which the renderer and the cluster check read, to what is rendered."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.keda import Feature
from cluster.versions import SCALED_OBJECT


def keda_features_of(scaled_object_spec: Mapping[str, Any]) -> set[str]:
    """The cluster/versions.py KEDA_FEATURES keys a rendered ScaledObject spec uses."""
    features = {SCALED_OBJECT}
    fallback = scaled_object_spec.get("fallback")
    if isinstance(fallback, Mapping):
        if "behavior" in fallback:
            features.add(str(Feature.FALLBACK_BEHAVIOR))
        triggers = scaled_object_spec.get("triggers") or []
        if any(isinstance(t, Mapping) and t.get("metricType") == "Value" for t in triggers):
            features.add(str(Feature.FALLBACK_WITH_VALUE_TRIGGERS))
    return features
