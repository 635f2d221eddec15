"""AWS GPU instance types and the attributes a Karpenter NodePool's requirements can ask of them.

AWS values are the labels Karpenter puts on a node of each type (and so can match against a NodePool's
requirements before the node exists), and the extended resources it offers:
aws/karpenter-provider-aws website/content/en/docs/reference/instance-types.md@0c5e7d81 (generated from
hack/docs/instancetypes_gen_docs.go), sections p4d, p4de, p5, p5e, p5en, p6-b200: instance-category `p`,
instance-cpu 96 (p4d/p4de) or 192, instance-generation, gpu-count 8, vpc.amazonaws.com/efa 4/32/32/16/8,
kubernetes.io/arch amd64. That page lists p5.4xlarge with instance-gpu-count 0 and no nvidia.com/gpu; it is
one H100 (AWS's p5 page), so 1 here. g5.48xlarge and g6e.48xlarge (8 GPUs, catalog/gpus.py) and the g6 family
come from the earlier table (docs/sources.md §S3, @1d927085); their vCPU count is not recorded (None).
The capacity type (karpenter.sh/capacity-type) belongs to an offering, not to an instance type, so it is not
here (cluster/karpenter.py). Azure's SKUs, selected by instance type on AKS, are in catalog/gpu_labels.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

EFA = "vpc.amazonaws.com/efa"


@dataclass(frozen=True)
class InstanceType:
    name: str | None  # node.kubernetes.io/instance-type; None: a family whose sizes are not listed
    family: str  # karpenter.k8s.aws/instance-family
    gpu_name: str  # karpenter.k8s.aws/instance-gpu-name
    gpu_memory_mib: int  # karpenter.k8s.aws/instance-gpu-memory, per GPU
    gpu_count: int | None  # karpenter.k8s.aws/instance-gpu-count; None: not known
    cpu: int | None = None  # karpenter.k8s.aws/instance-cpu (vCPUs); None: not known
    generation: int | None = None  # karpenter.k8s.aws/instance-generation
    arch: str = "amd64"  # kubernetes.io/arch
    resources: tuple[tuple[str, int], ...] = field(default=())  # extended resources besides nvidia.com/gpu

    @property
    def category(self) -> str:
        """karpenter.k8s.aws/instance-category: the family's leading letters (p4de -> p)."""
        return re.match(r"[a-z]*", self.family).group(0)  # type: ignore[union-attr]  # always matches


INSTANCE_TYPES: tuple[InstanceType, ...] = (
    InstanceType("p4d.24xlarge", "p4d", "a100", 40960, 8, 96, generation=4, resources=((EFA, 4),)),
    InstanceType("p4de.24xlarge", "p4de", "a100", 81920, 8, 96, generation=4, resources=((EFA, 4),)),
    InstanceType("p5.48xlarge", "p5", "h100", 81920, 8, 192, generation=5, resources=((EFA, 32),)),
    InstanceType("p5.4xlarge", "p5", "h100", 81920, 1, 16, generation=5, resources=((EFA, 1),)),
    InstanceType("p5e.48xlarge", "p5e", "h200", 144384, 8, 192, generation=5, resources=((EFA, 32),)),
    InstanceType("p5en.48xlarge", "p5en", "h200", 144384, 8, 192, generation=5, resources=((EFA, 16),)),
    InstanceType("p6-b200.48xlarge", "p6-b200", "b200", 183359, 8, 192, generation=6, resources=((EFA, 8),)),
    InstanceType("g5.48xlarge", "g5", "a10g", 22888, 8),
    InstanceType("g6e.48xlarge", "g6e", "l40s", 45776, 8),
    InstanceType(None, "g6", "l4", 22888, None),
)
