"""Capacity: whether the cluster holds the most replicas the stack can scale to, and what a multi-node group needs.

What one replica takes comes from the plan (validation/cluster.py capacity_needs fills Requirements): its pods'
GPUs, how many nodes a replica spans (a LeaderWorkerSet group, one pod per node), the RDMA resources every pod
of a group requests, and the hostname spread's minDomains. Kubernetes counts a domain for each node that
passes the pods' node affinity (nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore); "when the number of
eligible domains is less than minDomains, Pod Topology Spread treats the global minimum as 0", so each node
then takes at most maxSkew matching pods (kubernetes.io/docs/concepts/scheduling-eviction/
topology-spread-constraints, "minDomains").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from catalog.gpus import NVIDIA
from cluster.checks import describe_terms, tolerated
from cluster.facts import ClusterFacts, Node, NodePool, quantity_int
from cluster.findings import Finding, Level
from cluster.karpenter import NODEPOOL_LABEL, Candidate, candidate_nodes
from cluster.selectors import Term, matches_terms

LWS_CRD = "leaderworkersets.leaderworkerset.x-k8s.io"  # kubernetes-sigs/lws, served as v1
LWS_VERSION = "v1"  # components/render/leaderworkerset.py API_VERSION


@dataclass(frozen=True)
class Requirements:
    """What the rendered stack asks of the cluster's nodes."""

    gpus_per_pod: int  # GPUs (gpu_resource) each server pod requests
    min_replicas: int  # replicas at creation (KEDA's minReplicaCount with autoscaling)
    max_replicas: int  # the most replicas (KEDA's maxReplicaCount with autoscaling)
    nodes_per_replica: int = 1  # engine.nnodes: pods of one LeaderWorkerSet group, each on its own node
    rdma_resources: Mapping[str, int] = field(default_factory=dict)  # per pod of a group, e.g. {rdma/ib: 1}
    needs_leaderworkerset: bool = False
    spread_min_domains: int | None = None  # the hostname DoNotSchedule spread's minDomains; None: not rendered
    spread_max_skew: int = 1
    gpu_resource: str = NVIDIA.resource  # the sized GPU's vendor's extended resource (plan.server.resources)


def check_capacity(
    facts: ClusterFacts, terms: list[Term], tolerations: Iterable[Mapping[str, str]], needs: Requirements
) -> list[Finding]:
    """How many of the most replicas fit on the nodes (and what the pools can still add), naming the number.
    Nothing when no node or pool offers one replica's GPUs at all: the gpu check blocks on that."""
    rules = list(tolerations)
    matching = [n for n in facts.nodes if matches_terms(n.labels, terms)]  # the spread's domains
    room = [_node_slots(n, needs, rules) for n in matching]
    added, notes = _pool_slots(facts, terms, rules, needs)
    if not any(room) and not added and not needs.rdma_resources:
        return []
    per_node, why = _spread_caps(room + added, needs)
    fit = groups_that_fit(per_node, needs.nodes_per_replica, needs.max_replicas)
    found = [] if added else _rdma_missing(matching, terms, needs)
    return [*found, _finding(needs, fit, sum(1 for r in room if r), len(added), why, terms, notes)]


def _rdma_missing(matching: list[Node], terms: list[Term], needs: Requirements) -> list[Finding]:
    """A resource no matching node advertises leaves every group Pending, whatever the GPUs."""
    return [
        Finding(
            "rdma",
            "block",
            f"no node matching {describe_terms(terms)} has allocatable {name}, which every pod of a group requests "
            f"({count}, multinode.rdma_resources): the groups stay Pending.",
            f"install the RDMA device plugin that advertises {name} on the GPU nodes (docs/multinode.md), "
            "or set multinode.rdma_resources to the resource they advertise.",
        )
        for name, count in sorted(needs.rdma_resources.items())
        if not any(quantity_int(n.allocatable.get(name, 0)) >= count for n in matching)
    ]


