"""What a Karpenter NodePool can create: the GPU instance types it may pick, with the labels Karpenter
puts on their nodes before they exist (so a pod's GPU affinity can be matched against a pool at zero).

Values: aws/karpenter-provider-aws website/content/en/docs/reference/instance-types.md@1d927085 (shared
reference docs/sources.md §S3): p4d a100/40960 MiB x8, p4de a100/81920 x8, p5.48xlarge
h100/81920 x8, p5.4xlarge h100/81920 x1, p5e/p5en h200/144384 x8; a10g (g5, 22888), l4 (g6, 22888),
l40s (g6e, 45776). g5.48xlarge and g6e.48xlarge have 8 GPUs (catalog/gpus.py); other g sizes are not listed,
so those families appear once with the count unknown.
"""

from __future__ import annotations

from catalog.selectors import INSTANCE_TYPE, KARPENTER_GPU_MEMORY, KARPENTER_GPU_NAME
from cluster.facts import NodePool
from cluster.selectors import matches_expression

FAMILY = "karpenter.k8s.aws/instance-family"
GPU_COUNT = "karpenter.k8s.aws/instance-gpu-count"


def _instance(instance_type: str | None, family: str, name: str, memory: int, count: int | None) -> dict[str, str]:
    labels = {FAMILY: family, KARPENTER_GPU_NAME: name, KARPENTER_GPU_MEMORY: str(memory)}
    if instance_type:
        labels[INSTANCE_TYPE] = instance_type
    if count is not None:
        labels[GPU_COUNT] = str(count)
    return labels


GPU_INSTANCES: tuple[dict[str, str], ...] = (
    _instance("p4d.24xlarge", "p4d", "a100", 40960, 8),
    _instance("p4de.24xlarge", "p4de", "a100", 81920, 8),
    _instance("p5.48xlarge", "p5", "h100", 81920, 8),
    _instance("p5.4xlarge", "p5", "h100", 81920, 1),
    _instance("p5e.48xlarge", "p5e", "h200", 144384, 8),
    _instance("p5en.48xlarge", "p5en", "h200", 144384, 8),
    _instance("g5.48xlarge", "g5", "a10g", 22888, 8),
    _instance("g6e.48xlarge", "g6e", "l40s", 45776, 8),
    _instance(None, "g6", "l4", 22888, None),
)


def candidate_nodes(pool: NodePool) -> list[tuple[dict[str, str], int | None]]:
    """(labels, GPUs) of each node the pool could create. Karpenter: every known GPU instance type its
    requirements allow (a requirement on a key the table does not hold, e.g. capacity-type, is assumed met).
    A declared pool: its labels and GPU count."""
    if not pool.karpenter:
        return [(dict(pool.labels), pool.gpus_per_node)]
    out: list[tuple[dict[str, str], int | None]] = []
    for instance in GPU_INSTANCES:
        labels = {**instance, **pool.labels}
        if all(r.get("key") not in labels or matches_expression(labels, r) for r in pool.requirements):
            count = labels.get(GPU_COUNT)
            out.append((labels, int(count) if count and count.isdigit() else None))
    return out
