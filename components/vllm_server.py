"""VllmServer: the vLLM Deployment, its Service, PodDisruptionBudget, ServiceAccount and API-key Secret."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import pulumi
import pulumi_kubernetes as k8s

from components.kube import timeouts, with_namespace
from components.render import manifests, pod
from components.render.names import PORT_NAME
from components.render.probes import pulumi_timeout_seconds, rollout_timeout_seconds
from components.render.security import API_KEY_KEY, render_secret, render_service_account
from config.stack import StackConfig
from preflight.report import PreflightReport

TYPE_TOKEN = "vllm-serving:index:VllmServer"

@dataclass(frozen=True)
class VllmServerArgs:
    config: StackConfig
    report: PreflightReport  # the resolved engine values and the weights size the budget is computed from
    instance: str
    namespace: pulumi.Input[str]
    claim_name: str  # the model cache PVC
    api_key: pulumi.Input[str] | None = None  # required when security.require_api_key
    wait_for: Sequence[pulumi.Resource] = field(default_factory=tuple)  # the cache PVC and download Job


def server_plan(args: VllmServerArgs) -> pod.ServerPlan:
    return replace(manifests.server_plan(args.config, args.report, args.instance), claim=args.claim_name)


class VllmServer(pulumi.ComponentResource):
    """Registers the rendered server objects. The Deployment waits for the model cache, and Pulumi's await
    is stretched to the computed startup budget; the Service waits for the Deployment."""

    deployment: k8s.apps.v1.Deployment
    service: k8s.core.v1.Service
    plan: pod.ServerPlan

    def __init__(self, name: str, args: VllmServerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        self.plan = plan = server_plan(args)
        cfg = args.config
        deployment, service, pdb = pod.render_deployment(cfg, plan), pod.render_service(cfg, plan), pod.render_pdb(plan)
        super().__init__(TYPE_TOKEN, name, None, opts)
        deps = [self._service_account(name, args), *self._api_key_secret(name, args), *args.wait_for]
        self.deployment = k8s.apps.v1.Deployment(
            f"{name}-deployment", metadata=with_namespace(deployment, args.namespace), spec=deployment["spec"],
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=deps,
                custom_timeouts=timeouts(rollout_timeout_seconds(cfg, plan.budget), pulumi_timeout_seconds(cfg, plan.budget)),
                # KEDA's HPA owns the replica count; never send it back (pulumi-kubernetes#2491, #2258).
                ignore_changes=["spec.replicas"] if cfg.autoscaling.enabled else None))
        self.service = k8s.core.v1.Service(
            f"{name}-service", metadata=with_namespace(service, args.namespace), spec=service["spec"],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.deployment]))
        k8s.policy.v1.PodDisruptionBudget(
            f"{name}-pdb", metadata=with_namespace(pdb, args.namespace), spec=pdb["spec"],
            opts=pulumi.ResourceOptions(parent=self))
        self.deployment_name: pulumi.Output[str] = self.deployment.metadata.apply(lambda m: m["name"])
        self.service_name: pulumi.Output[str] = self.service.metadata.apply(lambda m: m["name"])
        self.url: pulumi.Output[str] = pulumi.Output.all(self.service_name, args.namespace).apply(
            lambda parts: f"http://{parts[0]}.{parts[1]}.svc:{cfg.server.port}")
        self.register_outputs({"deploymentName": self.deployment_name, "serviceName": self.service_name,
                               "servicePortName": PORT_NAME, "url": self.url})

    def _service_account(self, name: str, args: VllmServerArgs) -> k8s.core.v1.ServiceAccount:
        sa = render_service_account(self.plan.service_account, args.config.namespace.name, self.plan.labels)
        return k8s.core.v1.ServiceAccount(
            f"{name}-sa", metadata=with_namespace(sa, args.namespace), automount_service_account_token=False,
            opts=pulumi.ResourceOptions(parent=self))

    def _api_key_secret(self, name: str, args: VllmServerArgs) -> list[pulumi.Resource]:
        if self.plan.api_key_secret is None:
            return []
        secret = render_secret(self.plan.api_key_secret, args.config.namespace.name, self.plan.labels,
                               API_KEY_KEY, args.api_key)
        return [k8s.core.v1.Secret(f"{name}-api-key", metadata=with_namespace(secret, args.namespace), type="Opaque",
                                   string_data=secret["stringData"], opts=pulumi.ResourceOptions(parent=self))]
