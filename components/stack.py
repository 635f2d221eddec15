"""The one place that maps the typed config onto components: the Kubernetes stack and the Docker stack side
by side, each calling its components directly."""

from __future__ import annotations

from typing import Any

import pulumi

from components.autoscaling import KedaAutoscaler, KedaAutoscalerArgs
from components.docker_host import DockerHost, DockerHostArgs
from components.monitoring import Monitoring, MonitoringArgs
from components.network_policy import NetworkPolicies, NetworkPoliciesArgs
from components.provider import docker_provider, kubernetes_provider
from components.render.docker import render_env, startup_seconds
from components.render.keda import capacity_from_report
from components.render.names import instance_name
from components.render.probes import server_startup_budget
from components.render.vllm_args import render_vllm_args
from components.serving_stack import ServingStack, ServingStackArgs
from config.secrets import StackSecrets
from config.stack import StackConfig
from preflight.report import Sizing


def build_stack(cfg: StackConfig, report: Sizing, secrets: StackSecrets,
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


def build_kubernetes_stack(cfg: StackConfig, report: Sizing, secrets: StackSecrets,
                           name: str) -> dict[str, Any]:
    """Namespace, cache and server (ServingStack), then network policies, KEDA and monitoring as its children."""
    provider = kubernetes_provider(cfg)
    serving = ServingStack(name, ServingStackArgs(cfg, report, secrets),
                           pulumi.ResourceOptions(provider=provider) if provider else None)
    child = pulumi.ResourceOptions(parent=serving)
    NetworkPolicies(f"{name}-network", NetworkPoliciesArgs(
        namespace=serving.namespace, instance=name, port=cfg.server.port, policy=cfg.network_policy), child)
    capacity = capacity_from_report(report)
    autoscaler = None
    if cfg.autoscaling.enabled:
        autoscaler = KedaAutoscaler(f"{name}-autoscaler", KedaAutoscalerArgs(
            namespace=serving.namespace, deployment_name=serving.deployment_name,
            selector_labels=serving.selector_labels, served_model_name=cfg.served_model_name,
            vllm_version=cfg.vllm.version, autoscaling=cfg.autoscaling, capacity=capacity,
            scaled_object_name=name), child)
    if cfg.monitoring.enabled:  # the queue alert fires where the scaler acts
        Monitoring(f"{name}-monitoring", MonitoringArgs(
            namespace=serving.namespace, deployment_name=serving.deployment_name,
            selector_labels=serving.selector_labels, served_model_name=cfg.served_model_name,
            vllm_version=cfg.vllm.version, monitoring=cfg.monitoring, capacity=capacity,
            autoscaling=cfg.autoscaling, queue_threshold=autoscaler.thresholds.queue if autoscaler else None,
            hpa_name=autoscaler.hpa_name if autoscaler else None,
            startup_seconds=server_startup_budget(cfg, report.weights_on_disk_gib).total_seconds), child)
    return serving.outputs()


def build_docker_stack(cfg: StackConfig, report: Sizing, secrets: StackSecrets,
                       name: str = "vllm") -> dict[str, Any]:
    """The Docker host's provider and one DockerHost; the same `vllm serve` arguments as on Kubernetes."""
    seconds = startup_seconds(cfg, report)
    args = DockerHostArgs(
        config=cfg, vllm_args=render_vllm_args(cfg, report.resolved), startup_seconds=seconds,
        env=render_env(cfg, report, seconds), hf_token=secrets.hf_token, api_key=secrets.api_key)
    host = DockerHost(name, args, opts=pulumi.ResourceOptions(provider=docker_provider(cfg)))
    return {"url": host.url, "metricsUrl": host.metrics_url, "containerName": host.container.name,
            "startupSeconds": seconds}
