"""Read throughput of one volume from its StorageClass: provisioner, parameters and size. Each figure is the
provider's documented limit for one volume (not a loader benchmark); where it depends on a property the class does
not carry (EFS throughput mode, a Filestore or Ceph cluster's size), the low end is taken and said so.

Sources (provider documentation, and docs/sources.md §S2):
- EBS (docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html; CreateVolume `Throughput`: "Valid Range:
  Minimum value of 125. Maximum value of 1000", gp3 only): gp3 125 MiB/s unless the class sets `throughput`;
  gp2 128 MiB/s up to 170 GiB, 250 MiB/s above; io1/io2 256 KiB per provisioned IOPS up to 1,000 MiB/s.
  The EBS CSI driver's `type` defaults to gp3; the in-tree kubernetes.io/aws-ebs one to gp2.
- GCE Persistent Disk (cloud.google.com/compute/docs/disks/performance): pd-balanced 140 MiB/s baseline +
  0.28 MiB/s per GiB, pd-ssd 240 MiB/s + 0.48 MiB/s per GiB, pd-standard 0.12 MiB/s per GiB; the per-instance
  limit (1,200 MiB/s on the GPU machine types' sizes) caps them. Hyperdisk (cloud.google.com/compute/docs/disks/
  hyperdisk-performance): the class's `provisioned-throughput-on-create`, else the balanced baseline 140 MiB/s.
- Azure Disk (learn.microsoft.com/azure/virtual-machines/disks-types): StandardSSD up to 1 TiB 60 MB/s per disk
  (bursting to 150 MB/s for 30 min, not counted); Premium_LRS P10 100, P15 125, P20 150, P30 200, P40-P50
  250 MB/s; PremiumV2/Ultra the class's `DiskMBpsReadWrite` (default 125).
- EFS (docs.aws.amazon.com/efs/latest/ug/performance.html): set on the file system, not the class: 100 MiB/s as
  vllm-project/production-stack's Terraform provisions it (tutorials/terraform/eks/storage.tf); elastic read
  ~0.35 GiB/s over 16 readers in modelplaneai/modelplane#204.
- Filestore (cloud.google.com/filestore/docs/performance): BASIC_HDD (`tier: standard`) 100 MiB/s read,
  BASIC_SSD (`premium`) 1,200 MiB/s read; zonal/regional/enterprise scale with capacity: 100 MiB/s taken.
- Azure Files (learn.microsoft.com/azure/storage/files/understanding-billing): standard shares 60 MiB/s;
  premium egress 60 MiB/s + 0.06 MiB/s per provisioned GiB.
- CephFS / RBD: the Ceph cluster's, unknown here.

Node-local classes (NODE_LOCAL_PROVISIONERS): each volume lives on one node's own disk, so a claim binds the pod
to that node. The class does not say which disk backs it (local-path's default directory is on the boot disk),
so the read rate comes from the medium the stack states (delivery.node_local, NODE_LOCAL_MEDIA):
- nvme (EC2 instance store, GKE/GCE local SSD, any local NVMe): 1.5 GB/s, the safetensors loader's rate from four
  GCE local NVMe SSDs that read ~4 GB/s themselves (anyscale/ai-infra-cookbook#57, a2-highgpu-4g with 4 local
  SSDs, DeepSeek-R1-Distill-Qwen-7B): what vLLM's default loader reaches, not the disks' limit.
- boot_disk: the node's root volume (EBS, PD, Azure Disk, or a server's own disk): not known here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

MB_IN_MIB = 1e6 / 2**20  # Azure quotes MB/s
# Unknown provisioner or parameters: EFS provisioned at 100 MiB/s, the slowest class the profiles name.
CONSERVATIVE_MIB_PER_S = 100.0
CONSERVATIVE_SOURCE = (
    "unknown class: a conservative 100 MiB/s (EFS provisioned at 100 MiB/s, production-stack "
    "tutorials/terraform/eks/storage.tf); measure and set probes.load_throughput_gib_per_s"
)


@dataclass(frozen=True)
class VolumeThroughput:
    """A volume's read throughput and where the figure comes from; `known`: False for the conservative guess."""

    mib_per_s: float
    source: str
    known: bool = True


