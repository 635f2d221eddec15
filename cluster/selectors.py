"""The one place that maps (GPU label scheme, GPU products) to node selector terms.

The pods' required node affinity (components/render/scheduling.py) and the cluster check that looks for a
node or pool offering the GPU (cluster/checks.py) both use these terms, so the product the preflight sized
for and the label the pods select on cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.gpu_labels import PROVIDER_LABELS
from catalog.gpus import GPUS

GFD_PRODUCT = "nvidia.com/gpu.product"  # GPU Feature Discovery (NVIDIA/k8s-device-plugin internal/lm/resource.go)
GKE_ACCELERATOR = "cloud.google.com/gke-accelerator"
KARPENTER_GPU_NAME = "karpenter.k8s.aws/instance-gpu-name"
KARPENTER_GPU_MEMORY = "karpenter.k8s.aws/instance-gpu-memory"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
GPU_RESOURCE = "nvidia.com/gpu"  # device plugin extended resource, also the conventional taint key
# Tolerate the nvidia.com/gpu taint whatever its value (`present`, `true`, empty; docs/sources.md §F.2).
GPU_TOLERATIONS: tuple[dict[str, str], ...] = ({"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"},)

Term = dict[str, list[dict[str, Any]]]  # {"matchExpressions": [...]}; terms are ORed, expressions ANDed


class NoLabelValue(ValueError):
    """A product has no known value for the label scheme (e.g. an L40S on GKE)."""


def _in(key: str, values: list[str]) -> dict[str, Any]:
    return {"key": key, "operator": "In", "values": values}


def gpu_selector_terms(scheme: str, products: list[str], gfd_values: list[str] | None = None) -> list[Term]:
    """Node selector terms that admit exactly the given products (catalog names). Empty for scheme `none`.
    `gfd_values`: the GFD label values of the products, for GPUs described inline in the stack.

    Raises NoLabelValue naming the first product without a value for the scheme.
    """
    if scheme == "none":
        return []
    if scheme == "gfd":
        values = gfd_values if gfd_values is not None else [GPUS[p].gfd_product for p in products]
        return [{"matchExpressions": [_in(GFD_PRODUCT, values)]}]
    if scheme == "karpenter":
        return [_karpenter_term(p) for p in products]  # one term per product: name AND memory
    values = [v for p in products for v in _values(scheme, p)]
    key = GKE_ACCELERATOR if scheme == "gke-accelerator" else INSTANCE_TYPE
    return [{"matchExpressions": [_in(key, list(dict.fromkeys(values)))]}]


def _values(scheme: str, product: str) -> tuple[str, ...]:
    labels = PROVIDER_LABELS.get(product)
    if labels is None:
        raise NoLabelValue(f"{product} has no known {scheme} label value")
    values = labels.gke_accelerator if scheme == "gke-accelerator" else labels.instance_types
    if not values:
        raise NoLabelValue(f"{product} has no known {scheme} label value")
    return values


def _karpenter_term(product: str) -> Term:
    labels = PROVIDER_LABELS.get(product)
    if labels is None or labels.karpenter_gpu_name is None or labels.karpenter_gpu_memory_mib is None:
        raise NoLabelValue(f"{product} has no known karpenter label value")
    # a100 alone would admit the 40 GB p4d for an 80 GB stack (docs/sources.md §S3): pin the memory too.
    return {
        "matchExpressions": [
            _in(KARPENTER_GPU_NAME, [labels.karpenter_gpu_name]),
            _in(KARPENTER_GPU_MEMORY, [str(labels.karpenter_gpu_memory_mib)]),
        ]
    }


def label_key_of(scheme: str) -> str:
    """The label a scheme selects on, for messages."""
    return {
        "gfd": GFD_PRODUCT,
        "gke-accelerator": GKE_ACCELERATOR,
        "karpenter": KARPENTER_GPU_NAME,
        "instance-type": INSTANCE_TYPE,
        "none": "(none)",
    }[scheme]


def matches_expression(labels: Mapping[str, str], expression: Mapping[str, Any]) -> bool:
    """Kubernetes node selector requirement semantics (In, NotIn, Exists, DoesNotExist, Gt, Lt)."""
    key, operator, values = expression.get("key"), expression.get("operator"), expression.get("values") or []
    if not isinstance(key, str) or not isinstance(values, list):  # a hand-edited snapshot: matches nothing
        return False
    value = labels.get(key)
    if operator == "In":
        return value in values
    if operator == "NotIn":
        return value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if (
        operator in ("Gt", "Lt")
        and value is not None
        and value.lstrip("-").isdigit()
        and values
        and str(values[0]).lstrip("-").isdigit()
    ):
        return int(value) > int(values[0]) if operator == "Gt" else int(value) < int(values[0])
    return False


def matches_terms(labels: Mapping[str, str], terms: list[Term]) -> bool:
    """True when any term matches (no terms: every node matches)."""
    if not terms:
        return True
    return any(all(matches_expression(labels, e) for e in term["matchExpressions"]) for term in terms)
