"""On-demand prices of GPU instances, one row per instance type with its source and the date it was read.

Prices are data, never estimates: an instance without a row here has no price, and the report says so
("no price") unless the stack sets one (the `cost` group). The GPUs per instance and the GPU product are not
repeated here: they are the instance catalog's (catalog/instances.py), linked to a product through the provider
labels of catalog/gpu_labels.py (Karpenter's GPU name and memory on AWS, cloud.google.com/gke-accelerator on GCP,
the instance type on Azure).

Sources, each row's column Price read on the as-of date, all skypilot-org/skypilot-catalog:
- AWS: catalogs/v8/aws/vms.csv@00148f2a (AWS Price List API, Linux, on-demand, us-east-1). p5en.48xlarge's 63.296
  also appears in dstackai/dstack#4110 (`dstack offer`, Aug 2026). p5e.48xlarge has no on-demand price there
  (Capacity Blocks only); p6-b200.48xlarge (113.9328) waits for catalog/gpu_labels.py to link B200.
- GCP: catalogs/v8/gcp/vms.csv@006059e0 (SkyPilot's fetcher, from GCP's SKU prices). GCE bills an a2/a3/g2 machine's vCPUs and
  memory (the machine type's row, no accelerator) apart from its GPUs (the accelerator's row, by count), so a row
  here is their sum and says so. us-central1, except for two GPUs whose us-central1 figure cannot be taken for the
  on-demand price: A100 80GB's (1.8462/GPU) is below the same zone's spot price (1.964); H100's (4.20076/GPU) is
  43 % of us-east4's (9.79655), where the a3-highgpu-8g machine costs the same (9.46006). A100 80GB is read in
  us-east5 (4.4242/GPU, its machine priced as in us-central1), H100 in us-east4.
- Azure: catalogs/v6/azure/vms.csv@098741e7 (SkyPilot's Azure fetcher, eastus), one price per VM size, GPUs
  included. Standard_ND96isr_H200_v5 is not in that file, so H200 has no Azure row.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.gpu_labels import PROVIDER_LABELS
from catalog.instances import INSTANCE_TYPES, MACHINE_TYPES, InstanceType, MachineType

SKYPILOT = "https://github.com/skypilot-org/skypilot-catalog/blob"
SKYPILOT_AWS = f"{SKYPILOT}/00148f2af3672e2229b4f7bf8157d5a3f36e3c35/catalogs/v8/aws/vms.csv"
SKYPILOT_GCP = f"{SKYPILOT}/006059e0f18acb1341e22a27751e9f80df6ba92f/catalogs/v8/gcp/vms.csv"
SKYPILOT_AZURE = f"{SKYPILOT}/098741e70562f65d7af1cceb81e33b284f742604/catalogs/v6/azure/vms.csv"
READ_ON = "2026-12-02"


@dataclass(frozen=True)
class InstancePrice:
    provider: str  # aws, gcp, azure
    instance: str  # node.kubernetes.io/instance-type, a name in catalog/instances.py
    region: str
    usd_per_hour: float  # on-demand, per instance
    as_of: str  # YYYY-MM-DD the figure was read from the source
    source: str  # URL, then how the figure was made when it is a sum


def _aws(instance: str, usd_per_hour: float) -> InstancePrice:
    return InstancePrice("aws", instance, "us-east-1", usd_per_hour, READ_ON, SKYPILOT_AWS)


def _gcp(instance: str, region: str, machine: float, gpus: float) -> InstancePrice:
    """`machine`: the machine type's row (vCPUs and memory); `gpus`: its accelerators' row, billed apart."""
    how = f"{SKYPILOT_GCP}: machine {machine} + GPUs {gpus} USD/h, billed apart and summed"
    return InstancePrice("gcp", instance, region, round(machine + gpus, 5), READ_ON, how)


def _azure(instance: str, usd_per_hour: float) -> InstancePrice:
    return InstancePrice("azure", instance, "eastus", usd_per_hour, READ_ON, SKYPILOT_AZURE)


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
    _gcp("a2-highgpu-1g", "us-central1", 0.73948, 2.93391),
    _gcp("a2-highgpu-2g", "us-central1", 1.47895, 5.86782),
    _gcp("a2-highgpu-4g", "us-central1", 2.95791, 11.73563),
    _gcp("a2-highgpu-8g", "us-central1", 5.91582, 23.47126),
    _gcp("a2-ultragpu-1g", "us-east5", 1.09962, 4.4242),
    _gcp("a2-ultragpu-2g", "us-east5", 2.19924, 8.84839),
    _gcp("a2-ultragpu-4g", "us-east5", 4.39849, 17.69679),
    _gcp("a2-ultragpu-8g", "us-east5", 8.79698, 35.39358),
    _gcp("a3-highgpu-8g", "us-east4", 9.46006, 78.37241),
    _gcp("a3-ultragpu-8g", "us-central1", 12.266, 74.49392),
    _gcp("g2-standard-4", "us-central1", 0.14679, 0.56004),
    _gcp("g2-standard-24", "us-central1", 0.88075, 1.12008),
    _gcp("g2-standard-48", "us-central1", 1.7615, 2.24016),
    _gcp("g2-standard-96", "us-central1", 3.52301, 4.48032),
    _azure("Standard_ND96asr_v4", 27.197),
    _azure("Standard_ND96amsr_A100_v4", 32.77),
    _azure("Standard_NC24ads_A100_v4", 3.673),
    _azure("Standard_ND96isr_H100_v5", 98.32),
)


@dataclass(frozen=True)
class GpuHourPrice:
    """A product's price per GPU-hour, from the instance whose GPUs cost least per hour."""

    row: InstancePrice
    gpus_per_instance: int

    @property
    def usd_per_gpu_hour(self) -> float:
        return self.row.usd_per_hour / self.gpus_per_instance


def instances_of(product: str) -> tuple[InstanceType | MachineType, ...]:
    """The instance types carrying this GPU product: on AWS the same Karpenter GPU name and memory, on GCP the same
    cloud.google.com/gke-accelerator, on Azure an instance type the product's labels name (catalog/gpu_labels.py)."""
    labels = PROVIDER_LABELS.get(product)
    if labels is None:
        return ()
    aws = tuple(
        instance
        for instance in INSTANCE_TYPES
        if labels.karpenter_gpu_name is not None
        and (instance.gpu_name, instance.gpu_memory_mib) == (labels.karpenter_gpu_name, labels.karpenter_gpu_memory_mib)
    )
    others = tuple(
        machine
        for machine in MACHINE_TYPES
        if machine.accelerator in labels.gke_accelerator
        or (machine.accelerator is None and machine.name in labels.instance_types)
    )
    return aws + others


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
