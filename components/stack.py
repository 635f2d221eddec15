"""The one place that maps the typed config onto components."""

from __future__ import annotations

import re
from typing import Any

import pulumi

from components.autoscaling import KedaAutoscaler, KedaAutoscalerArgs
from components.docker_host import build_docker_stack
from components.monitoring import Monitoring, MonitoringArgs
from components.network_policy import NetworkPolicies, NetworkPoliciesArgs
from components.provider import kubernetes_provider
from components.render.keda import capacity_from_report
from components.render.probes import server_startup_budget
from components.serving_stack import ServingStack, ServingStackArgs
from config.secrets import StackSecrets
from config.stack import StackConfig
from preflight.report import PreflightReport


def instance_name(stack: str) -> str:
    """The app.kubernetes.io/instance of this stack: `vllm-<stack>`, as a DNS label of at most 38 characters,
    so two stacks can share a namespace without colliding."""
    cleaned = re.sub(r"[^a-z0-9-]+", "-", stack.lower()).strip("-")
    return f"vllm-{cleaned}"[:38].rstrip("-") if cleaned else "vllm"


def build_stack(cfg: StackConfig, report: PreflightReport, secrets: StackSecrets,
                stack: str = "dev") -> dict[str, Any]:
    """Register every resource for the stack; return the stack outputs. `cfg` passed validation.check_stack
    (__main__.py runs validation.assess first), so nothing here re-checks it."""
    if secrets.hf_token is None and cfg.model.local_path is None:
        pulumi.log.warn(f"no hf_token secret: downloading {cfg.model.id} works only if the repository is public; "
                        "gated ones (Llama, Gemma) fail with 401. Set it: pulumi config set --secret hf_token <token>.")
    if cfg.target == "kubernetes":
        pulumi.log.info(f"startup budget: {server_startup_budget(cfg, report.weights_on_disk_gib).explain()}")
    if cfg.target == "docker":
        return build_docker_stack(cfg, report, secrets, name=instance_name(stack))
    return build_kubernetes_stack(cfg, report, secrets, instance_name(stack))


def build_kubernetes_stack(cfg: StackConfig, report: PreflightReport, secrets: StackSecrets,
                           name: str) -> dict[str, Any]:
    provider = kubernetes_provider(cfg)
    extensions = (_observability(cfg, report, name), _network_policies(cfg, name))
    serving = ServingStack(name, ServingStackArgs(cfg, report, secrets, extensions),
                           pulumi.ResourceOptions(provider=provider) if provider else None)
    return serving.outputs()


def _observability(cfg: StackConfig, report: PreflightReport, name: str) -> Any:
    """KEDA (when on) and monitoring share thresholds: the queue alert fires where the scaler acts."""
    capacity = capacity_from_report(report)

    def extend(stack: ServingStack) -> None:
        child = pulumi.ResourceOptions(parent=stack)
        autoscaler = None
        if cfg.autoscaling.enabled:
            autoscaler = KedaAutoscaler(f"{name}-autoscaler", KedaAutoscalerArgs(
                namespace=stack.namespace, deployment_name=stack.deployment_name,
                selector_labels=stack.selector_labels, served_model_name=cfg.served_model_name,
                vllm_version=cfg.vllm.version, autoscaling=cfg.autoscaling, capacity=capacity,
                scaled_object_name=name), child)
        if cfg.monitoring.enabled:
            Monitoring(f"{name}-monitoring", MonitoringArgs(
                namespace=stack.namespace, deployment_name=stack.deployment_name,
                selector_labels=stack.selector_labels, served_model_name=cfg.served_model_name,
                vllm_version=cfg.vllm.version, monitoring=cfg.monitoring, capacity=capacity,
                queue_threshold=autoscaler.thresholds.queue if autoscaler else None,
                hpa_name=autoscaler.hpa_name if autoscaler else None,
                startup_seconds=server_startup_budget(cfg, report.weights_on_disk_gib).total_seconds), child)

    return extend


def _network_policies(cfg: StackConfig, name: str) -> Any:
    def extend(stack: ServingStack) -> None:
        NetworkPolicies(f"{name}-network", NetworkPoliciesArgs(
            namespace=stack.namespace, instance=name, port=cfg.server.port, policy=cfg.network_policy),
            pulumi.ResourceOptions(parent=stack))

    return extend
