"""The one place that maps the typed config onto components: the Kubernetes stack and the Docker stack side
by side, each calling its components directly."""

from __future__ import annotations

from typing import Any

import pulumi

from components.autoscaling import KedaAutoscaler, KedaAutoscalerArgs
from components.docker_host import DockerHost, DockerHostArgs, docker_smoke_test
from components.exposure import Exposure, ExposureArgs
from components.monitoring import Monitoring, MonitoringArgs
from components.network_policy import NetworkPolicies, NetworkPoliciesArgs
from components.provider import docker_provider, kubernetes_provider
from components.render.docker import docker_of
from components.render.exposure import client_url
from components.render.keda import capacity_from_report
from components.render.prometheus import server_address
from components.serving_stack import ServingStack, ServingStackArgs
from components.smoke_test import SmokeTest, SmokeTestArgs
from config.secrets import StackSecrets
from config.stack import StackConfig
from plan import Plan
from plan.delivery import DeliveryPlan
from plan.names import namespace_name
from preflight.report import Sizing


def build_stack(plan: Plan, secrets: StackSecrets) -> dict[str, Any]:
    """Register every resource for the stack; return the stack outputs. The plan passed validation.assess
    (__main__.py), so nothing here re-checks it."""
    cfg = plan.config
    if secrets.hf_token is None and cfg.model.local_path is None:
        pulumi.log.warn(
            f"no hf_token secret: downloading {cfg.model.id} works only if the repository is public; "
            "gated ones (Llama, Gemma) fail with 401. Set it: pulumi config set --secret hf_token <token>."
        )
    if cfg.target == "kubernetes":
        pulumi.log.info(f"startup budget: {plan.delivery.budget.probe.explain()}")
    if cfg.target == "docker":
        return build_docker_stack(plan, secrets)
    return build_kubernetes_stack(plan, secrets)


def build_kubernetes_stack(plan: Plan, secrets: StackSecrets) -> dict[str, Any]:
    """Namespace, cache and server (ServingStack), then network policies, the exposure, the smoke test, KEDA and
    monitoring as its children."""
    cfg, report, name = plan.config, plan.sizing, plan.identity.instance
    provider = kubernetes_provider(cfg.render_yaml_to_directory)
    serving = ServingStack(
        name, ServingStackArgs(plan, secrets), pulumi.ResourceOptions(provider=provider) if provider else None
    )
    child = pulumi.ResourceOptions(parent=serving)
    policies = NetworkPolicies(
        f"{name}-network",
        NetworkPoliciesArgs(
            namespace=serving.namespace,
            instance=name,
            port=cfg.server.port,
            policy=cfg.network_policy,
            exposure=cfg.exposure,
            smoke_test=cfg.smoke_test.enabled,
            server_fetches_weights=plan.delivery.mode != "shared_volume",
        ),
        child,
    )
    exposure = Exposure(
        f"{name}-exposure",
        ExposureArgs(config=cfg, instance=name, namespace=serving.namespace, depends_on=(serving.server.service,)),
        child,
    )
    if cfg.smoke_test.enabled:  # after the rollout: the server, its Service and the policies that admit the Job
        SmokeTest(
            f"{name}-smoke-test",
            SmokeTestArgs(
                config=cfg,
                instance=name,
                namespace=serving.namespace,
                wait_for=(serving.server.deployment, serving.server.service, *policies.all),
            ),
            child,
        )
    direct = cfg.exposure.kind == "none" and bool(cfg.network_policy.client_namespaces)
    (pulumi.log.warn if direct else pulumi.log.info)(how_clients_reach_it(cfg, name))
    _observability(cfg, report, plan.delivery, name, serving, child)
    return {**serving.outputs(), "clientUrl": exposure.client_url, "curl": exposure.curl}


def _observability(
    cfg: StackConfig, report: Sizing, delivery: DeliveryPlan, name: str, serving: ServingStack, child: pulumi.ResourceOptions
) -> None:
    """KEDA (when on) and monitoring share thresholds: the queue alert fires where the scaler acts."""
    common: dict[str, Any] = {
        "namespace": serving.namespace,
        "deployment_name": serving.deployment_name,
        "selector_labels": serving.selector_labels,
        "served_model_name": cfg.served_model_name,
        "vllm_version": cfg.vllm.version,
        "capacity": capacity_from_report(report),
        "workload_kind": delivery.workload_kind,
    }
    autoscaler = None
    if cfg.autoscaling.enabled:
        args = KedaAutoscalerArgs(
            autoscaling=cfg.autoscaling, scaled_object_name=name, server_address=server_address(cfg) or "", **common
        )
        autoscaler = KedaAutoscaler(f"{name}-autoscaler", args, child)
    if cfg.monitoring.enabled:
        rollout = delivery.new_replica_seconds
        Monitoring(
            f"{name}-monitoring",
            MonitoringArgs(
                monitoring=cfg.monitoring,
                autoscaling=cfg.autoscaling,
                queue_threshold=autoscaler.thresholds.queue if autoscaler else None,
                hpa_name=autoscaler.hpa_name if autoscaler else None,
                rollout_seconds=rollout,
                **common,
            ),
            child,
        )


def how_clients_reach_it(cfg: StackConfig, name: str) -> str:
    if cfg.exposure.kind != "none":
        return f"clients reach {cfg.served_model_name} at {client_url(cfg, name)} on {', '.join(cfg.exposure.paths)}"
    callers = (
        f"pods in namespaces {', '.join(cfg.network_policy.client_namespaces)}"
        if cfg.network_policy.client_namespaces
        else f"pods in namespace {namespace_name(cfg.namespace, name)} only"
    )
    return (
        f"no exposure.gateway or exposure.ingress: {client_url(cfg, name)} is reachable from {callers} "
        "(network_policy), on every path, /invocations and /tokenize included; expose it through a Gateway "
        "(exposure.gateway) to serve clients elsewhere (docs/exposure.md)"
    )


def build_docker_stack(plan: Plan, secrets: StackSecrets) -> dict[str, Any]:
    """The Docker host's provider and one DockerHost; the same `vllm serve` arguments as on Kubernetes, then the
    same smoke test against its local port."""
    name, server = plan.identity.instance, plan.server
    args = DockerHostArgs(server=server, hf_token=secrets.hf_token, api_key=secrets.api_key)
    host = DockerHost(name, args, opts=pulumi.ResourceOptions(provider=docker_provider(docker_of(server))))
    outputs: dict[str, Any] = {
        "url": host.url,
        "metricsUrl": host.metrics_url,
        "containerName": host.container.name,
        "startupSeconds": server.startup_seconds,
    }
    if plan.config.smoke_test.enabled:  # TRANSITIONAL: the traffic branch's plan.traffic says whether
        outputs["smokeTest"] = docker_smoke_test(name, plan, host, secrets.api_key)
    return outputs
