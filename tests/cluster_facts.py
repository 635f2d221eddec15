"""Builders for Kubernetes objects as `kubectl get -o json` prints them, for the cluster tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cluster.facts import ClusterFacts, facts_from_items
from tests.factories import REPO

CLUSTERS = REPO / "tests" / "data" / "clusters"


def fixture(name: str) -> Path:
    return CLUSTERS / f"{name}.json"


def node(
    name: str, labels: dict[str, str] | None = None, gpus: int | None = None, taints: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    allocatable = {"cpu": "8"} | ({"nvidia.com/gpu": str(gpus)} if gpus is not None else {})
    return {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"taints": taints} if taints else {},
        "status": {"allocatable": allocatable},
    }


def storage_class(name: str, provisioner: str, mode: str = "WaitForFirstConsumer", default: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if default:
        meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return {
        "kind": "StorageClass",
        "apiVersion": "storage.k8s.io/v1",
        "metadata": meta,
        "provisioner": provisioner,
        "volumeBindingMode": mode,
    }


def crd(name: str) -> dict[str, Any]:
    return {
        "kind": "CustomResourceDefinition",
        "apiVersion": "apiextensions.k8s.io/v1",
        "metadata": {"name": name},
        "spec": {"versions": [{"name": "v1", "served": True}]},
    }


def namespace(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": name, "labels": labels or {}}}


def keda_operator(image: str, namespace_name: str = "keda") -> dict[str, Any]:
    return {
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {"name": "keda-operator", "namespace": namespace_name},
        "spec": {"template": {"spec": {"containers": [{"name": "keda-operator", "image": image}]}}},
    }


def prometheus(name: str, ns: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "Prometheus",
        "apiVersion": "monitoring.coreos.com/v1",
        "metadata": {"name": name, "namespace": ns},
        "spec": spec,
    }


def nodepool(
    name: str, requirements: list[dict[str, Any]], taints: list[dict[str, str]] | None = None, gpu_limit: str | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"template": {"spec": {"requirements": requirements, "taints": taints or []}}}
    if gpu_limit is not None:
        spec["limits"] = {"nvidia.com/gpu": gpu_limit}
    return {"kind": "NodePool", "apiVersion": "karpenter.sh/v1", "metadata": {"name": name}, "spec": spec}


def facts(*items: dict[str, Any]) -> ClusterFacts:
    return facts_from_items(items, "test")


def list_file(path: Path, *items: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": list(items)}))
    return path