def _spread_caps(domains: list[int], needs: Requirements) -> tuple[list[int], str]:
    """Pods per node under the hostname spread: at most the global minimum + maxSkew. The minimum is 0 below
    minDomains, and never above the smallest domain's room (a tainted or cordoned node matching the affinity
    is a domain that stays empty)."""
    if needs.spread_min_domains is None:
        return domains, ""
    skew = needs.spread_max_skew
    if len(domains) < needs.spread_min_domains:
        why = (
            f"The hostname spread's minDomains is {needs.spread_min_domains} but only {len(domains)} node(s) can be "
            f"domains, so Kubernetes treats the global minimum as 0 and each node takes at most {skew} pod(s)."
        )
        return [min(c, skew) for c in domains], why
    floor = min(domains, default=0)
    capped = [min(c, floor + skew) for c in domains]
    if capped == domains:
        return domains, ""
    empty = sum(1 for c in domains if c == floor)
    why = (
        f"{empty} node(s) matching the affinity can hold only {floor} pod(s) (taint, cordon or too few GPUs) but are "
        f"domains of the hostname spread, so each node takes at most {floor + skew} pod(s) (maxSkew {skew})."
    )
    return capped, why


def groups_that_fit(per_node: list[int], group_size: int, most: int) -> int:
    """The most groups (up to `most`) of `group_size` pods, each pod of a group on its own node, when node i
    holds per_node[i] pods: g groups fit iff sum(min(c, g)) >= g x group_size."""
    return max((g for g in range(most + 1) if sum(min(c, g) for c in per_node) >= g * group_size), default=0)


