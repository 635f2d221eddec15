"""Small helpers shared by the Kubernetes components: register a rendered object, Pulumi timeouts."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_kubernetes as k8s


def with_namespace(obj: dict[str, Any], namespace: pulumi.Input[str]) -> dict[str, Any]:
    """The rendered metadata, with the namespace as an Output so the Namespace is created first."""
    return {**obj["metadata"], "namespace": namespace}


def timeouts(create_seconds: int, update_seconds: int | None = None) -> pulumi.CustomTimeouts:
    """Pulumi's default await is 10 minutes, shorter than a large model's download or load (docs/sources.md §H)."""
    create = f"{math.ceil(create_seconds / 60)}m"
    update = f"{math.ceil((update_seconds or create_seconds) / 60)}m"
    return pulumi.CustomTimeouts(create=create, update=update)


# The built-in kinds the stack renders; any other apiVersion/kind is registered as a CustomResource.
KINDS: dict[tuple[str, str], Any] = {
    ("v1", "Namespace"): k8s.core.v1.Namespace,
    ("v1", "ServiceAccount"): k8s.core.v1.ServiceAccount,
    ("v1", "Secret"): k8s.core.v1.Secret,
    ("v1", "ConfigMap"): k8s.core.v1.ConfigMap,
    ("v1", "PersistentVolumeClaim"): k8s.core.v1.PersistentVolumeClaim,
    ("v1", "Service"): k8s.core.v1.Service,
    ("batch/v1", "Job"): k8s.batch.v1.Job,
    ("storage.k8s.io/v1", "StorageClass"): k8s.storage.v1.StorageClass,
    ("apps/v1", "Deployment"): k8s.apps.v1.Deployment,
    ("apps/v1", "StatefulSet"): k8s.apps.v1.StatefulSet,
    ("networking.k8s.io/v1", "Ingress"): k8s.networking.v1.Ingress,
    ("policy/v1", "PodDisruptionBudget"): k8s.policy.v1.PodDisruptionBudget,
    ("networking.k8s.io/v1", "NetworkPolicy"): k8s.networking.v1.NetworkPolicy,
    ("rbac.authorization.k8s.io/v1", "Role"): k8s.rbac.v1.Role,
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): k8s.rbac.v1.RoleBinding,
}


def register(
    resource_name: str,
    manifest: dict[str, Any],
    opts: pulumi.ResourceOptions,
    namespace: pulumi.Input[str] | None = None,
    secrets: Mapping[str, pulumi.Input[str] | None] | None = None,
) -> Any:
    """Register one rendered object as it is, by apiVersion/kind. `namespace` replaces the rendered one with an
    Output (so the Namespace is created first); `secrets` gives the value of each key of stringData in place of
    its placeholder."""
    fields = {_snake(key): value for key, value in manifest.items() if key not in ("apiVersion", "kind")}
    if namespace is not None:
        fields["metadata"] = with_namespace(manifest, namespace)
    if secrets is not None and "string_data" in fields:
        fields["string_data"] = {key: secrets[key] for key in fields["string_data"]}
    kind = KINDS.get((manifest["apiVersion"], manifest["kind"]))
    if kind is None:
        return k8s.apiextensions.CustomResource(
            resource_name, api_version=manifest["apiVersion"], kind=manifest["kind"], opts=opts, **fields
        )
    return kind(resource_name, opts=opts, **fields)


def fill(value: Any, placeholder: str, replacement: pulumi.Input[str] | None) -> Any:
    """The rendered object with every string equal to `placeholder` replaced (an Output the renderers cannot
    know, such as the API key's fingerprint); unchanged when there is no replacement."""
    if replacement is None:
        return value
    if isinstance(value, dict):
        return {key: fill(item, placeholder, replacement) for key, item in value.items()}
    if isinstance(value, list):
        return [fill(item, placeholder, replacement) for item in value]
    return replacement if value == placeholder else value


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", lambda found: "_" + found.group(1).lower(), key)
