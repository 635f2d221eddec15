"""Rules of the `lora` group: where each adapter can come from, its name, its rank and its target modules."""

from __future__ import annotations

from catalog.models import Architecture
from catalog.vllm_flags import FLAG_TABLES, RUNTIME_LORA_SINCE
from config.errors import ConfigIssue, show
from config.lora import LoraConfig
from config.stack import StackConfig
from preflight.lora import VLLM_LORA_RANKS, lora_shape, supported_modules


def cross_checks(cfg: StackConfig) -> list[ConfigIssue]:
    """The rules between keys (validation/keys.py KEY_RULES)."""
    lora = cfg.lora
    if not lora.enabled:
        return []
    issues = _source_issues(cfg) + _name_issues(lora, cfg.served_model_name) + _limit_issues(lora)
    if lora.runtime_loading and not FLAG_TABLES[cfg.vllm.version].runtime_lora_updating:
        issues.append(
            ConfigIssue(
                "lora.runtime_loading",
                f"is true, but vLLM {cfg.vllm.version} has no runtime adapter loading (/v1/load_lora_adapter).",
                f"set lora.runtime_loading: false, or vllm.version {RUNTIME_LORA_SINCE} or later.",
            )
        )
    return issues


def _source_issues(cfg: StackConfig) -> list[ConfigIssue]:
    if cfg.target == "docker" and cfg.lora.adapters:
        return [
            ConfigIssue(
                "lora.adapters",
                "is set on target docker: the container downloads the base model itself and would fetch an adapter "
                "by its Hub id at its newest commit, not the pinned revision.",
                "serve adapters on target kubernetes, or remove lora.adapters.",
            )
        ]
    if cfg.delivery.mode == "object_storage":
        return []
    return [
        ConfigIssue(
            f"lora.adapters[{index}].uri",
            f"is {show(adapter.uri)}, but delivery.mode is not object_storage: the server pods of a volume "
            "delivery do not read the bucket.",
            "publish the adapter on the Hub (id and revision), or set delivery.mode: object_storage.",
        )
        for index, adapter in enumerate(cfg.lora.adapters)
        if adapter.uri is not None
    ]


def _name_issues(lora: LoraConfig, base: str) -> list[ConfigIssue]:
    issues = []
    for index, adapter in enumerate(lora.adapters):
        if adapter.name == base:
            issues.append(
                ConfigIssue(
                    f"lora.adapters[{index}].name",
                    f"is {show(adapter.name)}, the base model's served name: requests naming it would not reach the adapter.",
                    "give the adapter its own name.",
                )
            )
        elif adapter.name in {earlier.name for earlier in lora.adapters[:index]}:
            issues.append(
                ConfigIssue(
                    f"lora.adapters[{index}].name",
                    f"{show(adapter.name)} names an adapter listed before; vLLM serves one adapter per name.",
                    "give each adapter a distinct name.",
                )
            )
    return issues


def _limit_issues(lora: LoraConfig) -> list[ConfigIssue]:
    issues = []
    ranks = ", ".join(str(rank) for rank in VLLM_LORA_RANKS)
    if lora.max_lora_rank is not None and lora.max_lora_rank not in VLLM_LORA_RANKS:
        issues.append(
            ConfigIssue(
                "lora.max_lora_rank",
                f"is {lora.max_lora_rank}, which --max-lora-rank does not accept.",
                f"use one of {ranks}.",
            )
        )
    shape = lora_shape(lora)
    limit = shape.max_lora_rank if shape else VLLM_LORA_RANKS[-1]
    for index, adapter in enumerate(lora.adapters):
        if adapter.rank > limit:
            issues.append(
                ConfigIssue(
                    f"lora.adapters[{index}].rank",
                    f"is {adapter.rank}, above the max_lora_rank of {limit}: vLLM refuses to load the adapter.",
                    f"raise lora.max_lora_rank to one of {ranks} at least {adapter.rank}, or unset it.",
                )
            )
    if shape and lora.max_cpu_loras is not None and lora.max_cpu_loras < shape.max_loras:
        issues.append(
            ConfigIssue(
                "lora.max_cpu_loras",
                f"is {lora.max_cpu_loras}, below max_loras {shape.max_loras}: vLLM refuses to start.",
                f"set lora.max_cpu_loras to at least {shape.max_loras}, or unset it.",
            )
        )
    return issues


def module_issues(lora: LoraConfig, arch: Architecture) -> list[ConfigIssue]:
    """The adapters' target modules against what vLLM wraps and the preflight sizes (a report rule: the
    architecture comes from the preflight)."""
    supported = supported_modules(arch)
    issues = []
    for index, adapter in enumerate(lora.adapters):
        unknown = [module for module in adapter.target_modules if module not in supported]
        if unknown:
            issues.append(
                ConfigIssue(
                    f"lora.adapters[{index}].target_modules",
                    f"lists {', '.join(unknown)}, which the base model's LoRA layers do not include "
                    f"(sized: {', '.join(supported) or 'none'}); vLLM cannot apply the adapter as trained.",
                    "serve an adapter trained on those modules only, or merge it into the weights.",
                )
            )
    return issues
