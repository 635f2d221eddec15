"""NetworkPolicies: who may reach the vLLM server, and where the serving and download pods may connect."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.kube import register
from components.render.network_policy import MODEL_CACHE, NO_EXPOSURE, SERVER, render_network_policies
from config.exposure import ExposureConfig
from config.network import NetworkPolicyConfig

TYPE_TOKEN = "vllm-serving:index:NetworkPolicies"


@dataclass(frozen=True)
class NetworkPoliciesArgs:
    namespace: pulumi.Input[str]  # the stack's namespace (ServingStack.namespace)
    instance: str  # app.kubernetes.io/instance of the server and download pods
    port: int  # the vLLM container port: the OpenAI API and /metrics
    policy: NetworkPolicyConfig
    exposure: ExposureConfig = NO_EXPOSURE  # the gateway / ingress proxies become the callers
    smoke_test: bool = False  # admit the smoke-test Job's pods, and restrict their egress
    server_fetches_weights: bool = False  # per-replica downloads or object storage: the server needs hub egress


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
        # Rendered without a namespace: it is set from args, where it may be an Output of the Namespace.
        for manifest in render_network_policies(
            "", args.instance, args.port, args.policy, args.exposure, args.smoke_test, args.server_fetches_weights
        ):
            component = manifest["metadata"]["labels"]["app.kubernetes.io/component"]
            created[component] = register(
                f"{name}-{component}", manifest, pulumi.ResourceOptions(parent=self), namespace=args.namespace
            )
        self.server = created.get(SERVER)
        self.model_cache = created.get(MODEL_CACHE)
        self.all: list[k8s.networking.v1.NetworkPolicy] = list(created.values())
        self.register_outputs({"names": [policy.metadata.name for policy in created.values()]})
