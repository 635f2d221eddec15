"""The router: vLLM's router in front of the server replicas, registered from components/render/router.py."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi

from components.kube import fill, register, timeouts
from components.render.router import router_objects
from components.render.security import API_KEY_REVISION_PLACEHOLDER
from plan.monitoring import MonitoringPlan
from plan.routing import RoutingPlan

TYPE_TOKEN = "vllm-serving:index:Router"


@dataclass(frozen=True)
class RouterArgs:
    routing: RoutingPlan
    monitoring: MonitoringPlan  # the ServiceMonitor's labels and interval, when monitoring is on
    namespace: pulumi.Input[str]  # ServingStack.namespace
    depends_on: Sequence[pulumi.Resource] = field(default_factory=tuple)  # the server: the router waits for it
    api_key_revision: pulumi.Input[str] | None = None  # VllmServer.api_key_revision: a rotated key rolls the router


class Router(pulumi.ComponentResource):
    """ServiceAccount, Role, RoleBinding, Deployment, Service, PodDisruptionBudget and (with monitoring) a
    ServiceMonitor.

    Attributes:
        deployment: the router's Deployment. service: its Service, what the exposure and smoke test call.
    """

    def __init__(self, name: str, args: RouterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        created: dict[str, pulumi.Resource] = {}
        for manifest in router_objects(args.routing, args.monitoring):
            kind = manifest["kind"]
            child = pulumi.ResourceOptions(parent=self, depends_on=list(args.depends_on))
            if kind == "Deployment":  # it listens once its workers answer: the servers' startup budget
                child = pulumi.ResourceOptions.merge(
                    child, pulumi.ResourceOptions(custom_timeouts=timeouts(args.routing.startup_seconds + 600))
                )
            manifest = fill(manifest, API_KEY_REVISION_PLACEHOLDER, args.api_key_revision)
            created[kind] = register(f"{name}-{kind.lower()}", manifest, child, namespace=args.namespace)
        self.deployment = created["Deployment"]
        self.service = created["Service"]
        self.register_outputs({"url": args.routing.url})
