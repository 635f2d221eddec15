"""VllmServer: the vLLM Deployment, its Service, PodDisruptionBudget and API-key Secret (its ServiceAccount is
ServingStack's, registered before the model cache: the bucket-copy Job runs as it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi

from components.kube import fill, register, timeouts
from components.render import manifests
from components.render.security import API_KEY_KEY, API_KEY_PREVIOUS_KEY, API_KEY_REVISION_PLACEHOLDER
from components.rollout_gate import RolloutGate, RolloutGateArgs
from plan import Plan
from plan.names import PORT_NAME, service_host
from plan.security import api_key_revision

TYPE_TOKEN = "vllm-serving:index:VllmServer"


@dataclass(frozen=True)
class VllmServerArgs:
    plan: Plan  # plan.server and plan.placement; a per-replica download mounts plan.delivery.hf_token_secret
    namespace: pulumi.Input[str]
    api_key: pulumi.Input[str] | None = None  # required when security.require_api_key
    api_key_previous: pulumi.Input[str] | None = None  # accepted beside api_key (plan.server.api_key_previous)
    wait_for: Sequence[pulumi.Resource] = field(default_factory=tuple)  # its ServiceAccount, the cache PVC and Job


class VllmServer(pulumi.ComponentResource):
    """Registers the rendered server objects. The workload (a Deployment; a StatefulSet for per-replica volumes;
    a LeaderWorkerSet with engine.nnodes > 1) waits for the model cache; its rollout gate's Job, registered right
    after it, ends when the rollout does (plan/rollout_gate.py); the Service waits for the gate: Pulumi awaits a
    Service until it has endpoints."""

    deployment: Any
    service: Any
    rolled_out: Any  # the rollout gate's Job: ends when the rollout does
    api_key_revision: pulumi.Output[str] | None  # the key's fingerprint on the pod templates; the router's too

    def __init__(self, name: str, args: VllmServerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        done, port = dict[str, Any](), args.plan.server.port
        self.api_key_revision = _fingerprint(args)
        objects = manifests.server_objects(args.plan)
        for obj in objects:  # the rendered list, dependencies first
            role = WORKLOAD if obj["kind"] in _WORKLOAD_SUFFIX else obj["kind"]
            suffix = _WORKLOAD_SUFFIX.get(obj["kind"]) or _SUFFIX[role]
            done[role] = register(
                f"{name}-{suffix}",
                fill(obj, API_KEY_REVISION_PLACEHOLDER, self.api_key_revision),
                self._options(role, args, done),
                namespace=args.namespace,
                secrets={API_KEY_KEY: args.api_key, API_KEY_PREVIOUS_KEY: args.api_key_previous} if role == "Secret" else None,
            )
            if role == WORKLOAD:
                done[ROLLED_OUT] = self._rollout_gate(name, args, objects, done[WORKLOAD])
        self.deployment, self.service, self.rolled_out = done[WORKLOAD], done["Service"], done[ROLLED_OUT]
        self.rolled_out_name: pulumi.Output[str] = self.rolled_out.metadata.apply(lambda m: m["name"])
        self.deployment_name: pulumi.Output[str] = self.deployment.metadata.apply(lambda m: m["name"])
        self.service_name: pulumi.Output[str] = self.service.metadata.apply(lambda m: m["name"])
        self.url: pulumi.Output[str] = pulumi.Output.all(self.service_name, args.namespace).apply(
            lambda parts: f"http://{service_host(parts[0], parts[1])}:{port}"
        )
        self.register_outputs(
            {
                "deploymentName": self.deployment_name,
                "serviceName": self.service_name,
                "servicePortName": PORT_NAME,
                "url": self.url,
            }
        )

    def _rollout_gate(
        self, name: str, args: VllmServerArgs, objects: list[dict[str, Any]], workload: pulumi.Resource
    ) -> pulumi.Resource:
        """The rollout gate's Job, which ends when the workload's rollout does."""
        gate = args.plan.rollout_gate
        assert gate is not None, "a Kubernetes stack has a rollout gate"
        gate_objects = manifests.rollout_gate_objects(args.plan, objects)
        gate_args = RolloutGateArgs(gate, gate_objects, args.namespace, workload, self.api_key_revision)
        return RolloutGate(f"{name}-rollout-gate", gate_args, pulumi.ResourceOptions(parent=self)).job

    def _options(self, kind: str, args: VllmServerArgs, done: dict[str, Any]) -> pulumi.ResourceOptions:
        delivery = args.plan.delivery
        if kind == WORKLOAD:  # waits for its account, key and the model cache
            # A Deployment or StatefulSet is not awaited (the rollout gate is); a LeaderWorkerSet's waitFor is.
            awaited = args.plan.multinode is not None
            return pulumi.ResourceOptions(
                parent=self,
                depends_on=[*done.values(), *args.wait_for],
                custom_timeouts=timeouts(delivery.rollout_seconds, delivery.pulumi_timeout_seconds) if awaited else None,
                # KEDA's HPA owns the replica count after creation; never send it back (pulumi-kubernetes#2491, #2258).
                ignore_changes=["spec.replicas"] if args.plan.server.autoscaled else None,
            )
        if kind == "Service":
            return pulumi.ResourceOptions(parent=self, depends_on=[done[ROLLED_OUT]])
        return pulumi.ResourceOptions(parent=self)


def _fingerprint(args: VllmServerArgs) -> pulumi.Output[str] | None:
    """The API key's fingerprint (plan/security.py api_key_revision), without the key's secret mark: a secret
    value inside the pod template marks what holds it secret and hides its diff from the preview
    (pulumi/pulumi-kubernetes#1464), and the fingerprint is plain on the cluster anyway (docs/security.md)."""
    server = args.plan.server
    if server.api_key_secret is None or args.api_key is None:
        return None
    namespace, secret_name = server.namespace, server.api_key_secret
    previous = args.api_key_previous if server.api_key_previous else None
    fingerprint = pulumi.Output.all(args.api_key, previous).apply(
        lambda keys: api_key_revision(keys[0], namespace, secret_name, keys[1])
    )
    return pulumi.Output.unsecret(fingerprint)


# Pulumi resource names per kind (`<component>-<suffix>`): part of every URN, so they never change.
_SUFFIX = {
    "Role": "scc-role",
    "RoleBinding": "scc-role-binding",
    "Secret": "api-key",
    "Service": "service",
    "PodDisruptionBudget": "pdb",
    "DaemonSet": "image-prepull",
}
_WORKLOAD_SUFFIX = {"Deployment": "deployment", "StatefulSet": "statefulset", "LeaderWorkerSet": "leaderworkerset"}
WORKLOAD = "workload"  # the key of whichever kind the server runs as
ROLLED_OUT = "rolled-out"  # the key of the rollout gate's Job
