"""VllmServer: the vLLM Deployment, its Service, PodDisruptionBudget, ServiceAccount and API-key Secret."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pulumi

from components.kube import register, timeouts
from components.render import manifests, pod
from config.stack import StackConfig
from plan.names import PORT_NAME
from preflight.report import Sizing

TYPE_TOKEN = "vllm-serving:index:VllmServer"


@dataclass(frozen=True)
class VllmServerArgs:
    config: StackConfig
    report: Sizing  # the resolved engine values and the weights size the budget is computed from
    instance: str
    namespace: pulumi.Input[str]
    claim_name: str  # the model cache PVC
    api_key: pulumi.Input[str] | None = None  # required when security.require_api_key
    wait_for: Sequence[pulumi.Resource] = field(default_factory=tuple)  # the cache PVC and download Job
    with_hf_token: bool = False  # a per-replica download init container mounts the HF token Secret


def server_plan(args: VllmServerArgs) -> pod.ServerPlan:
    plan = manifests.server_plan(args.config, args.report, args.instance, args.with_hf_token)
    return replace(plan, claim=args.claim_name)


class VllmServer(pulumi.ComponentResource):
    """Registers the rendered server objects. The workload (a Deployment; a StatefulSet for per-replica volumes;
    a LeaderWorkerSet with engine.nnodes > 1) waits for the model cache, and Pulumi's await is stretched to the
    computed first-start budget; the Service waits for the workload."""

    deployment: Any
    service: Any
    plan: pod.ServerPlan

    def __init__(self, name: str, args: VllmServerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        self.plan = plan = server_plan(args)
        cfg, done = args.config, dict[str, Any]()
        for obj in manifests.server_objects(cfg, plan, args.instance):  # the rendered list, dependencies first
            role = WORKLOAD if obj["kind"] in _WORKLOAD_SUFFIX else obj["kind"]
            suffix = _WORKLOAD_SUFFIX.get(obj["kind"]) or _SUFFIX[role]
            done[role] = register(
                f"{name}-{suffix}",
                obj,
                self._options(role, args, done),
                namespace=args.namespace,
                secret=args.api_key if role == "Secret" else None,
            )
        self.deployment, self.service = done[WORKLOAD], done["Service"]
        self.deployment_name: pulumi.Output[str] = self.deployment.metadata.apply(lambda m: m["name"])
        self.service_name: pulumi.Output[str] = self.service.metadata.apply(lambda m: m["name"])
        self.url: pulumi.Output[str] = pulumi.Output.all(self.service_name, args.namespace).apply(
            lambda parts: f"http://{parts[0]}.{parts[1]}.svc:{cfg.server.port}"
        )
        self.register_outputs(
            {
                "deploymentName": self.deployment_name,
                "serviceName": self.service_name,
                "servicePortName": PORT_NAME,
                "url": self.url,
            }
        )

    def _options(self, kind: str, args: VllmServerArgs, done: dict[str, Any]) -> pulumi.ResourceOptions:
        cfg, delivery = args.config, self.plan.delivery
        if kind == WORKLOAD:  # waits for its account, key and the model cache; await stretched to the budget
            return pulumi.ResourceOptions(
                parent=self,
                depends_on=[*done.values(), *args.wait_for],
                custom_timeouts=timeouts(delivery.rollout_seconds, delivery.pulumi_timeout_seconds),
                # KEDA's HPA owns the replica count; never send it back (pulumi-kubernetes#2491, #2258).
                ignore_changes=["spec.replicas"] if cfg.autoscaling.enabled else None,
            )
        if kind == "Service":
            return pulumi.ResourceOptions(parent=self, depends_on=[done[WORKLOAD]])
        return pulumi.ResourceOptions(parent=self)


# Pulumi resource names per kind (`<component>-<suffix>`): part of every URN, so they never change.
_SUFFIX = {"ServiceAccount": "sa", "Secret": "api-key", "Service": "service", "PodDisruptionBudget": "pdb"}
_WORKLOAD_SUFFIX = {"Deployment": "deployment", "StatefulSet": "statefulset", "LeaderWorkerSet": "leaderworkerset"}
WORKLOAD = "workload"  # the key of whichever kind the server runs as
