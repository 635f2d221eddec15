"""The one place that maps the typed config onto components: the Kubernetes stack and the Docker stack side
by side, each calling its components directly."""

from __future__ import annotations

from typing import Any

import pulumi

from catalog.models import gated_on_hub
from components.autoscaling import KedaAutoscaler, KedaAutoscalerArgs
from components.docker_host import DockerHost, DockerHostArgs, docker_smoke_test
from components.exposure import Exposure, ExposureArgs
from components.monitoring import Monitoring, MonitoringArgs
from components.network_policy import NetworkPolicies, NetworkPoliciesArgs
from components.provider import docker_provider, kubernetes_provider
from components.render.docker import docker_of
from components.router import Router, RouterArgs
from components.serving_stack import ServingStack, ServingStackArgs
from components.smoke_test import SmokeTest, SmokeTestArgs
from components.startup_report import startup_phases_output
from config.secrets import StackSecrets
from plan import Plan
from plan.identity import Identity
from plan.traffic import TrafficPlan


def build_stack(plan: Plan, secrets: StackSecrets) -> dict[str, Any]:
    """Register every resource for the stack; return the stack outputs. The plan passed validation.assess
    (__main__.py), so nothing here re-checks it."""
    model = plan.model
    # A gated model without the token stopped in validation.assess (validation/secrets.py); a public one needs
    # none. Only a model neither the catalog nor the Hub described (model.architecture, config_json) may be either.
    gated = gated_on_hub(model.id, plan.sizing.resolved.architecture)
    if secrets.hf_token is None and model.local_path is None and gated is None:
        pulumi.log.warn(
            f"no hf_token secret: downloading {model.id} works only if the repository is public (the catalog does "
            "not say); a gated one fails with 401. Set it: pulumi config set --secret hf_token <token>."
        )
    if plan.target == "kubernetes":
        pulumi.log.info(f"startup budget: {plan.delivery.budget.probe.explain()}")
    if plan.target == "docker":
        return build_docker_stack(plan, secrets)
    return build_kubernetes_stack(plan, secrets)


def build_kubernetes_stack(plan: Plan, secrets: StackSecrets) -> dict[str, Any]:
    """Namespace, cache and server (ServingStack), then network policies, the exposure, the smoke test, KEDA and
    monitoring as its children."""
    identity, traffic, name = plan.identity, plan.traffic, plan.identity.instance
    provider = kubernetes_provider(plan.render_yaml_to_directory)
    serving = ServingStack(
        name, ServingStackArgs(plan, secrets), pulumi.ResourceOptions(provider=provider) if provider else None
    )
    child = pulumi.ResourceOptions(parent=serving)
    policies = NetworkPolicies(f"{name}-network", NetworkPoliciesArgs(identity, traffic, serving.namespace), child)
    front: tuple[pulumi.Resource, ...] = (serving.server.service,)  # what callers reach: the router when on
    if plan.routing is not None:
        server = (serving.server.rolled_out, serving.server.service)  # the router moves after the servers did
        router_args = RouterArgs(
            plan.routing, plan.monitoring, serving.namespace, server, api_key_revision=serving.server.api_key_revision
        )
        router = Router(f"{name}-router", router_args, child)
        front = (router.deployment, router.service)
    exposure = Exposure(f"{name}-exposure", ExposureArgs(identity, traffic, serving.namespace, depends_on=front), child)
    started: list[pulumi.Output[Any]] = [serving.server.rolled_out_name]  # resolves once the rollout is awaited
    autoscaler = _autoscaler(plan, serving, child)
    if traffic.smoke is not None:  # after the rollout: the server, its Service and the policies that admit the Job
        # With the add-on, also after what the interceptor routes the Job's Host by: created together, the Job's
        # request could reach the interceptor before the HTTPScaledObject exists and get 404 (docs/scale-to-zero.md).
        routes = autoscaler.routes if autoscaler is not None else []
        wait_for = (serving.server.rolled_out, serving.server.service, *front, *policies.all, *routes)
        revision = serving.server.api_key_revision
        smoke_args = SmokeTestArgs(identity, traffic, traffic.smoke, serving.namespace, wait_for, revision)
        smoke = SmokeTest(f"{name}-smoke-test", smoke_args, child)
        started.append(smoke.job_name)
    direct = not traffic.exposed and bool(traffic.network_policy.client_namespaces)
    (pulumi.log.warn if direct else pulumi.log.info)(how_clients_reach_it(identity, traffic))
    _monitoring(plan, serving, child)
    outputs = {**serving.outputs(), "clientUrl": exposure.client_url, "curl": exposure.curl}
    phases = startup_phases_output(plan, serving.namespace, started)
    return outputs if phases is None else {**outputs, "startupPhases": phases}


def _autoscaler(plan: Plan, serving: ServingStack, child: pulumi.ResourceOptions) -> KedaAutoscaler | None:
    """KEDA (when on) and monitoring (_monitoring) read one workload and one set of thresholds from the plan: the
    queue alert fires where the scaler acts."""
    scaling = plan.scaling
    if not scaling.enabled:
        return None
    # After the rollout, as when Pulumi awaited the workload itself: KEDA takes the count from a settled workload.
    args = KedaAutoscalerArgs(scaling, serving.namespace, (serving.server.rolled_out,), plan.zero)
    return KedaAutoscaler(f"{scaling.scaled_object_name}-autoscaler", args, child)


def _monitoring(plan: Plan, serving: ServingStack, child: pulumi.ResourceOptions) -> None:
    if plan.monitoring.enabled:
        args = MonitoringArgs(
            plan.monitoring, plan.scaling.workload, serving.namespace, (serving.server.rolled_out,), plan.zero
        )
        Monitoring(plan.monitoring.name, args, child)


def how_clients_reach_it(identity: Identity, traffic: TrafficPlan) -> str:
    if traffic.exposed:
        return f"clients reach {traffic.served_model_name} at {traffic.client_url} on {', '.join(traffic.exposure.paths)}"
    client_namespaces = traffic.network_policy.client_namespaces
    callers = (
        f"pods in namespaces {', '.join(client_namespaces)}"
        if client_namespaces
        else f"pods in namespace {identity.namespace} only"
    )
    return (
        f"no exposure.gateway or exposure.ingress: {traffic.client_url} is reachable from {callers} "
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
    if plan.traffic.smoke is not None:
        outputs["smokeTest"] = docker_smoke_test(name, plan, host, secrets.api_key)
    return outputs
