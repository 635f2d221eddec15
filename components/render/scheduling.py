"""Where replicas run and how they roll: GPU node affinity, tolerations, spread, strategy, PDB. Pure."""

from __future__ import annotations

from typing import Any

from config.cluster import gpu_affinity_terms, gpu_tolerations, runtime_class_name
from config.stack import StackConfig

TOPOLOGY_KEYS = {"hostname": "kubernetes.io/hostname", "zone": "topology.kubernetes.io/zone"}


def render_affinity(cfg: StackConfig) -> dict[str, Any] | None:
    """Required node affinity on the GPU product, in the label the cluster profile names (config/cluster.py,
    cluster/selectors.py: the same terms the cluster check matches nodes and pools against); `In` so several
    acceptable products work (docs/sources.md §F.1). None for gpu label `none`: gpu.node_selector then names the GPU."""
    terms = gpu_affinity_terms(cfg)
    if not terms:
        return None
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


def render_tolerations(cfg: StackConfig) -> list[dict[str, Any]]:
    """Tolerate the nvidia.com/gpu taint whatever its value (`present`, `true`, empty; docs/sources.md §F.2), plus the GPU pool
    taint the cluster profile names (AKS: sku=gpu). The cluster check tests nodes against the same list."""
    return [dict(t) for t in gpu_tolerations(cfg)]


def render_node_selector(cfg: StackConfig) -> dict[str, str]:
    """Extra node labels, e.g. GKE cloud.google.com/gke-accelerator (docs/sources.md §F.3)."""
    return dict(cfg.gpu.node_selector)


def can_have_several_replicas(cfg: StackConfig) -> bool:
    return cfg.replicas > 1 or (cfg.autoscaling.enabled and cfg.autoscaling.max_replica_count > 1)


def most_replicas(cfg: StackConfig) -> int:
    return cfg.autoscaling.max_replica_count if cfg.autoscaling.enabled else cfg.replicas


def render_topology_spread(cfg: StackConfig, selector: dict[str, str]) -> list[dict[str, Any]]:
    """Spread replicas over nodes (or zones) so one node loss or drain never takes them all.

    Skew is counted over the nodes that exist, so with one GPU node a second replica would fit there at skew 0.
    minDomains (GA in Kubernetes 1.30, DoNotSchedule only) counts the missing nodes as empty domains: with
    hostname spread and minDomains = the most replicas, each replica needs its own node, and a Pending
    replica makes the cluster autoscaler add one (kubernetes.io/docs/concepts/scheduling-eviction/
    topology-spread-constraints, "minDomains"). Zones are few and fixed, so zone spread sets no minDomains.
    """
    scheduling = cfg.scheduling
    if scheduling.spread == "none" or not can_have_several_replicas(cfg):
        return []
    constraint: dict[str, Any] = {
        "maxSkew": scheduling.max_skew,
        "topologyKey": TOPOLOGY_KEYS[scheduling.spread],
        "whenUnsatisfiable": scheduling.when_unsatisfiable,
        "labelSelector": {"matchLabels": dict(selector)},
        "matchLabelKeys": ["pod-template-hash"],  # spread each ReplicaSet revision on its own
    }
    if scheduling.spread == "hostname" and scheduling.when_unsatisfiable == "DoNotSchedule":
        constraint["minDomains"] = most_replicas(cfg)
    return [constraint]


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
    return {"maxUnavailable": 1, "selector": {"matchLabels": dict(selector)}, "unhealthyPodEvictionPolicy": "AlwaysAllow"}


def render_pod_settings(cfg: StackConfig, *, gpu: bool) -> dict[str, Any]:
    """priorityClassName, runtimeClassName (GPU pods only: the download Job needs no GPU runtime) and
    imagePullSecrets, each only when set, so an unset key leaves the cluster's default."""
    settings: dict[str, Any] = {}
    if cfg.scheduling.priority_class_name:
        settings["priorityClassName"] = cfg.scheduling.priority_class_name
    runtime_class = runtime_class_name(cfg)
    if gpu and runtime_class:
        settings["runtimeClassName"] = runtime_class
    if cfg.server.image_pull_secrets:
        settings["imagePullSecrets"] = [{"name": name} for name in cfg.server.image_pull_secrets]
    return settings


def with_job_pod_settings(cfg: StackConfig, job: dict[str, Any]) -> dict[str, Any]:
    """The download Job (components/render/cache.py) with the pod settings of a pod without GPUs."""
    template = job["spec"]["template"]
    pod = {**template["spec"], **render_pod_settings(cfg, gpu=False)}
    return {**job, "spec": {**job["spec"], "template": {**template, "spec": pod}}}
