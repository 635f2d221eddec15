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

GCE machine types and Azure VM sizes with GPUs (MACHINE_TYPES) carry no Karpenter labels: a GKE node names its GPU
with cloud.google.com/gke-accelerator, an AKS node by its instance type (catalog/gpu_labels.py). GPUs per machine:
GCE "GPU machine types" (cloud.google.com/compute/docs/gpus: a2-highgpu-Ng and a2-ultragpu-Ng carry N A100 40 GB /
80 GB, a3-highgpu-8g 8 H100, a3-ultragpu-8g 8 H200, g2-standard-4 1 L4, -24 2, -48 4, -96 8), the same counts as the
GPU rows of skypilot-org/skypilot-catalog catalogs/v8/gcp/vms.csv@006059e0. Azure: the counts catalog/gpu_labels.py
gives its sizes (docs/sources.md §S3: 8 x A100 40 GB, 8 x A100 80 GB, 1 x A100 80 GB PCIe, 8 x H100);
catalogs/v6/azure/vms.csv@098741e7 has the same AcceleratorCount except 12 for Standard_ND96isr_H100_v5.
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


@dataclass(frozen=True)
class MachineType:
    """A GCE machine type or an Azure VM size with its GPUs attached (node.kubernetes.io/instance-type)."""

    provider: str  # gcp, azure (catalog/prices.py)
    name: str
    gpu_count: int
    accelerator: str | None = None  # GKE: the node's cloud.google.com/gke-accelerator; Azure: None (the name is)


def _gce(name: str, gpu_count: int, accelerator: str) -> MachineType:
    return MachineType("gcp", name, gpu_count, accelerator)


def _azure(name: str, gpu_count: int) -> MachineType:
    return MachineType("azure", name, gpu_count)


MACHINE_TYPES: tuple[MachineType, ...] = (
    *(_gce(f"a2-highgpu-{n}g", n, "nvidia-tesla-a100") for n in (1, 2, 4, 8)),
    *(_gce(f"a2-ultragpu-{n}g", n, "nvidia-a100-80gb") for n in (1, 2, 4, 8)),
    _gce("a3-highgpu-8g", 8, "nvidia-h100-80gb"),
    _gce("a3-ultragpu-8g", 8, "nvidia-h200-141gb"),
    # The g2 sizes with the fewest vCPUs per L4 count; the others (-8, -12, -16, -32) carry one L4 at a higher price.
    _gce("g2-standard-4", 1, "nvidia-l4"),
    _gce("g2-standard-24", 2, "nvidia-l4"),
    _gce("g2-standard-48", 4, "nvidia-l4"),
    _gce("g2-standard-96", 8, "nvidia-l4"),
    _azure("Standard_ND96asr_v4", 8),
    _azure("Standard_ND96amsr_A100_v4", 8),
    _azure("Standard_NC24ads_A100_v4", 1),
    _azure("Standard_ND96isr_H100_v5", 8),
)
