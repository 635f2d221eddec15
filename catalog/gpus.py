"""GPU products: the label GPU Feature Discovery puts on nodes and the memory CUDA reports.

`memory_gib` is `torch.cuda.mem_get_info()[1]` in GiB, the "total_gpu_memory" vLLM multiplies by
gpu_memory_utilization. It is below the marketing size; where logs disagree we take the lowest seen so
the preflight errs on the safe side. Sources (docs/sources.md §F, §G):
GFD `nvidia.com/gpu.product` = NVML name sanitised (NVIDIA/k8s-device-plugin internal/lm/resource.go);
memory from vLLM start-up logs ("total_gpu_memory (79.15GiB)") and Unsloth banners ("Max memory").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class MetricsExporter:
    """The exporter of a vendor's per-GPU series, as the alerts and the dashboard read them."""

    name: str
    memory_used: str  # framebuffer in use, MiB
    memory_free: str  # framebuffer free, MiB
    utilization: str  # percent


@dataclass(frozen=True)
class GpuVendor:
    """What a GPU vendor's Kubernetes stack puts on nodes and pods. A second vendor is one more of these."""

    name: str
    resource: str  # the device plugin's extended resource, requested by the server pods
    product_label: str  # the node label naming the product (GpuProduct.gfd_product is its value)
    taint_key: str  # the conventional GPU node taint, tolerated whatever its value and effect is NoSchedule
    driver_labels: tuple[str, ...]  # node labels carrying the driver's major version, newest first
    exporter: MetricsExporter

    @property
    def toleration(self) -> dict[str, str]:
        """Any value (`present`, `true`, empty; docs/sources.md §F.2)."""
        return {"key": self.taint_key, "operator": "Exists", "effect": "NoSchedule"}


