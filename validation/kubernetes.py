"""Rules of the kubernetes target: between its groups (namespace, cache, server) and the rest of the stack
(`cross_checks`, run when the keys are parsed), and those that need the preflight report (`check_kubernetes`,
run by validation.check_stack). Pure."""

from __future__ import annotations

import math

from config.errors import ConfigIssue, show
from config.kubernetes import NamespaceConfig
from config.stack import StackConfig
from plan.cache import default_size_gib
from plan.names import HF_HOME
from preflight.delivery import draft_weights_on_disk_gib
from preflight.report import PreflightReport
from validation.delivery import delivery_mode, most_replicas


def cross_checks(cfg: StackConfig) -> list[ConfigIssue]:
    """Rules that span Kubernetes groups and the rest of the config."""
    if cfg.target != "kubernetes":  # validation/docker.py rejects these groups on a docker stack
        return []
    return _cache_issues(cfg) + _server_issues(cfg) + _namespace_issues(cfg.namespace)


# Namespaces every cluster has and Kubernetes manages (kubernetes.io/docs/concepts/overview/working-with-objects/
# namespaces, "Initial namespaces"): never created, or deleted, by a stack.
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def _namespace_issues(namespace: NamespaceConfig) -> list[ConfigIssue]:
    if namespace.creates and namespace.name in SYSTEM_NAMESPACES:
        return [
            ConfigIssue(
                "namespace.name",
                f"is {namespace.name!r}, a namespace Kubernetes creates itself, and namespace.create "
                "would have this stack create it.",
                "set namespace.create: false to deploy into it, or remove "
                "namespace.name to use the stack's own namespace vllm-<stack>.",
            )
        ]
    if namespace.retain_on_delete and not namespace.creates:
        return [
            ConfigIssue(
                "namespace.retain_on_delete",
                "is true, but this stack does not create the namespace, so there is nothing to keep on destroy.",
                "remove namespace.retain_on_delete, or set namespace.create: true.",
            )
        ]
    return []


def _cache_issues(cfg: StackConfig) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []
    most = most_replicas(cfg)
    if (
        cfg.cache.access_mode == "ReadWriteOnce"
        and most > 1
        and cfg.cache.existing_claim is None
        and delivery_mode(cfg) == "shared_volume"
    ):
        issues.append(
            ConfigIssue(
                "cache.access_mode",
                f"is ReadWriteOnce, but up to {most} replicas can land on different nodes and a ReadWriteOnce "
                "volume attaches to one node only (the others stay Pending with Multi-Attach errors).",
                "set cache.access_mode: ReadWriteMany with a storage class that supports it, set "
                "delivery.mode: per_replica_volume, or run 1 replica.",
            )
        )
    if cfg.model.local_path is not None and cfg.cache.existing_claim is None:
        issues.append(
            ConfigIssue(
                "model.local_path",
                f"is {show(cfg.model.local_path)}, but a new cache volume would be empty.",
                "set cache.existing_claim to the PVC that holds the model, or remove model.local_path to download it.",
            )
        )
    if cfg.cache.existing_claim is not None and cfg.cache.size_gib is not None:
        issues.append(
            ConfigIssue(
                "cache.size_gib",
                "is set together with cache.existing_claim; an existing claim keeps its own size.",
                "remove cache.size_gib, or remove cache.existing_claim to create the volume.",
            )
        )
    return issues


def _server_issues(cfg: StackConfig) -> list[ConfigIssue]:
    server = cfg.server
    if server.termination_grace_period_seconds > server.pre_stop_sleep_seconds:
        return []
    return [
        ConfigIssue(
            "server.termination_grace_period_seconds",
            f"({server.termination_grace_period_seconds}) must exceed server.pre_stop_sleep_seconds "
            f"({server.pre_stop_sleep_seconds}), or in-flight requests are killed.",
            f"set it to at least {server.pre_stop_sleep_seconds + 60}.",
        )
    ]


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
