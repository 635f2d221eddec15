"""Small helpers shared by the Kubernetes components: register a rendered object, Pulumi timeouts."""

from __future__ import annotations

import math
from typing import Any

import pulumi


def with_namespace(obj: dict[str, Any], namespace: pulumi.Input[str]) -> dict[str, Any]:
    """The rendered metadata, with the namespace as an Output so the Namespace is created first."""
    return {**obj["metadata"], "namespace": namespace}


def timeouts(create_seconds: int, update_seconds: int | None = None) -> pulumi.CustomTimeouts:
    """Pulumi's default await is 10 minutes, shorter than a large model's download or load (§H)."""
    create = f"{math.ceil(create_seconds / 60)}m"
    update = f"{math.ceil((update_seconds or create_seconds) / 60)}m"
    return pulumi.CustomTimeouts(create=create, update=update)
