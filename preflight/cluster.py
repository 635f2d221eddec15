"""The cluster checks for one stack: the values this program renders, checked against the cluster's facts.

This is the only place that maps the config onto the plain arguments of cluster/checks.py; wire a rendered
value here when the renderer changes (the checks themselves take no config).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cluster.facts import ClusterFacts, NodePool
from cluster.findings import Finding
from cluster.report import ClusterResult
from config.stack import StackConfig
from plan.names import namespace_name
from preflight.report import PreflightReport

if TYPE_CHECKING:
    from cluster.capacity import Requirements

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # set on every namespace by the API server (1.21+)


def stack_name_of(path: str | Path) -> str:
    """`stacks/Pulumi.prod.yaml` -> `prod`, as Pulumi names the stack of a stack file."""
    return Path(path).name.removeprefix("Pulumi.").removesuffix(".yaml").removesuffix(".yml")


def declared_pools(cfg: StackConfig) -> tuple[NodePool, ...]:
    """cluster.node_pools as facts: autoscaled pools the API does not show (GKE/AKS at zero nodes)."""
    return tuple(
        NodePool(name=p.name, requirements=(), labels=dict(p.labels), gpus_per_node=p.gpus, max_nodes=p.max_nodes)
        for p in cfg.cluster.node_pools
        if p.max_nodes != 0
    )


def gpu_terms(cfg: StackConfig) -> list[dict[str, list[dict[str, Any]]]]:
    """The affinity terms the pods carry, each ANDed with gpu.node_selector (the pods' nodeSelector)."""
    from config.cluster import gpu_affinity_terms

    extra = [{"key": k, "operator": "In", "values": [v]} for k, v in sorted(cfg.gpu.node_selector.items())]
    terms = gpu_affinity_terms(cfg)
    if not terms:
        return [{"matchExpressions": extra}] if extra else []
    return [{"matchExpressions": [*t["matchExpressions"], *extra]} for t in terms]


def keda_features(cfg: StackConfig, report: PreflightReport, instance: str) -> set[str]:
    """The KEDA features of the ScaledObject this stack renders (components/render/keda.py), read off the
    rendered spec, so the check follows the renderer (cluster/versions.py KEDA_FEATURES)."""
    from catalog.vllm_metrics import metrics_for
    from cluster.versions import keda_features_of
    from components.render.keda import capacity_from_report, derive_thresholds, hpa_name, render_scaled_object_spec
    from components.render.prometheus import server_address
    from components.render.promql import Workload
    from config.delivery import workload_kind
    from plan.names import Names

    workload = Workload(
        namespace=namespace_name(cfg.namespace, instance),
        model_name=cfg.served_model_name,
        deployment_name=Names(instance).server,
        hpa_name=hpa_name(instance),
        kind=workload_kind(cfg),
    )
    thresholds = derive_thresholds(cfg.autoscaling, capacity_from_report(report))
    return keda_features_of(
        render_scaled_object_spec(
            instance, cfg.autoscaling, thresholds, metrics_for(cfg.vllm.version), workload, server_address(cfg) or ""
        )
    )


def capacity_needs(cfg: StackConfig) -> Requirements:
    """What the rendered stack asks of the nodes (cluster/capacity.py); the spread is read off the rendered
    constraint, so the check follows the renderer."""
    from cluster.capacity import Requirements
    from components.render.scheduling import TOPOLOGY_KEYS, most_replicas, render_topology_spread

    spread = [
        c
        for c in render_topology_spread(cfg, {})
        if c["topologyKey"] == TOPOLOGY_KEYS["hostname"] and c["whenUnsatisfiable"] == "DoNotSchedule"
    ]
    multinode = cfg.engine.nnodes > 1
    return Requirements(
        gpus_per_pod=cfg.engine.gpus_per_node,
        min_replicas=cfg.autoscaling.min_replica_count if cfg.autoscaling.enabled else cfg.replicas,
        max_replicas=most_replicas(cfg),
        nodes_per_replica=cfg.engine.nnodes,
        rdma_resources=dict(cfg.multinode.rdma_resources) if multinode else {},
        needs_leaderworkerset=multinode,
        spread_min_domains=spread[0].get("minDomains") if spread else None,
        spread_max_skew=spread[0]["maxSkew"] if spread else 1,
    )


def label_fix(cfg: StackConfig) -> str:
    return (
        f"set cluster.profile (now {cfg.cluster.profile}) to your provider: gke, eks-karpenter, aks, gpu-operator, "
        "openshift or generic; or cluster.gpu_label to the label your GPU nodes carry; or gpu.product / "
        "gpu.also_accept to a GPU the cluster has; declare an autoscaled pool with no node yet in cluster.node_pools."
    )


def check_cluster(cfg: StackConfig, report: PreflightReport, facts: ClusterFacts, instance: str) -> ClusterResult:
    """Every cluster check for a Kubernetes stack (the report sizes what is rendered, e.g. KEDA thresholds)."""
    return ClusterResult(True, facts.source, tuple(_findings(cfg, report, facts, instance)))


def _findings(cfg: StackConfig, report: PreflightReport, facts: ClusterFacts, instance: str) -> list[Finding]:
    from catalog.vllm_versions import RELEASES
    from cluster import capacity, checks
    from cluster.versions import image_cuda_major
    from components.render.prometheus import prometheus_wiring
    from config.cluster import gpu_tolerations
    from config.delivery import effective_volume

    terms = gpu_terms(cfg)
    tag = cfg.vllm.tag or RELEASES[cfg.vllm.version].image_tag
    found = checks.check_gpu(facts, terms, cfg.engine.gpus_per_node, gpu_tolerations(cfg), label_fix(cfg))
    needs = capacity_needs(cfg)
    found += capacity.check_capacity(facts, terms, gpu_tolerations(cfg), needs) + capacity.check_multinode(facts, needs)
    found += checks.check_driver(facts, terms, image_cuda_major(cfg.vllm.image, tag, cfg.vllm.version), cfg.vllm.image_ref)
    volume = effective_volume(cfg)
    if cfg.cache.existing_claim is None and volume is not None:
        found += checks.check_storage(facts, volume.storage_class_name, volume.access_mode)
    if cfg.autoscaling.enabled:
        found += checks.check_keda(facts, keda_features(cfg, report, instance))
    if cfg.monitoring.enabled:
        wiring = prometheus_wiring(cfg, instance)
        namespace = namespace_name(cfg.namespace, instance)
        ns_labels = {NAMESPACE_NAME_LABEL: namespace, **_namespace_labels(facts, namespace)}
        found += checks.check_prometheus(
            facts,
            wiring.monitor_kind,
            wiring.monitor_labels,
            wiring.rule_labels,
            namespace,
            ns_labels,
            wiring.server_address if cfg.autoscaling.enabled else None,
        )
    found += checks.check_namespace(facts, namespace_name(cfg.namespace, instance), cfg.namespace.creates, instance)
    return found


def _namespace_labels(facts: ClusterFacts, name: str) -> dict[str, str]:
    return dict((facts.namespaces or {}).get(name, {}))


def check_snapshots(cfg: StackConfig, report: PreflightReport, paths: Sequence[str | Path], stack: str) -> ClusterResult:
    """The CLI's and a stack's snapshot path. Raises cluster.snapshot.SnapshotError for a bad file."""
    from cluster.snapshot import read_snapshots
    from plan.names import instance_name

    if cfg.target != "kubernetes":
        from cluster.report import not_checked

        return not_checked("target docker: no cluster")
    return check_cluster(cfg, report, read_snapshots(paths, declared_pools(cfg)), instance_name(stack))


def program_cluster_result(
    cfg: StackConfig, report: PreflightReport, stack: str, kubeconfig: str | None, context: str | None
) -> ClusterResult:
    """The Pulumi program's path: cluster.snapshot_files when set, else the live cluster (read-only).

    A live read that fails reports `not checked` (the reason included), or stops the program when
    cluster.block_on_read_failure is true. Raises ConfigError for a bad snapshot file or a blocking failure.
    """
    from cluster.report import not_checked
    from config.errors import ConfigError, ConfigIssue

    if cfg.target != "kubernetes":
        return not_checked("target docker: no cluster")
    if cfg.render_yaml_to_directory is not None:
        return not_checked("manifests are written to a folder, not applied")
    if cfg.cluster.snapshot_files:
        from cluster.snapshot import SnapshotError

        try:
            return check_snapshots(cfg, report, cfg.cluster.snapshot_files, stack)
        except SnapshotError as error:
            raise ConfigError([ConfigIssue("cluster.snapshot_files", str(error))]) from None
    if not cfg.cluster.read_live:
        return not_checked("cluster.read_live is false and no cluster.snapshot_files are set")
    return _live(cfg, report, stack, kubeconfig, context)


def _live(cfg: StackConfig, report: PreflightReport, stack: str, kubeconfig: str | None, context: str | None) -> ClusterResult:
    from cluster import live
    from cluster.report import not_checked
    from config.errors import ConfigError, ConfigIssue
    from plan.names import instance_name

    try:
        facts = live.read_live(kubeconfig, context, cfg.cluster.keda_namespace, declared_pools(cfg))
    except live.LiveReadError as error:
        if cfg.cluster.block_on_read_failure:
            raise ConfigError(
                [
                    ConfigIssue(
                        "cluster.block_on_read_failure",
                        f"is true, and the cluster cannot be read: {error}.",
                        "fix the kubeconfig/context (kubernetes:context), or set cluster.snapshot_files to a kubectl snapshot.",
                    )
                ]
            ) from None
        return not_checked(f"the live cluster could not be read: {error}")
    return check_cluster(cfg, report, facts, instance_name(stack))
