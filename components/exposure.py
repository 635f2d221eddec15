"""Exposure: the HTTPRoute (and InferencePool) on an existing Gateway, or the Ingress, from render/exposure.py."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi

from components.kube import register
from components.render.exposure import curl_command, render_exposure
from plan.identity import Identity
from plan.traffic import TrafficPlan

TOKEN = "vllm-serving:index:Exposure"


@dataclass(frozen=True)
class ExposureArgs:
    identity: Identity
    traffic: TrafficPlan
    namespace: pulumi.Input[str]  # ServingStack.namespace
    depends_on: Sequence[pulumi.Resource] = field(default_factory=tuple)  # the Service the route points at


class Exposure(pulumi.ComponentResource):
    """Registers the rendered route objects (none without exposure.gateway / exposure.ingress); the HTTPRoute and
    InferencePool are CRDs the cluster's Gateway API / Inference Extension installs.

    Attributes:
        client_url: the base URL clients use. curl: a ready-to-paste chat completion with the key from the Secret.
    """

    def __init__(self, name: str, args: ExposureArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TOKEN, name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=list(args.depends_on))
        # A ReferenceGrant lives in the backend's namespace (the add-on's), not the stack's.
        self.resources: list[pulumi.Resource] = [
            register(
                f"{name}-{manifest['kind'].lower()}",
                manifest,
                child,
                namespace=None if manifest["kind"] == "ReferenceGrant" else args.namespace,
            )
            for manifest in render_exposure(args.identity, args.traffic)
        ]
        self.client_url = pulumi.Output.from_input(args.traffic.client_url)
        self.curl = pulumi.Output.from_input(curl_command(args.identity, args.traffic))
        self.register_outputs({"clientUrl": self.client_url, "curl": self.curl})