# Provisioners whose volumes live on one node's disk, each with where its name is spelled (docs/model-delivery.md).
NODE_LOCAL_PROVISIONERS: dict[str, str] = {
    # Static local PVs (sig-storage-local-static-provisioner, GKE local SSD and EC2 instance store PVs): "Local
    # volumes do not support dynamic provisioning ... delay volume binding until Pod scheduling"
    # (kubernetes.io/docs/concepts/storage/storage-classes/#local).
    "kubernetes.io/no-provisioner": "kubernetes.io/docs/concepts/storage/storage-classes/#local",
    "rancher.io/local-path": (
        "rancher/local-path-provisioner/deploy/local-path-storage.yaml@20c6fb5cb306964bb38aecd1e0a534ffc34b4718"
    ),
    "openebs.io/local": (
        "openebs/dynamic-localpv-provisioner/deploy/kubectl/openebs-hostpath-sc.yaml@1395244067d906f2681b3afb9b971c1a3a6406f2"
    ),
    "topolvm.io": "topolvm/topolvm/charts/topolvm/crds/topolvm.io_logicalvolumes.yaml@6cdae0549be75eb5ea9cb5912371871f633b7c68",
    "topolvm.cybozu.com": (
        "topolvm/topolvm/charts/topolvm/crds/topolvm.cybozu.com_logicalvolumes.yaml@e4991655a8d7a28a983a6e41da48f6dc7d038e8d"
    ),
}


def is_node_local(provisioner: str) -> bool:
    return provisioner in NODE_LOCAL_PROVISIONERS


NODE_LOCAL_MEDIA: dict[str, VolumeThroughput] = {
    "nvme": VolumeThroughput(
        round(1.5e9 / 2**20, 1),
        "node-local NVMe: the safetensors loader at 1.5 GB/s from 4 GCE local NVMe SSDs (the disks ~4 GB/s), "
        "anyscale/ai-infra-cookbook#57",
    ),
    "boot_disk": VolumeThroughput(
        CONSERVATIVE_MIB_PER_S,
        "node-local on the boot disk: its rate is the node's root volume's, not known; a conservative 100 MiB/s",
        known=False,
    ),
}


@dataclass(frozen=True)
class ClassSpec:
    """What a StorageClass says: its provisioner and parameters (as the API gives them, strings)."""

    provisioner: str
    parameters: Mapping[str, str]


# The classes the cluster profiles name (catalog/profiles.py), as the providers create them.
WELL_KNOWN_CLASSES: dict[str, ClassSpec] = {
    "gp2": ClassSpec("kubernetes.io/aws-ebs", {"type": "gp2"}),
    "gp3": ClassSpec("ebs.csi.aws.com", {"type": "gp3"}),
    "efs-sc": ClassSpec("efs.csi.aws.com", {"provisioningMode": "efs-ap"}),
    "standard-rwo": ClassSpec("pd.csi.storage.gke.io", {"type": "pd-balanced"}),
    "premium-rwo": ClassSpec("pd.csi.storage.gke.io", {"type": "pd-ssd"}),
    "standard-rwx": ClassSpec("filestore.csi.storage.gke.io", {"tier": "standard"}),
    "premium-rwx": ClassSpec("filestore.csi.storage.gke.io", {"tier": "premium"}),
    "managed-csi": ClassSpec("disk.csi.azure.com", {"skuname": "StandardSSD_LRS"}),
    "managed-csi-premium": ClassSpec("disk.csi.azure.com", {"skuname": "Premium_LRS"}),
    "azurefile-csi": ClassSpec("file.csi.azure.com", {"skuName": "Standard_LRS"}),
    "azurefile-csi-premium": ClassSpec("file.csi.azure.com", {"skuName": "Premium_LRS"}),
}

GCE_INSTANCE_CAP_MIB_PER_S = 1200.0
EBS_MAX_MIB_PER_S = 1000.0
# (up to GiB, MB/s); larger: 250
_AZURE_PREMIUM_MB: tuple[tuple[int, float], ...] = ((128, 100), (256, 125), (512, 150), (1024, 200))


def _param(parameters: Mapping[str, str], key: str) -> str | None:
    """A parameter by name, case-insensitively (Azure's drivers accept skuName and skuname)."""
    return next((v for k, v in parameters.items() if k.lower() == key.lower()), None)


def _number(text: str | None) -> float | None:
    """`250`, `250Mi` or `"250"` as a number; None when absent or not a number."""
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(Mi)?\s*", text or "")
    return float(match.group(1)) if match else None


def _ebs(parameters: Mapping[str, str], size_gib: float, in_tree: bool) -> VolumeThroughput | None:
    kind = (_param(parameters, "type") or ("gp2" if in_tree else "gp3")).lower()
    if kind == "gp3":
        set_to = _number(_param(parameters, "throughput"))
        if set_to is not None:
            return VolumeThroughput(min(set_to, EBS_MAX_MIB_PER_S), f"EBS gp3 with throughput {set_to:g} (the class)")
        return VolumeThroughput(125.0, "EBS gp3 baseline 125 MiB/s: the class sets no throughput")
    if kind == "gp2":
        mib = 128.0 if size_gib <= 170 else 250.0
        return VolumeThroughput(mib, f"EBS gp2 {mib:g} MiB/s at {size_gib:g} GiB (128 up to 170 GiB, else 250)")
    if kind in ("io1", "io2"):
        iops = _number(_param(parameters, "iops")) or (_number(_param(parameters, "iopsPerGB")) or 0) * size_gib
        mib = min(EBS_MAX_MIB_PER_S, max(iops, 100.0) / 4)
        return VolumeThroughput(mib, f"EBS {kind}: 256 KiB x {max(iops, 100.0):g} IOPS, at most 1,000 MiB/s")
    return None


