"""Where the server pods run, decided once: GPU node affinity, tolerations, node selector, runtime and priority
class, image pull secrets, topology spread and whether several replicas can run at once. Pure.

The affinity terms are the ones the cluster check matches nodes and pools against (catalog/selectors.py), so
the product the preflight sized for and the label the pods select on cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from catalog.profiles import DO_NOT_EVICT
from catalog.selectors import Term, gpu_selector_terms, label_scheme
from config.cluster import ClusterConfig
from config.gpu import GpuConfig
from config.kubernetes import SchedulingConfig
from config.observability import AutoscalingConfig
from config.stack import StackConfig

TOPOLOGY_KEYS = {"hostname": "kubernetes.io/hostname", "zone": "topology.kubernetes.io/zone"}


@dataclass(frozen=True)
class Spread:
    """One topologySpreadConstraint over the server's pods."""

    topology_key: str
    max_skew: int
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"]
    min_domains: int | None  # hostname spread that must hold: each replica on its own node


@dataclass(frozen=True)
class Placement:
    affinity_terms: tuple[Term, ...]  # required node affinity on the GPU product; empty for gpu label `none`
    tolerations: tuple[dict[str, str], ...]  # the GPU vendor's taint, the profile's GPU pool taints, then the stack's
    job_tolerations: tuple[dict[str, str], ...]  # scheduling.tolerations: also on the download and copy pods
    node_selector: dict[str, str]  # gpu.node_selector, e.g. GKE's accelerator label
    runtime_class: str | None  # GPU pods only: the download Job needs no GPU runtime
    priority_class: str | None
    pull_secrets: tuple[str, ...]
    several_replicas: bool  # more than one replica can run at once: rolling updates, spread
    spread: Spread | None = field(default=None)  # None: spread none, or a single replica
    pod_annotations: dict[str, str] = field(default_factory=dict)  # on the GPU pods' templates (do_not_evict)


def gpu_affinity_terms(gpu: GpuConfig, scheduling: SchedulingConfig, cluster: ClusterConfig) -> tuple[Term, ...]:
    """The products the preflight sized for, in the label the cluster profile says identifies them."""
    products = list(gpu.products)
    scheme = label_scheme(scheduling.require_gpu_product_label, cluster.gpu_label_scheme)
    return tuple(gpu_selector_terms(scheme, products, [gpu.spec_for(p).gfd_product for p in products]))


def gpu_tolerations(gpu: GpuConfig, cluster: ClusterConfig) -> tuple[dict[str, str], ...]:
    """Each vendor's GPU taint (any value), then the profile's GPU pool taints (AKS: sku=gpu)."""
    vendors = dict.fromkeys(gpu.spec_for(p).vendor for p in gpu.products)
    return (*(vendor.toleration for vendor in vendors), *cluster.defaults.gpu_tolerations)


def extra_tolerations(scheduling: SchedulingConfig) -> tuple[dict[str, str], ...]:
    return tuple(toleration.as_toleration() for toleration in scheduling.tolerations)


def runtime_class_name(scheduling: SchedulingConfig, cluster: ClusterConfig) -> str | None:
    """scheduling.runtime_class_name, or the profile's runtime class for GPU pods."""
    return scheduling.runtime_class_name or cluster.defaults.runtime_class


def do_not_evict(cluster: ClusterConfig) -> dict[str, str]:
    """The annotation the cluster's node autoscaler honours before removing a serving pod's node."""
    return dict(DO_NOT_EVICT[cluster.autoscaler])


def can_have_several_replicas(replicas: int, autoscaling: AutoscalingConfig) -> bool:
    return replicas > 1 or (autoscaling.enabled and autoscaling.max_replica_count > 1)


def spread(scheduling: SchedulingConfig, several_replicas: bool, most_replicas: int) -> Spread | None:
    """Spread replicas over nodes (or zones) so one node loss or drain never takes them all.

    Skew is counted over the nodes that exist, so with one GPU node a second replica would fit there at skew 0.
    minDomains (GA in Kubernetes 1.30, DoNotSchedule only) counts the missing nodes as empty domains: with
    hostname spread and minDomains = the most replicas, each replica needs its own node, and a Pending
    replica makes the cluster autoscaler add one (kubernetes.io/docs/concepts/scheduling-eviction/
    topology-spread-constraints, "minDomains"). Zones are few and fixed, so zone spread sets no minDomains.
    """
    if scheduling.spread == "none" or not several_replicas:
        return None
    holds = scheduling.spread == "hostname" and scheduling.when_unsatisfiable == "DoNotSchedule"
    return Spread(
        TOPOLOGY_KEYS[scheduling.spread],
        scheduling.max_skew,
        scheduling.when_unsatisfiable,
        most_replicas if holds else None,
    )


def resolve_placement(cfg: StackConfig, most_replicas: int) -> Placement:
    several = can_have_several_replicas(cfg.replicas, cfg.autoscaling)
    job_tolerations = extra_tolerations(cfg.scheduling)
    return Placement(
        affinity_terms=gpu_affinity_terms(cfg.gpu, cfg.scheduling, cfg.cluster),
        tolerations=(*gpu_tolerations(cfg.gpu, cfg.cluster), *job_tolerations),
        job_tolerations=job_tolerations,
        node_selector=dict(cfg.gpu.node_selector),
        runtime_class=runtime_class_name(cfg.scheduling, cfg.cluster),
        priority_class=cfg.scheduling.priority_class_name,
        pull_secrets=tuple(cfg.server.image_pull_secrets),
        several_replicas=several,
        spread=spread(cfg.scheduling, several, most_replicas),
        pod_annotations=do_not_evict(cfg.cluster),
    )
