"""The parts of a stack the preflight reads: built from the stack config by the plan (plan/sizing.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from config.delivery import DeliveryConfig
from config.engine import EngineConfig
from config.gpu import GpuConfig
from config.kubernetes import CacheConfig
from config.lora import LoraConfig
from config.model import ModelConfig
from config.preflight import PreflightConfig
from config.vllm import VllmConfig


@dataclass(frozen=True)
class SizingInputs:
    """The config groups the preflight sizes and checks, by their stack key: a suggestion is a change to them
    (preflight/suggest.py apply_changes). The cache and delivery groups and the profile's ReadWriteMany class
    keep a suggested multi-node layout deployable."""

    target: Literal["kubernetes", "docker"]
    model: ModelConfig
    gpu: GpuConfig
    engine: EngineConfig
    vllm: VllmConfig
    preflight: PreflightConfig
    cache: CacheConfig
    delivery: DeliveryConfig
    rwx_storage_class: str | None  # the cluster profile's usual ReadWriteMany class
    served_model_name: str
    lora: LoraConfig = field(default_factory=LoraConfig)  # the adapters' buffers are sized with the weights
