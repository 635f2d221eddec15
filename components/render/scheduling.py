"""Where replicas run and how they roll: GPU node affinity, tolerations, spread, strategy, PDB. Pure.

The decisions are the plan's (plan/placement.py); this module writes them as pod spec fields."""

from __future__ import annotations

import copy
from typing import Any

from plan.placement import Placement


def render_affinity(placement: Placement) -> dict[str, Any] | None:
    """Required node affinity on the GPU product, in the label the cluster profile names (the same terms the
    cluster check matches nodes and pools against); `In` so several acceptable products work (docs/sources.md
    §F.1). None for gpu label `none`: gpu.node_selector then names the GPU."""
    if not placement.affinity_terms:
        return None
    terms = copy.deepcopy(list(placement.affinity_terms))  # the plan's stay as resolved
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


def render_tolerations(placement: Placement) -> list[dict[str, Any]]:
    """Tolerate the GPU vendor's taint whatever its value (docs/sources.md §F.2), plus the GPU pool taint the
    cluster profile names (AKS: sku=gpu). The cluster check tests nodes against the same list."""
    return [dict(t) for t in placement.tolerations]


def render_node_selector(placement: Placement) -> dict[str, str]:
    """Extra node labels, e.g. GKE cloud.google.com/gke-accelerator (docs/sources.md §F.3)."""
    return dict(placement.node_selector)


def render_gpu_node_placement(placement: Placement) -> dict[str, Any]:
    """tolerations, affinity and nodeSelector of a pod that must run on the server's GPU nodes."""
    spec: dict[str, Any] = {"tolerations": render_tolerations(placement)}
    affinity = render_affinity(placement)
    if affinity:
        spec["affinity"] = affinity
    if placement.node_selector:
        spec["nodeSelector"] = render_node_selector(placement)
    return spec


def render_topology_spread(placement: Placement, selector: dict[str, str]) -> list[dict[str, Any]]:
    """Spread replicas over nodes (or zones) so one node loss or drain never takes them all (plan/placement.py)."""
    spread = placement.spread
    if spread is None:
        return []
    constraint: dict[str, Any] = {
        "maxSkew": spread.max_skew,
        "topologyKey": spread.topology_key,
        "whenUnsatisfiable": spread.when_unsatisfiable,
        "labelSelector": {"matchLabels": dict(selector)},
        "matchLabelKeys": ["pod-template-hash"],  # spread each ReplicaSet revision on its own
    }
    if spread.min_domains is not None:
        constraint["minDomains"] = spread.min_domains
    return [constraint]


def render_strategy(placement: Placement) -> dict[str, Any]:
    """No surge pod: a spare GPU node rarely exists, and a surge pod would sit Pending forever.

    One replica: Recreate (the GPUs must be freed before the new pod can schedule).
    Several: replace one at a time, so the others keep serving.
    """
    if not placement.several_replicas:
        return {"type": "Recreate"}
    return {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}


def render_pdb_spec(selector: dict[str, str]) -> dict[str, Any]:
    """At most one replica evicted at a time; an unhealthy pod never blocks a node drain.

    maxUnavailable (not minAvailable: 1), so a single-replica stack does not block drains forever.
    unhealthyPodEvictionPolicy: AlwaysAllow is GA since Kubernetes 1.31.
    """
    return {"maxUnavailable": 1, "selector": {"matchLabels": dict(selector)}, "unhealthyPodEvictionPolicy": "AlwaysAllow"}


def render_pod_settings(placement: Placement, *, gpu: bool) -> dict[str, Any]:
    """priorityClassName, runtimeClassName (GPU pods only: the download Job needs no GPU runtime) and
    imagePullSecrets, each only when set, so an unset key leaves the cluster's default."""
    settings: dict[str, Any] = {}
    if placement.priority_class:
        settings["priorityClassName"] = placement.priority_class
    if gpu and placement.runtime_class:
        settings["runtimeClassName"] = placement.runtime_class
    if placement.pull_secrets:
        settings["imagePullSecrets"] = [{"name": name} for name in placement.pull_secrets]
    return settings


def with_job_pod_settings(placement: Placement, job: dict[str, Any]) -> dict[str, Any]:
    """The download Job (components/render/cache.py) with the pod settings of a pod without GPUs."""
    template = job["spec"]["template"]
    pod = {**template["spec"], **render_pod_settings(placement, gpu=False)}
    if placement.job_tolerations and "tolerations" not in pod:  # a download on GPU nodes has them all already
        pod["tolerations"] = [dict(t) for t in placement.job_tolerations]
    return {**job, "spec": {**job["spec"], "template": {**template, "spec": pod}}}
