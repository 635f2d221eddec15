"""`cluster`: which kind of cluster this is (the profile) and where its facts come from.

The profile (catalog/profiles.py) sets the defaults that differ between providers; every one is
overridable here. Facts are read from the live cluster during `pulumi preview`/`up` (read-only, the same
kubeconfig and context as the Kubernetes provider), or from `kubectl get ... -o json` snapshot files.
"""

from __future__ import annotations

from dataclasses import replace

from pydantic import Field, NonNegativeInt, PositiveInt

from catalog.profiles import PROFILES, GpuLabelScheme, NodeAutoscaler, Profile, ProfileName, UpgradeDrain
from config.base import ConfigGroup


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
    node_autoscaler: NodeAutoscaler | None = Field(
        None,
        description="What removes idle nodes: karpenter, cluster-autoscaler or none; the serving pods carry the "
        "annotation it honours so it never evicts them (a full reload each). Defaults to the profile's "
        "(cluster-autoscaler on gke and aks, karpenter on eks-karpenter, none elsewhere).",
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
        "keda",
        pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
        description="Namespace of the keda-operator Deployment (openshift-keda on the openshift profile unless set).",
    )
    node_pools: tuple[NodePoolConfig, ...] = Field(
        (), description="Autoscaled GPU pools that can create nodes the cluster does not show yet."
    )
    upgrade_drain_timeout_minutes: int | None = Field(
        None,
        ge=5,  # AKS's minimum (docs/sources.md §S11)
        description="The GPU node pool's drain timeout in a managed node upgrade, minutes, where the provider lets "
        "it be set (aks: upgradeSettings.drainTimeoutInMinutes, 30 unless set, at least 5); the preflight compares "
        "the drain with it. Unset: the provider's default.",
    )

    @property
    def defaults(self) -> Profile:
        return PROFILES[self.profile]

    @property
    def keda_operator_namespace(self) -> str:
        """keda_namespace, or on OpenShift the Custom Metrics Autoscaler's namespace unless it is set."""
        platform = self.defaults.user_workload_monitoring
        if platform is not None and "keda_namespace" not in self.model_fields_set:
            return platform.keda_namespace
        return self.keda_namespace

    @property
    def autoscaler(self) -> NodeAutoscaler:
        return self.node_autoscaler or self.defaults.node_autoscaler

    @property
    def gpu_label_scheme(self) -> GpuLabelScheme:
        return self.gpu_label or self.defaults.gpu_label

    @property
    def upgrade_drain(self) -> UpgradeDrain | None:
        """The profile's managed node upgrade drain, with upgrade_drain_timeout_minutes where the provider lets the
        timeout be set (validation/cluster_profile.py refuses it elsewhere)."""
        drain, minutes = self.defaults.upgrade_drain, self.upgrade_drain_timeout_minutes
        if drain is None or minutes is None or drain.timeout_setting is None:
            return drain
        return replace(drain, budget_wait_seconds=minutes * 60, grace_cap_seconds=minutes * 60)
