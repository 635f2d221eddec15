"""KEDA scaling, decided once: what one replica can hold (capacity), the trigger thresholds derived from it,
the workload the PromQL queries are about, the HPA KEDA creates and the KEDA features the ScaledObject needs.
Pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from catalog import keda
from catalog.vllm_metrics import VersionMetrics
from cluster.versions import SCALED_OBJECT
from config.observability import AutoscalingConfig
from plan.identity import Identity
from plan.names import Names
from preflight.report import Sizing


@dataclass(frozen=True)
class Capacity:
    """What one replica can hold, from the preflight."""

    max_num_seqs: int  # batch slots vLLM schedules at once
    kv_cache_tokens: int  # KV-cache tokens per replica
    tokens_per_request: int  # the preflight's concurrency target: prompt + output tokens per request
    gpu_memory_utilization: float

    @property
    def concurrency(self) -> int:
        """Requests one replica runs at once: batch slots, unless the KV cache fills first."""
        return max(1, min(self.max_num_seqs, self.kv_cache_tokens // max(1, self.tokens_per_request)))


@dataclass(frozen=True)
class Thresholds:
    queue: float  # waiting requests per replica
    running: float  # running requests per replica
    kv_cache_usage: float  # 0..1, average over replicas
    latency_seconds: float  # p95 time to first token


def quote(value: str) -> str:
    """A PromQL double-quoted string literal."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def selector(labels: Mapping[str, str]) -> str:
    return "{" + ",".join(f"{key}={quote(value)}" for key, value in labels.items()) + "}"


@dataclass(frozen=True)
class Workload:
    """The deployment the queries are about. Names are the Kubernetes names, as Prometheus labels carry them."""

    namespace: str
    model_name: str  # vLLM's model_name label: the first --served-model-name
    deployment_name: str  # the Deployment, or the LeaderWorkerSet when kind says so
    hpa_name: str | None = None  # keda-hpa-<ScaledObject name> when autoscaling is on
    kind: str = "Deployment"  # StatefulSet (per-replica volumes, config/delivery.py), LeaderWorkerSet (engine.nnodes > 1)

    @property
    def scale_target(self) -> dict[str, str]:
        api = "leaderworkerset.x-k8s.io/v1" if self.kind == "LeaderWorkerSet" else "apps/v1"
        return {"apiVersion": api, "kind": self.kind, "name": self.deployment_name}

    def replica_series(self) -> tuple[str, str, str]:
        """(wanted, available, name label) from kube-state-metrics (kubernetes/kube-state-metrics
        docs/metrics/workload/{deployment,statefulset}-metrics.md). A LeaderWorkerSet's leader StatefulSet carries its
        name and counts groups; a leader is ready only when its whole group joined (docs/multinode.md)."""
        if self.kind in ("StatefulSet", "LeaderWorkerSet"):
            match = selector({"namespace": self.namespace, "statefulset": self.deployment_name})
            return (f"kube_statefulset_replicas{match}", f"kube_statefulset_status_replicas_ready{match}", "statefulset")
        match = selector({"namespace": self.namespace, "deployment": self.deployment_name})
        return f"kube_deployment_spec_replicas{match}", f"kube_deployment_status_replicas_available{match}", "deployment"

    @property
    def vllm(self) -> str:
        """Selector for vLLM's own series; `namespace` comes from the scrape, `model_name` from vLLM."""
        return selector({"namespace": self.namespace, "model_name": self.model_name})

    @property
    def pod_regex(self) -> str:
        """Pods of the Deployment: <deployment>-<replicaset hash>-<suffix>; of a StatefulSet: <name>-<ordinal>; of a
        LeaderWorkerSet: <lws>-<group> and <lws>-<group>-<worker> (leaderworkerset_types.go@024af084:100-110).
        PromQL anchors regexes."""
        suffixes = {"StatefulSet": "-[0-9]+", "LeaderWorkerSet": "-[0-9]+(-[0-9]+)?"}
        return self.deployment_name.replace(".", r"\.") + suffixes.get(self.kind, "-[a-z0-9]+-[a-z0-9]+")

    @property
    def leader_regex(self) -> str:
        """A LeaderWorkerSet's leader pods, <lws>-<group> (leaderworkerset_types.go@024af084:100-110): one per
        group, deleted and created again whenever LWS recreates its group."""
        return self.deployment_name.replace(".", r"\.") + "-[0-9]+"

    def leaders(self) -> str:
        """Selector for kube-state-metrics series about the leader pods (leader_regex)."""
        return "{" + f"namespace={quote(self.namespace)},pod=~{quote(self.leader_regex)}" + "}"

    def pods(self, namespace_label: str = "namespace", pod_label: str = "pod", **extra: str) -> str:
        """Selector for exporter series about this Deployment's pods (kube-state-metrics, DCGM, HTTP)."""
        matchers = [f"{namespace_label}={quote(self.namespace)}", f"{pod_label}=~{quote(self.pod_regex)}"]
        matchers += [f"{key}={quote(value)}" for key, value in extra.items()]
        return "{" + ",".join(matchers) + "}"


