"""Where replicas run and how they roll: GPU node affinity, tolerations, spread, strategy, PDB. Pure."""

from __future__ import annotations

from typing import Any

from config.stack import StackConfig

GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"  # GPU Feature Discovery (NVIDIA/k8s-device-plugin resource.go)
GPU_RESOURCE = "nvidia.com/gpu"  # device plugin extended resource, also the conventional taint key (§F.2)
TOPOLOGY_KEYS = {"hostname": "kubernetes.io/hostname", "zone": "topology.kubernetes.io/zone"}


def gpu_products(cfg: StackConfig) -> list[str]:
    """GFD label values of every acceptable product: the same list the preflight took its smallest from."""
    return [cfg.gpu.spec_for(name).gfd_product for name in cfg.gpu.products]


def render_affinity(cfg: StackConfig) -> dict[str, Any] | None:
    """Required node affinity on the GPU product; `In` so several acceptable products work (§F.1).
    None on clusters without GPU Feature Discovery: gpu.node_selector then names the GPU (config cross-check)."""
    if not cfg.scheduling.require_gpu_product_label:
        return None
    expression = {"key": GPU_PRODUCT_LABEL, "operator": "In", "values": gpu_products(cfg)}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [expression]}]}}}


def render_tolerations() -> list[dict[str, Any]]:
    """Tolerate the nvidia.com/gpu taint whatever its value (`present`, `true`, empty; §F.2)."""
    return [{"key": GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"}]


def render_node_selector(cfg: StackConfig) -> dict[str, str]:
    """Extra node labels, e.g. GKE cloud.google.com/gke-accelerator (§F.3)."""
    return dict(cfg.gpu.node_selector)


def can_have_several_replicas(cfg: StackConfig) -> bool:
    return cfg.replicas > 1 or (cfg.autoscaling.enabled and cfg.autoscaling.max_replica_count > 1)


def render_topology_spread(cfg: StackConfig, selector: dict[str, str]) -> list[dict[str, Any]]:
    """Spread replicas over nodes (or zones) so one node loss or drain never takes them all."""
    if cfg.scheduling.spread == "none" or not can_have_several_replicas(cfg):
        return []
    return [{
        "maxSkew": cfg.scheduling.max_skew,
        "topologyKey": TOPOLOGY_KEYS[cfg.scheduling.spread],
        "whenUnsatisfiable": cfg.scheduling.when_unsatisfiable,
        "labelSelector": {"matchLabels": dict(selector)},
        "matchLabelKeys": ["pod-template-hash"],  # spread each ReplicaSet revision on its own
    }]


def render_strategy(cfg: StackConfig) -> dict[str, Any]:
    """No surge pod: a spare GPU node rarely exists, and a surge pod would sit Pending forever.

    One replica: Recreate (the GPUs must be freed before the new pod can schedule).
    Several: replace one at a time, so the others keep serving.
    """
    if not can_have_several_replicas(cfg):
        return {"type": "Recreate"}
    return {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}


def render_pdb_spec(selector: dict[str, str]) -> dict[str, Any]:
    """At most one replica evicted at a time; an unhealthy pod never blocks a node drain.

    maxUnavailable (not minAvailable: 1), so a single-replica stack does not block drains forever.
    unhealthyPodEvictionPolicy: AlwaysAllow is GA since Kubernetes 1.31.
    """
    return {"maxUnavailable": 1, "selector": {"matchLabels": dict(selector)},
            "unhealthyPodEvictionPolicy": "AlwaysAllow"}
