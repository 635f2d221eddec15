"""The one place that maps (GPU label scheme, GPU products) to node selector terms.

The pods' required node affinity (plan/placement.py) and the cluster check that looks for a node or pool
offering the GPU (cluster/checks.py) both use these terms, so the product the preflight sized for and the
label the pods select on cannot drift apart.
"""

from __future__ import annotations

from typing import Any

from catalog.gpu_labels import PROVIDER_LABELS
from catalog.gpus import GPUS, NVIDIA
from catalog.profiles import GpuLabelScheme

GFD_PRODUCT = NVIDIA.product_label  # GPU Feature Discovery's product label
GKE_ACCELERATOR = "cloud.google.com/gke-accelerator"
KARPENTER_GPU_NAME = "karpenter.k8s.aws/instance-gpu-name"
KARPENTER_GPU_MEMORY = "karpenter.k8s.aws/instance-gpu-memory"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"

Term = dict[str, list[dict[str, Any]]]  # {"matchExpressions": [...]}; terms are ORed, expressions ANDed


class NoLabelValue(ValueError):
    """A product has no known value for the label scheme (e.g. an L40S on GKE)."""


def label_scheme(require_gpu_product_label: bool | None, cluster_scheme: GpuLabelScheme) -> GpuLabelScheme:
    """The scheme pods select the GPU with. scheduling.require_gpu_product_label, when set, overrides the
    cluster's (cluster.gpu_label or its profile's): true = GFD's product label, false = no product affinity
    (gpu.node_selector names the GPU)."""
    if require_gpu_product_label is not None:
        return "gfd" if require_gpu_product_label else "none"
    return cluster_scheme


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