# NVIDIA device plugin and GPU Feature Discovery (NVIDIA/k8s-device-plugin internal/lm/resource.go); DCGM exporter
# counters: NVIDIA/dcgm-exporter etc/default-counters.csv (FB_* in MiB, GPU_UTIL in percent).
NVIDIA = GpuVendor(
    name="nvidia",
    resource="nvidia.com/gpu",
    product_label="nvidia.com/gpu.product",
    taint_key="nvidia.com/gpu",
    driver_labels=("nvidia.com/cuda.driver-version.major", "nvidia.com/cuda.driver.major"),  # GFD (old one deprecated)
    exporter=MetricsExporter("DCGM exporter", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_GPU_UTIL"),
)


# Every vendor whose GPUs the cluster facts count (node allocatable, NodePool limits) and whose exporter series
# the query lint knows. A second vendor is one more GpuVendor here and its products below.
VENDORS: tuple[GpuVendor, ...] = (NVIDIA,)


# "nvswitch": SXM boards on an NVSwitch baseboard (HGX/DGX), every GPU of the node one NVLink hop from every
# other; "nvlink-bridge": PCIe cards joined in pairs by an NVLink bridge (H100 NVL); "pcie": PCIe cards with no
# NVLink between them (an optional bridge on A100/H100 PCIe cards is not assumed); "none": one GPU per node, so
# tensor parallelism spans nodes. Sources in docs/sources.md §F.4.
Interconnect = Literal["nvswitch", "nvlink-bridge", "pcie", "none"]


@dataclass(frozen=True)
class GpuProduct:
    name: str  # the key users type in `gpu.product`
    gfd_product: str  # nvidia.com/gpu.product label value
    memory_gib: float  # total memory as CUDA/torch reports it
    nvidia_smi_mib: int  # nvidia.com/gpu.memory label value (MiB)
    native_fp8: bool  # FP8 tensor cores (Ada, Hopper and newer); A100 runs FP8 weight-only
    gpus_per_node: int  # the largest common node shape for this product
    family: str  # nvidia.com/gpu.family
    interconnect: Interconnect  # how the GPUs of one node reach each other (Interconnect)
    vendor: GpuVendor = NVIDIA

    def fully_connected(self, tensor_parallel_size: int) -> bool:
        """Whether `tensor_parallel_size` GPUs of one node are all joined by NVLink, as vLLM's
        `is_fully_connected` (NVML NVLink state) reports it; bridged pairs are fully connected only as a pair."""
        if self.interconnect == "nvswitch":
            return True
        return self.interconnect == "nvlink-bridge" and tensor_parallel_size <= 2

    @property
    def is_a100(self) -> bool:
        return self.name.startswith("A100")


def _gpu(*args: object) -> GpuProduct:
    return GpuProduct(*args)  # type: ignore[arg-type]


# Added for issue 12. Labels follow the GFD rule (NVML name, spaces -> "-"; docs/sources.md §F.1).
# CUDA totals: where a torch/Unsloth banner was found it is used as is; otherwise it is DERIVED from the
# nvidia-smi total (MiB, from public nvidia-smi tables in the code index) minus 0.85 GiB, the largest
# nvidia-smi-to-torch gap among the measured products above (A100 80GB: 80.00 - 79.15), so the derived
# figure errs low. Node shapes marked "assumed" are defaults to override with gpu.gpus_per_node.
_MORE_GPUS = (
    # B200: nvidia-smi "0MiB / 183359MiB" (179.06 GiB) -> derived 178.21; DGX B200 has 8.
    _gpu("B200", "NVIDIA-B200", 178.21, 183359, True, 8, "blackwell", "nvswitch"),
    # H100 NVL: Unsloth banner "GPU = NVIDIA H100 NVL. Max memory = 93.115 GB" (torch total, GiB);
    # nvidia-smi "/ 95830MiB". 8 per node assumed (PCIe servers).
    _gpu("H100-NVL", "NVIDIA-H100-NVL", 93.11, 95830, True, 8, "hopper", "nvlink-bridge"),
    # H100 PCIe: nvidia-smi "/ 81559MiB", the same total as H100 SXM (docs/sources.md §F.1), so the
    # SXM's torch total 79.18 GiB. 8 per node assumed (PCIe servers).
    _gpu("H100-PCIe", "NVIDIA-H100-PCIe", 79.18, 81559, True, 8, "hopper", "pcie"),
    # GH200 480GB (96 GB HBM3): nvidia-smi "/ 97871MiB" (95.58 GiB) -> derived 94.73. One superchip per
    # module; label NVIDIA-GH200-480GB seen on the NRP cluster (docs/sources.md §F.1). 1 per node assumed.
    _gpu("GH200-480GB", "NVIDIA-GH200-480GB", 94.73, 97871, True, 1, "hopper", "none"),
    # L40: nvidia-smi total 46,068 MiB, the same board memory as L40S, so L40S's lowest torch total.
    _gpu("L40", "NVIDIA-L40", 44.31, 46068, True, 8, "ada-lovelace", "pcie"),
    # A40: vLLM 0.26.0 logs "Free memory on device (44.17/44.43 GiB)" (vireshkoli/LLM-Inference-Optimization
    # results/logs/vllm-bf16.startup.log@1425eb749091cdaf89313e4a32f700bc322e68e7, start-up row U1), below the
    # Unsloth banner's "Max memory: 44.549 GB" (torch 2.9.1): the lowest taken. nvidia-smi "/ 46068MiB". Ampere: no FP8
    # tensor cores. 8 per node assumed.
    _gpu("A40", "NVIDIA-A40", 44.43, 46068, False, 8, "ampere", "pcie"),
    # RTX 6000 Ada Generation: nvidia-smi 49,140 MiB (47.99 GiB) -> derived 47.14. 4 per node assumed
    # (workstations).
    _gpu("RTX-6000-Ada", "NVIDIA-RTX-6000-Ada-Generation", 47.14, 49140, True, 4, "ada-lovelace", "pcie"),
)

GPUS: dict[str, GpuProduct] = {
    gpu.name: gpu
    for gpu in (
        # A100 SXM4 80GB: vLLM 0.8.2 log "total_gpu_memory (79.15GiB)"; p4de.24xlarge / DGX A100 have 8.
        _gpu("A100-SXM4-80GB", "NVIDIA-A100-SXM4-80GB", 79.15, 81920, False, 8, "ampere", "nvswitch"),
        # A100 SXM4 40GB: vLLM logs 39.49-39.56 GiB (lowest taken); p4d.24xlarge has 8.
        _gpu("A100-SXM4-40GB", "NVIDIA-A100-SXM4-40GB", 39.49, 40960, False, 8, "ampere", "nvswitch"),
        # A100 PCIe 40GB: vLLM log "total_gpu_memory (39.39GiB)"; label keeps upper-case PCIE.
        _gpu("A100-PCIE-40GB", "NVIDIA-A100-PCIE-40GB", 39.39, 40960, False, 8, "ampere", "pcie"),
        # A100 80GB PCIe: NVML name "NVIDIA A100 80GB PCIe"; same 81920 MiB as SXM4-80GB, so 79.15 GiB.
        _gpu("A100-80GB-PCIe", "NVIDIA-A100-80GB-PCIe", 79.15, 81920, False, 8, "ampere", "pcie"),
        # H100 SXM5: Unsloth "Max memory: 79.179 GB"; vLLM logs 79.18-79.22 GiB; p5.48xlarge has 8.
        _gpu("H100-80GB-HBM3", "NVIDIA-H100-80GB-HBM3", 79.18, 81559, True, 8, "hopper", "nvswitch"),
        # H200: vLLM log "total_gpu_memory (139.81GiB)", Unsloth 139.7 (lowest taken).
        _gpu("H200", "NVIDIA-H200", 139.70, 143771, True, 8, "hopper", "nvswitch"),
        # L40S: vLLM logs 44.31-44.39 GiB (lowest taken); g6e.48xlarge has 8.
        _gpu("L40S", "NVIDIA-L40S", 44.31, 46068, True, 8, "ada-lovelace", "pcie"),
        # A10G: EKS label nvidia.com/gpu.memory 23028 MiB; torch total derived as 22.02 GiB using the
        # L4's gap between nvidia-smi (23034 MiB) and torch (22.03 GiB). g5.48xlarge has 8.
        _gpu("A10G", "NVIDIA-A10G", 22.02, 23028, False, 8, "ampere", "pcie"),
        # L4: vLLM 0.29.0 log "Free memory on device (21.84/22.03 GiB) on startup" (public lab notes, index id
        # 69494016274), below Unsloth's "NVIDIA L4 ... Max memory: 22.161 GB"; g2-standard-96 has 8.
        _gpu("L4", "NVIDIA-L4", 22.03, 23034, True, 8, "ada-lovelace", "pcie"),
        *_MORE_GPUS,
    )
}