def _node_slots(node: Node, needs: Requirements, rules: list[Mapping[str, str]]) -> int:
    """Server pods the node can hold by its allocatable GPUs and RDMA resources; 0 when cordoned or tainted."""
    if node.unschedulable or tolerated(node.taints, rules):
        return 0
    counts = [quantity_int(node.allocatable.get(needs.gpu_resource, 0)) // needs.gpus_per_pod]
    counts += [quantity_int(node.allocatable.get(name, 0)) // count for name, count in needs.rdma_resources.items()]
    return min(counts)


def _pool_slots(
    facts: ClusterFacts, terms: list[Term], rules: list[Mapping[str, str]], needs: Requirements
) -> tuple[list[int], list[str]]:
    """Pods per node of each node the pools can still create (bounded by the nodes the replicas need), and
    notes on what is not known."""
    wanted = needs.max_replicas * needs.nodes_per_replica
    added: list[int] = []
    notes: list[str] = []
    for pool in facts.node_pools or ():
        if tolerated(pool.taints, rules):
            continue
        best = _best_candidate(pool, terms, needs, notes)
        if best is not None:
            count = _nodes_within_limits(pool, best, facts.nodes, wanted, notes, needs.gpu_resource)
            added += [_candidate_slots(best, needs)] * count
    return added, notes


def _best_candidate(pool: NodePool, terms: list[Term], needs: Requirements, notes: list[str]) -> Candidate | None:
    """The node holding the most pods, one whose every requirement is decided first. One that needs a
    requirement the table does not model is credited with a note, so the finding is at most a warning."""
    candidates = [c for c in candidate_nodes(pool) if matches_terms(c.labels, terms)]
    fitting = [c for c in candidates if _candidate_slots(c, needs) > 0]
    best = max(fitting, key=lambda c: (not c.unknown, _candidate_slots(c, needs)), default=None)
    if best is not None and best.unknown:
        notes.append(f"whether {pool.name}'s requirements on {', '.join(best.unknown)} allow {best.name}")
    if best is None and any(c.gpus is None for c in candidates):
        notes.append(f"the GPU count of {pool.name}'s nodes")
    return best


def _candidate_slots(candidate: Candidate, needs: Requirements) -> int:
    if candidate.gpus is None:
        return 0
    counts = [candidate.gpus // needs.gpus_per_pod]
    counts += [candidate.resources.get(name, 0) // count for name, count in needs.rdma_resources.items()]
    return min(counts)


def _nodes_within_limits(
    pool: NodePool, node: Candidate, nodes: Iterable[Node], wanted: int, notes: list[str], gpu_resource: str
) -> int:
    """New nodes the pool may still add: a declared pool up to its max_nodes (its nodes: those carrying all its
    labels); a NodePool within its spec.limits (nvidia.com/gpu, cpu), counting the nodes it already created
    (label karpenter.sh/nodepool; Karpenter launches no node past a limit: karpenter.sh/docs/concepts/nodepools)."""
    if not pool.karpenter:
        own = sum(1 for n in nodes if pool.labels and all(n.labels.get(k) == v for k, v in pool.labels.items()))
        return wanted if pool.max_nodes is None else min(wanted, max(pool.max_nodes - own, 0))
    karpenter_nodes = [n for n in nodes if n.labels.get(NODEPOOL_LABEL) == pool.name]
    count = wanted
    for limit, per_node, resource in ((pool.gpu_limit, node.gpus, gpu_resource), (pool.cpu_limit, node.cpu, "cpu")):
        if limit is None:
            continue
        if not per_node:
            notes.append(f"how many {node.name} {pool.name}'s {resource} limit allows (its {resource} is not in the table)")
            continue
        used = sum(quantity_int(n.allocatable.get(resource, 0)) for n in karpenter_nodes)
        count = min(count, max(limit - used, 0) // per_node)
    return count


def _finding(needs: Requirements, fit: int, nodes: int, added: int, why: str, terms: list[Term], notes: list[str]) -> Finding:
    most, size = needs.max_replicas, needs.nodes_per_replica
    extra = "".join(f", {count} {name}" for name, count in sorted(needs.rdma_resources.items()))
    pod = f"{needs.gpus_per_pod} {needs.gpu_resource}{extra}"
    shape = f"{pod} on one node" if size == 1 else f"{size} nodes with {pod} each"
    pools = f"; the node pools can add {added}" if added else ""
    where = f"{nodes} node(s) matching {describe_terms(terms)} have room{pools}"
    unknown = f" Not known: {'; '.join(notes)}." if notes else ""
    if fit >= most:
        fits = f"all {most} replicas fit" if most > 1 else "the replica fits"
        return Finding("capacity", "warn" if notes else "ok", f"{fits} ({where}; each needs {shape}).{unknown}")
    spread = f" {why}" if why else ""
    level: Level = "block" if fit < needs.min_replicas else "warn"
    return Finding(
        "capacity",
        level,
        f"{f'only {fit}' if fit else 'none'} of the {most} replicas fit ({where}; each needs {shape}): "
        f"{_stuck(needs, fit)}.{spread}{unknown}",
        _capacity_fix(needs, fit, spread_capped=bool(why)),
    )


def _stuck(needs: Requirements, fit: int) -> str:
    if fit == 0:
        return "no replica can be scheduled"
    if fit < needs.min_replicas:
        return f"the stack starts {needs.min_replicas} and the rest stay Pending"
    if fit + 1 == needs.max_replicas:
        return f"the autoscaler's replica {needs.max_replicas} stays Pending"
    return f"the autoscaler's replicas {fit + 1} to {needs.max_replicas} stay Pending"


def _capacity_fix(needs: Requirements, fit: int, spread_capped: bool) -> str:
    fixes = ["add GPU nodes (or raise the node pool's limits)"]
    if fit > 0:
        key = "autoscaling.max_replica_count" if needs.max_replicas > needs.min_replicas else "replicas"
        fixes.append(
            f"lower {key} to {fit}"
            + (" (and autoscaling.min_replica_count)" if fit < needs.min_replicas and key != "replicas" else "")
        )
    if spread_capped:
        fixes.append("set scheduling.when_unsatisfiable: ScheduleAnyway (replicas may then share a node)")
    return ", or ".join(fixes) + "."


def check_multinode(facts: ClusterFacts, needs: Requirements) -> list[Finding]:
    """A multi-node replica needs the LeaderWorkerSet API; the RDMA resources are counted by check_capacity."""
    if not needs.needs_leaderworkerset:
        return []
    if LWS_VERSION in facts.crds.get(LWS_CRD, ()):
        return [Finding("leaderworkerset", "ok", f"the LeaderWorkerSet API ({LWS_CRD} {LWS_VERSION}) is served.")]
    served = facts.crds.get(LWS_CRD)
    why = (
        f"{LWS_CRD} serves {', '.join(served) or 'no version'}, not {LWS_VERSION}"
        if served is not None
        else f"no {LWS_CRD} CRD"
    )
    return [
        Finding(
            "leaderworkerset",
            "block",
            f"a replica spans {needs.nodes_per_replica} nodes on a LeaderWorkerSet, but the cluster has {why}: "
            "the group cannot be created.",
            "install the LeaderWorkerSet controller (kubernetes-sigs/lws), or set engine.nnodes: 1.",
        )
    ]
