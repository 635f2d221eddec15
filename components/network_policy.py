"""NetworkPolicies: who may reach the vLLM server, and where the serving and download pods may connect."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.kube import register
from components.render.network_policy import MODEL_CACHE, SERVER, render_network_policies
from plan.identity import Identity
from plan.routing import RoutingPlan
from plan.traffic import TrafficPlan

TYPE_TOKEN = "vllm-serving:index:NetworkPolicies"


@dataclass(frozen=True)
class NetworkPoliciesArgs:
    identity: Identity  # the instance labels select the server, download and smoke-test pods
    traffic: TrafficPlan  # the policy, port, exposure (its proxies are the callers), smoke test, hub egress
    namespace: pulumi.Input[str]  # the stack's namespace (ServingStack.namespace)
    routing: RoutingPlan | None = None  # the router's policy, and its flows to the servers, when routing is on


class NetworkPolicies(pulumi.ComponentResource):
    """One NetworkPolicy for the server pods and one for the model download Job (none when disabled).

    Attributes:
        server: the server pods' policy, or None when network_policy.enabled is false.
        model_cache: the download Job's policy, or None when network_policy.enabled is false.
    """

    server: k8s.networking.v1.NetworkPolicy | None
    model_cache: k8s.networking.v1.NetworkPolicy | None

    def __init__(self, name: str, args: NetworkPoliciesArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        created: dict[str, k8s.networking.v1.NetworkPolicy] = {}
        for manifest in render_network_policies(args.identity, args.traffic, args.routing):
            component = manifest["metadata"]["labels"]["app.kubernetes.io/component"]
            created[component] = register(
                f"{name}-{component}", manifest, pulumi.ResourceOptions(parent=self), namespace=args.namespace
            )
        self.server = created.get(SERVER)
        self.model_cache = created.get(MODEL_CACHE)
        self.all: list[k8s.networking.v1.NetworkPolicy] = list(created.values())
        self.register_outputs({"names": [policy.metadata.name for policy in created.values()]})
