"""On-demand prices of GPU instances, one row per instance type with its source and the date it was read.

Prices are data, never estimates: an instance without a row here has no price, and the report says so
("no price") unless the stack sets one (the `cost` group). The GPUs per instance and the GPU product are not
repeated here: they are the instance catalog's (catalog/instances.py), linked to a product through the
Karpenter labels of catalog/gpu_labels.py.

Source of every row: SkyPilot's catalog, generated from the AWS Price List API (Linux, on-demand, us-east-1):
skypilot-org/skypilot-catalog catalogs/v8/aws/vms.csv@00148f2af3672e2229b4f7bf8157d5a3f36e3c35, column Price,
read on the as-of date. p5en.48xlarge's 63.296 also appears in dstackai/dstack#4110 (`dstack offer`, Aug 2026).
p5e.48xlarge has no on-demand price in that file (Capacity Blocks only), so none here; p6-b200.48xlarge
(113.9328) is left out until catalog/gpu_labels.py links B200 to Karpenter's labels; GCP (a2-ultragpu,
a3-highgpu, a3-ultragpu, g2) and Azure (ND A100 v4, ND H100 v5, NC A100 v4) prices were not found in a
source with per-instance figures, so they have no row (docs/cost.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.gpu_labels import PROVIDER_LABELS
from catalog.instances import INSTANCE_TYPES, InstanceType

SKYPILOT_AWS = (
    "https://github.com/skypilot-org/skypilot-catalog/blob/00148f2af3672e2229b4f7bf8157d5a3f36e3c35/catalogs/v8/aws/vms.csv"
)
READ_ON = "2026-12-02"


@dataclass(frozen=True)
class InstancePrice:
    provider: str  # aws
    instance: str  # node.kubernetes.io/instance-type, a name in catalog/instances.py
    region: str
    usd_per_hour: float  # on-demand, per instance
    as_of: str  # YYYY-MM-DD the figure was read from the source
    source: str  # URL


def _aws(instance: str, usd_per_hour: float) -> InstancePrice:
    return InstancePrice("aws", instance, "us-east-1", usd_per_hour, READ_ON, SKYPILOT_AWS)


# The provider a cluster profile (catalog/profiles.py) runs on, whose rows price it; a profile not named here
# (generic, gpu-operator, openshift) may run anywhere, and any provider's row prices it (the report names it).
PROFILE_PROVIDERS: dict[str, str] = {"eks-karpenter": "aws", "gke": "gcp", "aks": "azure"}

PRICES: tuple[InstancePrice, ...] = (
    _aws("p4d.24xlarge", 21.957642),
    _aws("p4de.24xlarge", 27.44705),
    _aws("p5.48xlarge", 55.04),
    _aws("p5.4xlarge", 6.88),
    _aws("p5en.48xlarge", 63.296),
    _aws("g6e.48xlarge", 30.13118),
    _aws("g5.48xlarge", 16.288),
)


@dataclass(frozen=True)
class GpuHourPrice:
    """A product's price per GPU-hour, from the instance whose GPUs cost least per hour."""

    row: InstancePrice
    gpus_per_instance: int

    @property
    def usd_per_gpu_hour(self) -> float:
        return self.row.usd_per_hour / self.gpus_per_instance


def instances_of(product: str) -> tuple[InstanceType, ...]:
    """The instance types carrying this GPU product: same Karpenter GPU name and memory (catalog/gpu_labels.py)."""
    labels = PROVIDER_LABELS.get(product)
    if labels is None or labels.karpenter_gpu_name is None:
        return ()
    return tuple(
        instance
        for instance in INSTANCE_TYPES
        if (instance.gpu_name, instance.gpu_memory_mib) == (labels.karpenter_gpu_name, labels.karpenter_gpu_memory_mib)
    )


def gpu_hour_price(product: str, gpus_per_node: int, profile: str) -> GpuHourPrice | None:
    """The cheapest listed price per GPU-hour of `product` on an instance with at least `gpus_per_node` GPUs
    (one pod of a replica takes its GPUs on one node), from the profile's provider; None when none has a price."""
    provider = PROFILE_PROVIDERS.get(profile)
    rows = {row.instance: row for row in PRICES if provider in (None, row.provider)}
    found = [
        GpuHourPrice(rows[instance.name], instance.gpu_count)
        for instance in instances_of(product)
        if instance.name in rows and instance.gpu_count and instance.gpu_count >= gpus_per_node
    ]
    return min(found, key=lambda price: price.usd_per_gpu_hour, default=None)
