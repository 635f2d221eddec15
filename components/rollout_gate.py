"""RolloutGate: the Job that ends when the server's workload has rolled out, and fails when its pods cannot start
(components/render/rollout_gate.py); what depends on the server waits for it, since Pulumi does not await the
workload itself (plan/rollout_gate.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi

from components.kube import fill, register, timeouts
from components.render.security import API_KEY_REVISION_PLACEHOLDER
from plan.rollout_gate import RolloutGatePlan

TYPE_TOKEN = "vllm-serving:index:RolloutGate"
# Pulumi resource names per kind (`<component>-<suffix>`): part of every URN, so they never change.
_SUFFIX = {"ServiceAccount": "account", "Role": "role", "RoleBinding": "role-binding", "ConfigMap": "script", "Job": "job"}


@dataclass(frozen=True)
class RolloutGateArgs:
    gate: RolloutGatePlan
    objects: Sequence[dict[str, Any]]  # manifests.rollout_gate_objects: account, Role, RoleBinding, ConfigMap, Job
    namespace: pulumi.Input[str]
    workload: pulumi.Resource  # the Deployment, StatefulSet or LeaderWorkerSet: the Job starts after its update
    api_key_revision: pulumi.Input[str] | None = None  # VllmServer.api_key_revision: a rotation rolls the pods


class RolloutGate(pulumi.ComponentResource):
    """Attributes: job, the Job Pulumi awaits until the rollout is done (at most its deadline plus a minute)."""

    def __init__(self, name: str, args: RolloutGateArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        before: list[pulumi.Resource] = [args.workload]
        job: pulumi.Resource | None = None
        for obj in args.objects:
            kind = obj["kind"]
            options = pulumi.ResourceOptions(parent=self)
            if kind == "Job":  # no delete_before_replace: a new name goes create-first, a kept one delete-first
                timeout = timeouts(args.gate.pulumi_timeout_seconds)
                options = pulumi.ResourceOptions(parent=self, depends_on=before, custom_timeouts=timeout)
                obj = fill(obj, API_KEY_REVISION_PLACEHOLDER, args.api_key_revision)
            created = register(f"{name}-{_SUFFIX[kind]}", obj, options, namespace=args.namespace)
            before.append(created)
            job = created if kind == "Job" else job
        assert job is not None, "the rollout gate renders a Job"
        self.job = job
        self.register_outputs({})
