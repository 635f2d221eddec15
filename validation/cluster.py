"""The cluster checks for one stack: the plan's values, checked against the cluster's facts.

This is the only place that maps the plan onto the plain arguments of cluster/checks.py; the renderers read
the same plan values (the KEDA features, the Prometheus wiring), so the checks follow what is rendered.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from catalog import keda_http
from catalog.profiles import DO_NOT_EVICT
from catalog.vllm_images import image_cuda_major
from cluster import capacity, checks
from cluster.capacity import Requirements
from cluster.checks import ReplicaClaims
from cluster.disruption import check_gke_spot, check_karpenter_spot, check_karpenter_termination
from cluster.dns import check_dns
from cluster.facts import ClaimTemplate, ClusterFacts, NodePool
from cluster.findings import Finding
from cluster.identity import (
    POD_IDENTITY_AGENT_NAMESPACE,
    check_azure_identity_webhook,
    check_gke_metadata_server,
    check_pod_identity_agent,
)
from cluster.report import ClusterResult
from cluster.store import check_bucket_store
from config.cluster import ClusterConfig
from plan import Plan
from plan.delivery import MODEL_VOLUME
from plan.placement import TOPOLOGY_KEYS, Placement

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # set on every namespace by the API server (1.21+)


def declared_pools(cluster: ClusterConfig) -> tuple[NodePool, ...]:
    """cluster.node_pools as facts: autoscaled pools the API does not show (GKE/AKS at zero nodes)."""
    return tuple(
        NodePool(name=p.name, requirements=(), labels=dict(p.labels), gpus_per_node=p.gpus, max_nodes=p.max_nodes)
        for p in cluster.node_pools
        if p.max_nodes != 0
    )


def gpu_terms(placement: Placement) -> list[dict[str, list[dict[str, Any]]]]:
    """The affinity terms the pods carry, each ANDed with gpu.node_selector (the pods' nodeSelector)."""
    extra = [{"key": k, "operator": "In", "values": [v]} for k, v in sorted(placement.node_selector.items())]
    if not placement.affinity_terms:
        return [{"matchExpressions": extra}] if extra else []
    return [{"matchExpressions": [*t["matchExpressions"], *extra]} for t in placement.affinity_terms]


def capacity_needs(plan: Plan) -> Requirements:
    """What the rendered stack asks of the nodes (cluster/capacity.py), from the plan the renderers read."""
    spread, multinode = plan.placement.spread, plan.multinode
    holds = spread is not None and spread.topology_key == TOPOLOGY_KEYS["hostname"]
    hostname = spread if holds and spread is not None and spread.when_unsatisfiable == "DoNotSchedule" else None
    return Requirements(
        gpus_per_pod=plan.server.resources.gpus,
        gpu_resource=plan.server.resources.gpu_resource,
        # At zero the first request needs one replica: a cluster that cannot hold one never answers it.
        min_replicas=max(1, plan.server.replicas),
        max_replicas=plan.delivery.most_replicas,
        nodes_per_replica=1 if multinode is None else multinode.nnodes,
        rdma_resources={} if multinode is None else dict(multinode.rdma_resources),
        needs_leaderworkerset=multinode is not None,
        spread_min_domains=None if hostname is None else hostname.min_domains,
        spread_max_skew=1 if hostname is None else hostname.max_skew,
    )


def replica_claims(plan: Plan) -> ReplicaClaims:
    """The claim template the StatefulSet renders (components/render/cache.py claim_spec reads the same plan)."""
    delivery = plan.delivery
    volume = delivery.volume
    template = ClaimTemplate(MODEL_VOLUME, f"{delivery.cache_size_gib}Gi", volume.storage_class_name if volume else None)
    return ReplicaClaims(
        namespace=plan.identity.namespace,
        statefulset=plan.identity.names.server,
        template=template,
        replicas=delivery.most_replicas,
        back_seconds=delivery.new_replica_seconds,  # a per-replica claim's download is in it
        accepted=delivery.accept_replacement_outage,
    )


def label_fix(cluster: ClusterConfig) -> str:
    return (
        f"set cluster.profile (now {cluster.profile}) to your provider: gke, eks-karpenter, aks, gpu-operator, "
        "openshift or generic; or cluster.gpu_label to the label your GPU nodes carry; or gpu.product / "
        "gpu.also_accept to a GPU the cluster has; declare an autoscaled pool with no node yet in cluster.node_pools."
    )


def check_cluster(plan: Plan, facts: ClusterFacts) -> ClusterResult:
    """Every cluster check for a Kubernetes stack (the plan sizes what is rendered, e.g. KEDA thresholds)."""
    return ClusterResult(True, facts.source, tuple(_findings(plan, facts)))


def _findings(plan: Plan, facts: ClusterFacts) -> list[Finding]:
    namespace, vllm, gpus = plan.identity.namespace, plan.delivery.vllm, plan.server.resources.gpus
    terms = gpu_terms(plan.placement)
    vendor = plan.engine.gpu.vendor
    found = checks.check_gpu(facts, terms, gpus, plan.placement.tolerations, label_fix(plan.cluster), vendor)
    found += _disruption(plan, facts, terms)
    needs = capacity_needs(plan)
    found += capacity.check_capacity(facts, terms, plan.placement.tolerations, needs) + capacity.check_multinode(facts, needs)
    found += checks.check_driver(
        facts, terms, image_cuda_major(vllm.image, vllm.image_tag, vllm.version), vllm.image_ref, vendor
    )
    workload_identity = plan.delivery.workload_identity
    found += check_gke_metadata_server(facts, terms, workload_identity, vendor)
    found += check_pod_identity_agent(facts, terms, workload_identity, vendor)
    found += check_azure_identity_webhook(facts, workload_identity)
    volume = plan.delivery.volume
    if plan.delivery.cache_config.existing_claim is None and volume is not None:
        found += checks.check_storage(facts, volume.storage_class_name, volume.access_mode)
        node_local = plan.delivery.node_local
        found += checks.check_node_local(facts, volume.storage_class_name, node_local, plan.delivery.cache_size_gib)
        if plan.delivery.probes.load_throughput_gib_per_s is None:
            budget, probe = plan.delivery.budget, plan.delivery.budget.probe
            other = probe.engine_start_seconds + probe.cuda_graph_seconds
            delivery_terms = checks.DeliveryTerms(budget.throughput.mib_per_s, budget.weights_gib, other, probe.total_seconds)
            size = plan.delivery.cache_size_gib
            found += checks.check_read_throughput(facts, volume.storage_class_name, size, delivery_terms)
    if plan.delivery.mode == "per_replica_volume":
        found += checks.check_replica_claims(facts, replica_claims(plan))
    if plan.scaling.enabled:
        found += checks.check_keda(facts, set(plan.scaling.keda_features))
        if plan.zero is None:  # the add-on's ScaledObjects carry no fallback, the only version-gated field
            found += checks.check_keda_release(facts.keda_version, plan.scaling.config.keda_version)
    if plan.zero is not None:
        add_on = plan.zero.config
        crd = keda_http.INTERCEPTOR_ROUTE_CRD if add_on.resource == "InterceptorRoute" else keda_http.HTTP_SCALED_OBJECT_CRD
        add_on_needs = checks.AddOnNeeds(add_on.version, add_on.namespace, add_on.request_timeout_seconds, crd)
        found += checks.check_http_add_on(facts, add_on_needs)
    if plan.monitoring.enabled:
        wiring = plan.monitoring.wiring
        ns_labels = {NAMESPACE_NAME_LABEL: namespace, **_namespace_labels(facts, namespace)}
        found += checks.check_prometheus(
            facts,
            wiring.monitor_kind,
            wiring.monitor_labels,
            wiring.rule_labels,
            namespace,
            ns_labels,
            # KEDA on OpenShift queries the Thanos Querier, which reads every Prometheus: no Service to match;
            # at zero the add-on scales on the interceptor's counts, not a Prometheus query.
            wiring.server_address if plan.scaling.enabled and plan.scaling.thanos is None and plan.zero is None else None,
        )
    identity, security = plan.identity, plan.pod_security
    home = checks.NamespaceNeeds(namespace, identity.creates_namespace, identity.instance, security.level, security.why)
    found += checks.check_namespace(facts, home)
    flows = plan.traffic.flows
    if flows.enabled:
        found += check_dns(facts, flows.dns.addresses, plan.cluster.profile)
    store = flows.bucket
    if store is not None and store.namespace is not None:
        opened = store.ports if flows.enabled else None
        found += check_bucket_store(facts, store.host, store.namespace, store.url_port, opened)
    return found


def _disruption(plan: Plan, facts: ClusterFacts, terms: list[dict[str, list[dict[str, Any]]]]) -> list[Finding]:
    """Karpenter's node replacement and a spot node's reclaim, against the server's grace (cluster/disruption.py)."""
    gpus, tolerations = plan.server.resources.gpus, plan.placement.tolerations
    grace = plan.server.termination_grace_period_seconds
    fits = checks.candidates_that_fit(facts.node_pools or (), terms, gpus, tolerations)
    # What Karpenter does to a node under the server pods depends on the annotation they are rendered with.
    do_not_disrupt = plan.placement.pod_annotations.items() >= DO_NOT_EVICT["karpenter"].items()
    found = []
    if do_not_disrupt:
        found += check_karpenter_termination(checks.pools_of(fits), grace)
    found += check_karpenter_spot(fits, grace, do_not_disrupt)
    nodes = checks.nodes_that_fit(facts, terms, gpus, tolerations, plan.engine.gpu.vendor)
    return found + check_gke_spot(nodes, fits, grace)


def _namespace_labels(facts: ClusterFacts, name: str) -> dict[str, str]:
    return dict((facts.namespaces or {}).get(name, {}))


def check_snapshots(plan: Plan, paths: Sequence[str | Path]) -> ClusterResult:
    """The CLI's and a stack's snapshot path. Raises cluster.snapshot.SnapshotError for a bad file."""
    from cluster.snapshot import read_snapshots

    if plan.target != "kubernetes":
        from cluster.report import not_checked

        return not_checked("target docker: no cluster")
    return check_cluster(plan, read_snapshots(paths, declared_pools(plan.cluster)))


def program_cluster_result(plan: Plan, kubeconfig: str | None, context: str | None) -> ClusterResult:
    """The Pulumi program's path: cluster.snapshot_files when set, else the live cluster (read-only).

    A live read that fails reports `not checked` (the reason included), or stops the program when
    cluster.block_on_read_failure is true. Raises ConfigError for a bad snapshot file or a blocking failure.
    """
    from cluster.report import not_checked
    from config.errors import ConfigError, ConfigIssue

    cluster = plan.cluster
    if plan.target != "kubernetes":
        return not_checked("target docker: no cluster")
    if plan.render_yaml_to_directory is not None:
        return not_checked("manifests are written to a folder, not applied")
    if cluster.snapshot_files:
        from cluster.snapshot import SnapshotError

        try:
            return check_snapshots(plan, cluster.snapshot_files)
        except SnapshotError as error:
            raise ConfigError([ConfigIssue("cluster.snapshot_files", str(error))]) from None
    if not cluster.read_live:
        return not_checked("cluster.read_live is false and no cluster.snapshot_files are set")
    return _live(plan, kubeconfig, context)


def _live(plan: Plan, kubeconfig: str | None, context: str | None) -> ClusterResult:
    from cluster import live
    from cluster.report import not_checked
    from config.errors import ConfigError, ConfigIssue

    cluster = plan.cluster
    try:
        facts = live.read_live(
            kubeconfig,
            context,
            cluster.keda_operator_namespace,
            declared_pools(cluster),
            namespace=plan.identity.namespace,
            store_namespace=store.namespace if (store := plan.traffic.flows.bucket) is not None else None,
            daemonset_namespace=POD_IDENTITY_AGENT_NAMESPACE if plan.delivery.workload_identity == "eks-pod-identity" else None,
            webhooks=plan.delivery.workload_identity == "azure-workload-identity",
        )
    except live.LiveReadError as error:
        if cluster.block_on_read_failure:
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
    return check_cluster(plan, facts)
