"""`cluster`: which kind of cluster this is (the profile) and where its facts come from.

The profile (cluster/profiles.py) sets the defaults that differ between providers; every one is
overridable here. Facts are read from the live cluster during `pulumi preview`/`up` (read-only, the same
kubeconfig and context as the Kubernetes provider), or from `kubectl get ... -o json` snapshot files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field, NonNegativeInt, PositiveInt

from cluster.profiles import PROFILES, GpuLabelScheme, Profile, ProfileName
from config.base import ConfigGroup

if TYPE_CHECKING:
    from config.stack import StackConfig


class NodePoolConfig(ConfigGroup):
    """A node pool that can create GPU nodes the cluster does not show yet (GKE/AKS autoscaled pools at 0)."""

    name: str = Field(description="Pool name, for the report.")
    labels: dict[str, str] = Field(description="Labels its nodes get, e.g. {cloud.google.com/gke-accelerator: ...}.")
    gpus: PositiveInt = Field(description="Allocatable nvidia.com/gpu of one of its nodes.")
    max_nodes: NonNegativeInt | None = Field(None, description="Autoscaler maximum; 0 means it cannot create nodes.")


class ClusterConfig(ConfigGroup):
    """The cluster profile and the sources of its facts."""

    profile: ProfileName = Field(
        "generic", description="generic, gpu-operator, gke, eks-karpenter, aks or openshift: sets the defaults below."
    )
    gpu_label: GpuLabelScheme | None = Field(
        None,
        description="How pods select the GPU: gfd (nvidia.com/gpu.product), gke-accelerator, karpenter "
        "(instance-gpu-name + instance-gpu-memory), instance-type, or none; defaults to the profile's.",
    )
    snapshot_files: tuple[str, ...] = Field(
        (),
        description="`kubectl get ... -o json` files to check instead of reading the live cluster "
        "(paths relative to the project directory).",
    )
    read_live: bool = Field(True, description="Read the live cluster (get/list only) during preview and up.")
    block_on_read_failure: bool = Field(
        False, description="Stop when the cluster cannot be read; false reports `cluster: not checked` and goes on."
    )
    keda_namespace: str = Field(
        "keda", pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", description="Namespace of the keda-operator Deployment."
    )
    node_pools: tuple[NodePoolConfig, ...] = Field(
        (), description="Autoscaled GPU pools that can create nodes the cluster does not show yet."
    )

    @property
    def defaults(self) -> Profile:
        return PROFILES[self.profile]

    @property
    def gpu_label_scheme(self) -> GpuLabelScheme:
        return self.gpu_label or self.defaults.gpu_label


def runtime_class_name(cfg: StackConfig) -> str | None:
    """scheduling.runtime_class_name, or the profile's runtime class for GPU pods."""
    return cfg.scheduling.runtime_class_name or cfg.cluster.defaults.runtime_class


def gpu_label_scheme(cfg: StackConfig) -> GpuLabelScheme:
    """The scheme pods select the GPU with. scheduling.require_gpu_product_label, when set, overrides:
    true = GFD's nvidia.com/gpu.product, false = no product affinity (gpu.node_selector names the GPU)."""
    override = cfg.scheduling.require_gpu_product_label
    if override is not None:
        return "gfd" if override else "none"
    return cfg.cluster.gpu_label_scheme


def gpu_tolerations(cfg: StackConfig) -> tuple[dict[str, str], ...]:
    """The GPU pods' tolerations: nvidia.com/gpu (any value) and the profile's GPU pool taints."""
    from cluster.selectors import GPU_TOLERATIONS

    return (*GPU_TOLERATIONS, *cfg.cluster.defaults.gpu_tolerations)


def gpu_affinity_terms(cfg: StackConfig) -> list[dict[str, list[dict[str, object]]]]:
    """The required node affinity terms of the GPU pods: the products the preflight sized for, in the label
    the cluster profile says identifies them (cluster/selectors.py). Empty for scheme `none`."""
    from cluster.selectors import gpu_selector_terms

    products = list(cfg.gpu.products)
    return gpu_selector_terms(gpu_label_scheme(cfg), products, [cfg.gpu.spec_for(p).gfd_product for p in products])