def _gce_pd(parameters: Mapping[str, str], size_gib: float) -> VolumeThroughput | None:
    kind = (_param(parameters, "type") or "pd-standard").lower()
    linear = {"pd-balanced": (140.0, 0.28), "pd-ssd": (240.0, 0.48), "pd-standard": (0.0, 0.12)}
    if kind in linear:
        base, per_gib = linear[kind]
        mib = min(GCE_INSTANCE_CAP_MIB_PER_S, base + per_gib * size_gib)
        return VolumeThroughput(mib, f"GCE {kind} {base:g} MiB/s + {per_gib:g} MiB/s x {size_gib:g} GiB")
    if kind.startswith("hyperdisk"):
        set_to = _number(_param(parameters, "provisioned-throughput-on-create"))
        if set_to is not None:
            return VolumeThroughput(set_to, f"GCE {kind} provisioned at {set_to:g} MiB/s (the class)")
        return VolumeThroughput(140.0, f"GCE {kind} without provisioned-throughput-on-create: the 140 MiB/s baseline")
    return None


def _azure_disk(parameters: Mapping[str, str], size_gib: float) -> VolumeThroughput | None:
    sku = (_param(parameters, "skuName") or "StandardSSD_LRS").lower()
    if sku.startswith("standardssd"):
        return VolumeThroughput(60 * MB_IN_MIB, "Azure StandardSSD 60 MB/s per disk (bursts to 150 not counted)")
    if sku.startswith("premium_"):
        mb = next((mb for most, mb in _AZURE_PREMIUM_MB if size_gib <= most), 250.0)
        return VolumeThroughput(mb * MB_IN_MIB, f"Azure Premium SSD {mb:g} MB/s at {size_gib:g} GiB")
    if sku.startswith(("premiumv2", "ultrassd")):
        set_mb = _number(_param(parameters, "DiskMBpsReadWrite")) or 125.0
        return VolumeThroughput(set_mb * MB_IN_MIB, f"Azure {sku} DiskMBpsReadWrite {set_mb:g} MB/s")
    return None


def _efs(parameters: Mapping[str, str], size_gib: float) -> VolumeThroughput:
    return VolumeThroughput(100.0, "EFS: the throughput mode is the file system's; 100 MiB/s as production-stack provisions it")


def _filestore(parameters: Mapping[str, str], size_gib: float) -> VolumeThroughput:
    tier = (_param(parameters, "tier") or "standard").lower()
    mib = 1200.0 if tier in ("premium", "basic_ssd") else 100.0
    return VolumeThroughput(mib, f"Filestore tier {tier}: {mib:g} MiB/s read")


def _azure_files(parameters: Mapping[str, str], size_gib: float) -> VolumeThroughput:
    if (_param(parameters, "skuName") or "Standard_LRS").lower().startswith("premium"):
        mib = 60 + 0.06 * size_gib
        return VolumeThroughput(mib, f"Azure Files premium egress 60 MiB/s + 0.06 MiB/s x {size_gib:g} GiB")
    return VolumeThroughput(60.0, "Azure Files standard share 60 MiB/s")


_BY_PROVISIONER: dict[str, Callable[[Mapping[str, str], float], VolumeThroughput | None]] = {
    "ebs.csi.aws.com": lambda p, s: _ebs(p, s, in_tree=False),
    "kubernetes.io/aws-ebs": lambda p, s: _ebs(p, s, in_tree=True),
    "pd.csi.storage.gke.io": _gce_pd,
    "kubernetes.io/gce-pd": _gce_pd,
    "disk.csi.azure.com": _azure_disk,
    "kubernetes.io/azure-disk": _azure_disk,
    "efs.csi.aws.com": _efs,
    "filestore.csi.storage.gke.io": _filestore,
    "file.csi.azure.com": _azure_files,
    "kubernetes.io/azure-file": _azure_files,
}


def volume_throughput(spec: ClassSpec | None, size_gib: float) -> VolumeThroughput:
    """The read throughput of a `size_gib` volume of this class; the conservative figure when unknown."""
    rule = _BY_PROVISIONER.get(spec.provisioner) if spec is not None else None
    found = rule(spec.parameters, size_gib) if rule is not None and spec is not None else None
    if found is None:
        return VolumeThroughput(CONSERVATIVE_MIB_PER_S, CONSERVATIVE_SOURCE, known=False)
    return VolumeThroughput(math.floor(found.mib_per_s * 10) / 10, found.source)
