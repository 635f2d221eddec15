"""The `cluster` group (profile, gpu_label): the GPU product must be selectable with the cluster's label scheme, or
named through gpu.node_selector; a managed upgrade's drain timeout is set only where the provider has one."""

from __future__ import annotations

from typing import Any

from catalog.selectors import NoLabelValue, gpu_selector_terms, label_scheme
from config.errors import ConfigIssue, show
from config.stack import StackConfig


def cross_checks(cfg: StackConfig) -> list[ConfigIssue]:
    return _gpu_selection(cfg) + _upgrade_timeout(cfg)


def _upgrade_timeout(cfg: StackConfig) -> list[ConfigIssue]:
    """cluster.upgrade_drain_timeout_minutes stands for a node pool setting; a provider whose wait is fixed (GKE) or
    unknown has none to match."""
    drain = cfg.cluster.defaults.upgrade_drain
    if cfg.cluster.upgrade_drain_timeout_minutes is None or (drain is not None and drain.timeout_setting):
        return []
    return [
        ConfigIssue(
            "cluster.upgrade_drain_timeout_minutes",
            f"is set, but profile {cfg.cluster.profile} has no node pool drain timeout to match "
            '(docs/cluster.md "Managed node upgrades").',
            "remove it, or set cluster.profile aks if the cluster is AKS.",
        )
    ]


def _gpu_selection(cfg: StackConfig) -> list[ConfigIssue]:
    """The GPU product must be selectable with the label scheme, or named through gpu.node_selector."""
    if cfg.target != "kubernetes":
        return []
    scheme = label_scheme(cfg.scheduling.require_gpu_product_label, cfg.cluster.gpu_label_scheme)
    key = (
        "scheduling.require_gpu_product_label" if cfg.scheduling.require_gpu_product_label is not None else "cluster.gpu_label"
    )
    if scheme == "none":
        if cfg.gpu.node_selector:
            return []
        return [
            ConfigIssue(
                key,
                "selects no GPU product and gpu.node_selector is empty, so pods could land on any GPU, not the "
                "one the preflight sized for.",
                "set cluster.profile (gke, eks-karpenter, aks, gpu-operator, ...) or cluster.gpu_label, or name the GPU "
                "in gpu.node_selector, e.g. {cloud.google.com/gke-accelerator: nvidia-a100-80gb}.",
            )
        ]
    products = list(cfg.gpu.products)
    try:
        terms = gpu_selector_terms(scheme, products, [cfg.gpu.spec_for(p).gfd_product for p in products])
    except NoLabelValue as error:
        return [
            ConfigIssue(
                key,
                f"is {scheme} (profile {cfg.cluster.profile}), but {error}.",
                "set cluster.gpu_label to gfd (with GPU Feature Discovery) or none with gpu.node_selector naming the "
                "GPU, or choose a product this provider offers.",
            )
        ]
    return _selector_contradicting_affinity(cfg.gpu.node_selector, terms, cfg.gpu.product)


def _selector_contradicting_affinity(
    node_selector: dict[str, str], terms: list[dict[str, Any]], product: str
) -> list[ConfigIssue]:
    """A node selector on the label the GPU affinity already requires, with a value the affinity excludes: both
    must hold on one node, so no node matches and every replica stays Pending."""
    required = {
        expression["key"]: expression["values"]
        for term in terms
        for expression in term["matchExpressions"]
        if expression["operator"] == "In"
    }
    return [
        ConfigIssue(
            f"gpu.node_selector.{label}",
            f"is {show(value)}, but the GPU affinity for {product} requires {label} in {required[label]}: no node "
            "matches both, so every replica stays Pending.",
            f"remove gpu.node_selector.{label} (the affinity already selects the GPU), or set gpu.product to the GPU "
            f"that {show(value)} names.",
        )
        for label, value in node_selector.items()
        if label in required and value not in required[label]
    ]
