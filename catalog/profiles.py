"""Cluster profiles: the defaults that differ between providers, in one table.

GPU labels: docs/sources.md §S3 (GFD is absent on GKE/EKS/AKS GPU pools
unless the GPU Operator or GFD is installed; GKE always sets cloud.google.com/gke-accelerator; Karpenter
labels its nodes with instance-gpu-name/-memory before they exist, so scale-from-zero works; AKS's
kubernetes.azure.com/accelerator names only the vendor, so the instance type is the product).
Storage: docs/sources.md §S2 (EKS gp2/gp3 EBS, GKE standard-rwo PD and AKS managed-csi Azure Disk are ReadWriteOnce;
ReadWriteMany needs efs-sc / standard-rwx Filestore / azurefile-csi).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ProfileName = Literal["generic", "gpu-operator", "gke", "eks-karpenter", "aks", "openshift"]
GpuLabelScheme = Literal["gfd", "gke-accelerator", "karpenter", "instance-type", "none"]


@dataclass(frozen=True)
class Profile:
    name: str
    gpu_label: GpuLabelScheme  # how pods select the GPU product (catalog/selectors.py)
    storage_class: str | None  # the provider's default class (ReadWriteOnce); None = the cluster default
    rwx_storage_class: str | None  # the provider's usual ReadWriteMany class, when it has one
    runtime_class: str | None  # runtimeClassName for GPU pods; None where the default runtime has the GPU hook
    gpu_tolerations: tuple[dict[str, str], ...] = field(default=())  # GPU pool taints besides the vendor's


PROFILES: dict[str, Profile] = {
    # Plain Kubernetes with the NVIDIA device plugin and GFD: GFD's nvidia.com/gpu.product.
    "generic": Profile("generic", "gfd", None, None, None),
    # On-prem with the NVIDIA GPU Operator (runs GFD; its toolkit makes nvidia the default runtime).
    "gpu-operator": Profile("gpu-operator", "gfd", None, None, None),
    # GKE: no GFD unless installed (NVIDIA/gpu-feature-discovery#44); NodeLocal DNSCache is an add-on.
    "gke": Profile("gke", "gke-accelerator", "standard-rwo", "standard-rwx", None),
    # EKS with Karpenter: labels known before the node exists (scale from zero).
    "eks-karpenter": Profile("eks-karpenter", "karpenter", "gp2", "efs-sc", None),
    # AKS: the accelerator label is vendor only; the instance type names the GPU.
    # AKS's GPU guides taint GPU pools sku=gpu:NoSchedule (MicrosoftDocs/azure-docs articles/aks/gpu-cluster.md,
    # use-node-taints.md: `az aks nodepool add ... --node-taints sku=gpu:NoSchedule`).
    "aks": Profile(
        "aks",
        "instance-type",
        "managed-csi",
        "azurefile-csi",
        None,
        ({"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},),
    ),
    # OpenShift: GPUs come through the NVIDIA GPU Operator (GFD labels).
    "openshift": Profile("openshift", "gfd", None, None, None),
}
