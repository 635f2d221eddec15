"""Rules of the kubernetes target that need the preflight report. Pure; run by validation.check_stack."""

from __future__ import annotations

import math

from config.errors import ConfigIssue, show
from config.stack import StackConfig
from plan.cache import default_size_gib
from plan.names import HF_HOME
from preflight.delivery import draft_weights_on_disk_gib
from preflight.report import PreflightReport


def check_cache_size(cfg: StackConfig, report: PreflightReport) -> list[ConfigIssue]:
    """A user-set cache smaller than the weights would fill up mid-download."""
    size = cfg.cache.size_gib
    draft = draft_weights_on_disk_gib(cfg.engine.speculative)
    needed = report.weights_on_disk_gib + draft
    if size is None or size >= needed:
        return []
    what = f"{report.weights_on_disk_gib:.1f} GiB of {cfg.model.id} weights"
    what += f" plus {draft:.1f} GiB of draft model ({needed:.1f} GiB)" if draft else ""
    return [
        ConfigIssue(
            "cache.size_gib",
            f"is {size:g} GiB, smaller than the {what}.",
            f"set cache.size_gib to at least {math.ceil(needed)} (recommended "
            f"{default_size_gib(needed, cfg.cache.headroom_percent)}), or remove it to size the volume automatically.",
        )
    ]


def check_gpu_agreement(cfg: StackConfig, report: PreflightReport) -> list[ConfigIssue]:
    """The preflight must have sized for a product the pods can be scheduled on, with its memory."""
    gpu = cfg.gpu.spec_for(report.resolved.gpu.name) if report.resolved.gpu.name in cfg.gpu.products else None
    if gpu is not None and math.isclose(gpu.memory_gib, report.resolved.gpu.memory_gib):
        return []
    return [
        ConfigIssue(
            "gpu.product",
            f"the preflight sized for {report.resolved.gpu.name} ({report.resolved.gpu.memory_gib} GiB), but pods are "
            f"scheduled on {', '.join(cfg.gpu.products)}.",
            "re-run the preflight for this config.",
        )
    ]


def check_local_path(cfg: StackConfig) -> list[ConfigIssue]:
    path = cfg.model.local_path
    if path is None or not path.startswith("/") or path.startswith(HF_HOME + "/"):
        return []
    return [
        ConfigIssue(
            "model.local_path",
            f"is {show(path)}, outside the cache volume (mounted at {HF_HOME}).",
            f"give a path relative to the volume's root, or one under {HF_HOME}/.",
        )
    ]


def check_kubernetes(cfg: StackConfig, report: PreflightReport) -> list[ConfigIssue]:
    """Every reason of its own the Kubernetes target cannot be rendered; empty when it can."""
    return check_gpu_agreement(cfg, report) + check_cache_size(cfg, report) + check_local_path(cfg)