@dataclass(frozen=True)
class ThanosAccess:
    """KEDA's bearer token for OpenShift's Thanos Querier (catalog/profiles.py UserWorkloadMonitoring): one
    ServiceAccount, its token Secret, the Role reading the namespace's metrics, its RoleBinding and the
    TriggerAuthentication the triggers name, all called `name`, in `namespace` (the tenancy port scopes every
    query to it)."""

    name: str
    namespace: str
    labels: dict[str, str]

    @property
    def token_secret(self) -> str:
        return f"{self.name}-token"


def thanos_access(identity: Identity) -> ThanosAccess:
    return ThanosAccess(identity.names.thanos_reader, identity.namespace, identity.labels("autoscaling"))


@dataclass(frozen=True)
class ScalingPlan:
    config: AutoscalingConfig
    scaled_object_name: str  # the instance
    labels: dict[str, str]  # the server's selector labels, also on the ScaledObject
    capacity: Capacity
    thresholds: Thresholds  # the configured ones, the unset ones derived from capacity
    workload: Workload  # what the triggers, alerts and dashboard query; hpa_name set when autoscaling is on
    server_address: str  # Prometheus for the triggers; "" when not derivable (refused with autoscaling on)
    keda_features: frozenset[str]  # cluster/versions.py KEDA_FEATURES keys the ScaledObject uses
    metrics: VersionMetrics  # the vLLM release's metric names (catalog/vllm_metrics.py)
    thanos: ThanosAccess | None = None  # OpenShift: the triggers authenticate to the Thanos Querier

    @property
    def enabled(self) -> bool:
        return self.config.enabled


def capacity_of(report: Sizing) -> Capacity:
    return Capacity(
        max_num_seqs=report.resolved.max_num_seqs,
        kv_cache_tokens=report.kv_cache_tokens,
        tokens_per_request=report.target_tokens_per_request,
        gpu_memory_utilization=report.resolved.gpu_memory_utilization,
    )


def derived_queue_threshold(fraction: float, capacity: Capacity) -> int:
    """Waiting requests per replica worth another replica.

    A replica running `concurrency` requests finishes them at concurrency / duration per second, so a queue of
    fraction x concurrency waits about fraction x one request's duration. 0.1 of 256 slots: 26 waiting.
    """
    return max(1, math.ceil(fraction * capacity.concurrency))


def derived_running_threshold(headroom: float, capacity: Capacity) -> int:
    """Running requests per replica to aim for: the replica's concurrency less headroom for bursts."""
    return max(1, math.floor(headroom * capacity.concurrency))


def derive_thresholds(cfg: AutoscalingConfig, capacity: Capacity) -> Thresholds:
    """The configured thresholds, with the unset ones derived from capacity."""
    queue = cfg.queue_threshold or derived_queue_threshold(cfg.queue_fraction, capacity)
    running = cfg.running_threshold or derived_running_threshold(cfg.running_headroom, capacity)
    return Thresholds(
        queue=queue, running=running, kv_cache_usage=cfg.kv_cache_usage_threshold, latency_seconds=cfg.latency_threshold_seconds
    )


KEDA_HPA_PREFIX = "keda-hpa-"  # KEDA's default HPA name: keda-hpa-<ScaledObject name>


def hpa_name(scaled_object_name: str) -> str:
    """The HPA KEDA creates (and the alerts watch): KEDA's default name, set explicitly."""
    return f"{KEDA_HPA_PREFIX}{scaled_object_name}"


def keda_features(cfg: AutoscalingConfig) -> frozenset[str]:
    """The version-gated KEDA features the ScaledObject uses: fallback.behavior where keda_version has it. Every
    trigger is AverageValue (components/render/keda.py trigger_queries), so never a fallback beside a Value
    trigger. The renderer follows this set, and the cluster check compares it with the installed KEDA."""
    features = {SCALED_OBJECT}
    if keda.supports(cfg.keda_version, keda.Feature.FALLBACK_BEHAVIOR):
        features.add(str(keda.Feature.FALLBACK_BEHAVIOR))
    return frozenset(features)


def workload_name(names: Names, nnodes: int) -> str:
    """The server workload's name: the Deployment's or StatefulSet's, or with engine.nnodes > 1 the
    LeaderWorkerSet's."""
    return names.group if nnodes > 1 else names.server


def resolve_scaling(
    cfg: AutoscalingConfig,
    identity: Identity,
    report: Sizing,
    workload: Workload,
    server_address: str | None,
    metrics: VersionMetrics,
    thanos: ThanosAccess | None = None,
) -> ScalingPlan:
    """`workload` as the queries see it without KEDA; the HPA's name is added when autoscaling is on."""
    capacity, instance = capacity_of(report), identity.instance
    return ScalingPlan(
        config=cfg,
        scaled_object_name=instance,
        labels=identity.selector("server"),
        capacity=capacity,
        thresholds=derive_thresholds(cfg, capacity),
        workload=replace(workload, hpa_name=hpa_name(instance) if cfg.enabled else None),
        server_address=server_address or "",
        keda_features=keda_features(cfg),
        metrics=metrics,
        thanos=thanos,
    )
