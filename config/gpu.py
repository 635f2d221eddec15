"""`gpu`: the GPU product and how many of them one replica uses."""

from __future__ import annotations

from pydantic import Field, field_validator

from catalog.gpus import GPUS
from config.base import ConfigGroup
from config.errors import show, suggest
from config.syntax import Labels, PositiveInt


def _check_product(name: str) -> str:
    if name not in GPUS:
        hint = suggest(name, list(GPUS))
        raise ValueError(f"unknown GPU product {show(name)}{' (' + hint + ')' if hint else ''}. "
                         f"Fix: use one of {', '.join(GPUS)}.")
    return name


class GpuConfig(ConfigGroup):
    """GPU selection. The product's memory is the one the preflight uses; the node label comes from it too."""

    product: str = Field(description="GPU product, e.g. A100-SXM4-80GB (see the catalog).")
    count: PositiveInt | None = Field(
        None, description="GPUs per replica; must equal tensor_parallel_size x pipeline_parallel_size (the default).")
    also_accept: tuple[str, ...] = Field(
        (), description="Other products a replica may land on; the preflight checks the smallest of them.")
    gpus_per_node: PositiveInt | None = Field(
        None, description="GPUs on one node of your pool; defaults to the catalog's node shape for the product.")
    node_selector: Labels = Field(
        default_factory=dict,
        description="Extra node labels to require, e.g. {cloud.google.com/gke-accelerator: nvidia-a100-80gb}.")

    @field_validator("product")
    @classmethod
    def _known_product(cls, value: str) -> str:
        return _check_product(value)

    @field_validator("also_accept")
    @classmethod
    def _known_products(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_check_product(value) for value in values)

    @property
    def products(self) -> tuple[str, ...]:
        """Every acceptable product, the chosen one first."""
        return (self.product, *(p for p in self.also_accept if p != self.product))
