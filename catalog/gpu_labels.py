"""Per-provider node label values of each GPU product in catalog/gpus.py (the key is GpuProduct.name).

Only values with a source are listed; a product a provider does not offer (or not verified) has none, and
a stack that needs it gets a config error naming the product and the label. Sources (docs/sources.md
§S3, §F.3):
- GKE `cloud.google.com/gke-accelerator`: `nvidia-tesla-a100` is the 40 GB A100 (A2 standard),
  `nvidia-a100-80gb` the 80 GB one (A2 Ultra), `nvidia-h100-80gb` (A3 High), `nvidia-h100-mega-80gb`
  (A3 Mega), `nvidia-h200-141gb` (A3 Ultra), `nvidia-l4` (G2). GCE GPU docs.
- Karpenter (EKS) `karpenter.k8s.aws/instance-gpu-name` + `instance-gpu-memory` (MiB per GPU):
  aws/karpenter-provider-aws website/content/en/docs/reference/instance-types.md@1d927085. `a100` is both
  the 40 GB (p4d, 40960) and the 80 GB (p4de, 81920) part, so the memory label is always combined.
- `node.kubernetes.io/instance-type`, the AKS profile's scheme: Azure Standard_ND96asr_v4 (8x A100 40 GB),
  Standard_ND96amsr_A100_v4 (8x A100 80 GB SXM), Standard_NC24ads_A100_v4 (1x A100 80 GB PCIe),
  Standard_ND96isr_H100_v5 (8x H100). No AWS type: an AKS node never carries one, and on EKS Karpenter's labels
  select the GPU (the instance table with GPU counts is catalog/instances.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProviderLabels:
    gke_accelerator: tuple[str, ...] = ()  # cloud.google.com/gke-accelerator values
    karpenter_gpu_name: str | None = None  # karpenter.k8s.aws/instance-gpu-name
    karpenter_gpu_memory_mib: int | None = None  # karpenter.k8s.aws/instance-gpu-memory
    instance_types: tuple[str, ...] = ()  # node.kubernetes.io/instance-type values (Azure)


PROVIDER_LABELS: dict[str, ProviderLabels] = {
    "A100-SXM4-80GB": ProviderLabels(
        ("nvidia-a100-80gb",),
        "a100",
        81920,
        ("Standard_ND96amsr_A100_v4",),
    ),
    "A100-SXM4-40GB": ProviderLabels(
        ("nvidia-tesla-a100",),
        "a100",
        40960,
        ("Standard_ND96asr_v4",),
    ),
    "A100-PCIE-40GB": ProviderLabels(),
    "A100-80GB-PCIe": ProviderLabels(instance_types=("Standard_NC24ads_A100_v4",)),
    "H100-80GB-HBM3": ProviderLabels(
        ("nvidia-h100-80gb", "nvidia-h100-mega-80gb"),
        "h100",
        81920,
        ("Standard_ND96isr_H100_v5",),
    ),
    "H200": ProviderLabels(("nvidia-h200-141gb",), "h200", 144384),
    "L40S": ProviderLabels(karpenter_gpu_name="l40s", karpenter_gpu_memory_mib=45776),
    "A10G": ProviderLabels(karpenter_gpu_name="a10g", karpenter_gpu_memory_mib=22888),
    "L4": ProviderLabels(("nvidia-l4",), "l4", 22888),
    # Added with the open GPU catalog; no provider label value is verified for them yet, so they are selected
    # through GPU Feature Discovery (cluster.gpu_label: gfd) or gpu.node_selector.
    "B200": ProviderLabels(),
    "H100-NVL": ProviderLabels(),
    "H100-PCIe": ProviderLabels(),
    "GH200-480GB": ProviderLabels(),
    "L40": ProviderLabels(),
    "A40": ProviderLabels(),
    "RTX-6000-Ada": ProviderLabels(),
}
