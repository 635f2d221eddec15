"""`gpu`: the GPU product and how many of them one replica uses; from the catalog or described inline."""

from __future__ import annotations

from pydantic import Field, PositiveFloat, ValidationInfo, field_validator

from catalog.gpus import GPUS, GpuProduct
from config.base import ConfigGroup
from config.errors import show, suggest_name
from config.syntax import Labels, PositiveInt


def _check_product(name: str) -> str:
    if name not in GPUS:
        hint = suggest_name(name, list(GPUS))
        raise ValueError(
            f"unknown GPU product {show(name)}{' (' + hint + ')' if hint else ''}. "
            f"Fix: use one of {', '.join(GPUS)}, or describe it with gpu.memory_gib and gpu.label."
        )
    return name


class GpuConfig(ConfigGroup):
    """GPU selection. The product's memory is the one the preflight uses; the node label comes from it too."""

    memory_gib: PositiveFloat | None = Field(
        None,
        description=(
            "Describes gpu.product inline: total memory as CUDA reports it (torch.cuda.mem_get_info()[1] "
            "in GiB, the total_gpu_memory of vLLM's log; below the marketing size). Overrides the catalog."
        ),
    )
    label: str | None = Field(
        None, description="With memory_gib: the node label value (nvidia.com/gpu.product), e.g. NVIDIA-H100-NVL."
    )
    native_fp8: bool = Field(False, description="With memory_gib: the GPU has FP8 tensor cores (Ada, Hopper, newer).")
    product: str = Field(description="GPU product, e.g. A100-SXM4-80GB (see the catalog), or any name with gpu.memory_gib.")
    count: PositiveInt | None = Field(
        None, description="GPUs per replica; must equal tensor_parallel_size x pipeline_parallel_size (the default)."
    )
    also_accept: tuple[str, ...] = Field(
        (), description="Other catalog products a replica may land on; the preflight checks the smallest of them."
    )
    gpus_per_node: PositiveInt | None = Field(
        None, description="GPUs on one node of your pool; defaults to the catalog's node shape (8 inline)."
    )
    node_selector: Labels = Field(
        default_factory=dict,
        description="Extra node labels to require, e.g. {cloud.google.com/gke-accelerator: nvidia-a100-80gb}.",
    )

    @field_validator("label")
    @classmethod
    def _label_with_memory(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and info.data.get("memory_gib") is None:
            raise ValueError(
                "describes a GPU inline and needs gpu.memory_gib. Fix: add gpu.memory_gib (total "
                "memory as CUDA reports it) or remove gpu.label."
            )
        return value

    @field_validator("product")
    @classmethod
    def _known_or_described(cls, value: str, info: ValidationInfo) -> str:
        if info.data.get("memory_gib") is None:
            return _check_product(value)
        if info.data.get("label") is None and value not in GPUS:
            raise ValueError(
                f"{value!r} is described inline but has no gpu.label. Fix: set gpu.label to its "
                "nvidia.com/gpu.product node label value, e.g. NVIDIA-H100-NVL."
            )
        return value

    @field_validator("also_accept")
    @classmethod
    def _known_products(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_check_product(value) for value in values)

    @property
    def products(self) -> tuple[str, ...]:
        """Every acceptable product, the chosen one first."""
        return (self.product, *(p for p in self.also_accept if p != self.product))

    def spec_for(self, name: str) -> GpuProduct:
        """The product's figures: the inline description for gpu.product when given, else the catalog's."""
        if name != self.product or self.memory_gib is None:
            return GPUS[name]
        known = GPUS.get(name)
        return GpuProduct(
            name=name,
            gfd_product=self.label or (known.gfd_product if known else name),
            memory_gib=self.memory_gib,
            nvidia_smi_mib=known.nvidia_smi_mib if known else 0,
            native_fp8=self.native_fp8 or bool(known and known.native_fp8),
            gpus_per_node=known.gpus_per_node if known else 8,
            family=known.family if known else "custom",
            # an unknown board is charged the larger NVLink TP overhead: the safe direction for the KV estimate
            interconnect=known.interconnect if known else "nvswitch",
        )
