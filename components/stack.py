"""The one place that maps the typed config onto components."""

from __future__ import annotations

from typing import Any

import pulumi

from components.autoscaling import KedaAutoscaler, KedaAutoscalerArgs
from components.docker_host import build_docker_stack
from components.exposure import Exposure, ExposureArgs
from components.monitoring import Monitoring, MonitoringArgs
from components.network_policy import NetworkPolicies, NetworkPoliciesArgs
from components.provider import kubernetes_provider
from components.render.checks import check_kubernetes
from components.render.exposure import client_url
from components.render.keda import capacity_from_report
from components.render.names import instance_name, namespace_name
from components.render.probes import new_replica_seconds, server_startup_budget
from components.render.prometheus import server_address
from components.render.vllm_checks import check_vllm_config
from components.serving_stack import ServingStack, ServingStackArgs
from components.smoke_test import SmokeTest, SmokeTestArgs
from config.delivery import delivery_mode, workload_kind
from config.errors import ConfigError, ConfigIssue
from config.secrets import StackSecrets
from config.stack import StackConfig, missing_secrets
from preflight.delivery import delivery_budget
from preflight.report import PreflightReport


def check_stack(cfg: StackConfig, report: PreflightReport) -> list[ConfigIssue]:
    """Every reason the target cannot be built; run before anything is registered."""
    if cfg.target == "docker":
        return check_vllm_config(cfg, report.resolved)
    return check_kubernetes(cfg, report)


def build_stack(cfg: StackConfig, report: PreflightReport, secrets: StackSecrets,
                stack: str = "dev") -> dict[str, Any]:
    """Register every resource for the stack; return the stack outputs. Raises ConfigError first if the
    target cannot be built, so nothing is registered then."""
    issues = check_stack(cfg, report) + missing_secrets(cfg, secrets.present)
    if issues:
        raise ConfigError(issues)
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
    traffic_outputs: dict[str, Any] = {}
    extensions = (_observability(cfg, report, name), _traffic(cfg, name, traffic_outputs))
    serving = ServingStack(name, ServingStackArgs(cfg, report, secrets, extensions),
                           pulumi.ResourceOptions(provider=provider) if provider else None)
    return {**serving.outputs(), **traffic_outputs}


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
                scaled_object_name=name, server_address=server_address(cfg) or "",
                workload_kind=workload_kind(cfg)), child)
        if cfg.monitoring.enabled:
            Monitoring(f"{name}-monitoring", MonitoringArgs(
                namespace=stack.namespace, deployment_name=stack.deployment_name,
                selector_labels=stack.selector_labels, served_model_name=cfg.served_model_name,
                vllm_version=cfg.vllm.version, monitoring=cfg.monitoring, capacity=capacity,
                queue_threshold=autoscaler.thresholds.queue if autoscaler else None,
                hpa_name=autoscaler.hpa_name if autoscaler else None,
                rollout_seconds=new_replica_seconds(cfg, delivery_budget(cfg, report.weights_on_disk_gib)),
                workload_kind=workload_kind(cfg)), child)

    return extend


def _traffic(cfg: StackConfig, name: str, outputs: dict[str, Any]) -> Any:
    """NetworkPolicies that follow the exposure, the route or Ingress, then the smoke test after the rollout;
    fills `outputs` with clientUrl and curl."""
    def extend(stack: ServingStack) -> None:
        child = pulumi.ResourceOptions(parent=stack)
        policies = NetworkPolicies(f"{name}-network", NetworkPoliciesArgs(
            namespace=stack.namespace, instance=name, port=cfg.server.port, policy=cfg.network_policy,
            exposure=cfg.exposure, smoke_test=cfg.smoke_test.enabled,
            server_fetches_weights=delivery_mode(cfg) != "shared_volume"), child)
        exposure = Exposure(f"{name}-exposure", ExposureArgs(
            config=cfg, instance=name, namespace=stack.namespace, depends_on=(stack.server.service,)), child)
        if cfg.smoke_test.enabled:
            SmokeTest(f"{name}-smoke-test", SmokeTestArgs(
                config=cfg, instance=name, namespace=stack.namespace,
                wait_for=(stack.server.deployment, stack.server.service, *policies.all)), child)
        direct = cfg.exposure.kind == "none" and bool(cfg.network_policy.client_namespaces)
        (pulumi.log.warn if direct else pulumi.log.info)(how_clients_reach_it(cfg, name))
        outputs.update(clientUrl=exposure.client_url, curl=exposure.curl)

    return extend


def how_clients_reach_it(cfg: StackConfig, name: str) -> str:
    if cfg.exposure.kind != "none":
        return f"clients reach {cfg.served_model_name} at {client_url(cfg, name)} on {', '.join(cfg.exposure.paths)}"
    callers = (f"pods in namespaces {', '.join(cfg.network_policy.client_namespaces)}"
               if cfg.network_policy.client_namespaces else f"pods in namespace {namespace_name(cfg.namespace, name)} only")
    return (f"no exposure.gateway or exposure.ingress: {client_url(cfg, name)} is reachable from {callers} "
            "(network_policy), on every path, /invocations and /tokenize included; expose it through a Gateway "
            "(exposure.gateway) to serve clients elsewhere (docs/exposure.md)")
