"""What a node pool can create: for a Karpenter NodePool, every GPU instance type of the table
(catalog/instances.py) its requirements allow, with the labels Karpenter puts on their nodes before they
exist (so a pod's GPU affinity can be matched against a pool at zero).

Karpenter's well-known labels (karpenter.sh docs, concepts/scheduling "Well-Known Labels"; values per type in
aws/karpenter-provider-aws website/content/en/docs/reference/instance-types.md) are the instance's attributes.
`karpenter.sh/capacity-type` (spot, on-demand, reserved) is chosen per offering, not per instance type. A
requirement on any other key (a zone, instance-size, -hypervisor, ...) is not modelled: its outcome is
unknown, so the candidate carries the key and the check warns instead of assuming it met.

So one candidate per capacity type the pool allows, labelled with it as Karpenter labels the node it launches
(`karpenter.sh/capacity-type: spot`, concepts/scheduling "Well-Known Labels"): a pod's nodeSelector on it
(gpu.node_selector) then matches only the offerings it names, and the spot check (cluster/disruption.py) sees
which pools can put the server on spot. A pool without the requirement allows every type, "any value available
to the cloud provider may be chosen", and Karpenter "prioritizes Spot offerings if the NodePool allows Spot and
on-demand instances" (aws/karpenter-provider-aws website/content/en/docs/concepts/nodepools.md@05b8ebd0,
"Capacity Type"; docs/sources.md §S14).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from catalog.instances import INSTANCE_TYPES, InstanceType
from catalog.selectors import INSTANCE_TYPE, KARPENTER_GPU_MEMORY, KARPENTER_GPU_NAME
from cluster.facts import NodePool
from cluster.selectors import matches_expression

AWS = "karpenter.k8s.aws/"
CATEGORY, FAMILY, GENERATION = AWS + "instance-category", AWS + "instance-family", AWS + "instance-generation"
GPU_COUNT, CPU, GPU_MANUFACTURER = AWS + "instance-gpu-count", AWS + "instance-cpu", AWS + "instance-gpu-manufacturer"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
CAPACITY_TYPES = ("on-demand", "spot", "reserved")  # karpenter.sh concepts/nodepools, capacity type
NODEPOOL_LABEL = "karpenter.sh/nodepool"  # on every node a NodePool created


@dataclass(frozen=True)
class Candidate:
    """A node a pool could create."""

    labels: Mapping[str, str]
    gpus: int | None  # allocatable nvidia.com/gpu; None: not known
    cpu: int | None = None  # vCPUs, for a NodePool's cpu limit; None: not known
    resources: Mapping[str, int] = field(default_factory=dict)  # extended resources, e.g. vpc.amazonaws.com/efa
    unknown: tuple[str, ...] = ()  # requirement keys the table does not model

    @property
    def name(self) -> str:
        return self.labels.get(INSTANCE_TYPE) or f"{self.labels.get(FAMILY, 'its')} nodes"


def karpenter_labels(instance: InstanceType) -> dict[str, str]:
    """The well-known labels Karpenter sets on a node of this type (instance-types.md's label table)."""
    labels = {
        CATEGORY: instance.category,
        FAMILY: instance.family,
        GPU_MANUFACTURER: "nvidia",
        KARPENTER_GPU_NAME: instance.gpu_name,
        KARPENTER_GPU_MEMORY: str(instance.gpu_memory_mib),
        "kubernetes.io/arch": instance.arch,
        "kubernetes.io/os": "linux",
    }
    optional = {INSTANCE_TYPE: instance.name, GPU_COUNT: instance.gpu_count, CPU: instance.cpu}
    optional[GENERATION] = instance.generation
    return labels | {k: str(v) for k, v in optional.items() if v is not None}


def candidate_nodes(pool: NodePool) -> list[Candidate]:
    """Each node the pool could create. A declared pool (cluster.node_pools): its labels and GPU count."""
    if not pool.karpenter:
        return [Candidate(dict(pool.labels), pool.gpus_per_node)]
    out = []
    for instance in INSTANCE_TYPES:
        for capacity_type in CAPACITY_TYPES:
            labels = {**karpenter_labels(instance), CAPACITY_TYPE: capacity_type, **pool.labels}
            verdicts = [_requirement(labels, r) for r in pool.requirements]
            if False not in verdicts:
                unknown = tuple(str(r.get("key")) for r, v in zip(pool.requirements, verdicts, strict=True) if v is None)
                out.append(Candidate(labels, instance.gpu_count, instance.cpu, dict(instance.resources), unknown))
    return out


def _requirement(labels: Mapping[str, str], requirement: Mapping[str, Any]) -> bool | None:
    """True/False when the instance's labels decide it; None when the key is not modelled."""
    if requirement.get("key") in labels:
        return matches_expression(labels, requirement)
    return None
