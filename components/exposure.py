"""Exposure: the HTTPRoute (and InferencePool) on an existing Gateway, or the Ingress, from render/exposure.py."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.kube import with_namespace
from components.render.exposure import client_url, curl_command, render_exposure
from config.stack import StackConfig

TOKEN = "vllm-serving:index:Exposure"


@dataclass(frozen=True)
class ExposureArgs:
    config: StackConfig
    instance: str
    namespace: pulumi.Input[str]  # ServingStack.namespace
    depends_on: Sequence[pulumi.Resource] = field(default_factory=tuple)  # the Service the route points at


class Exposure(pulumi.ComponentResource):
    """Registers the rendered route objects (none without exposure.gateway / exposure.ingress).

    Attributes:
        client_url: the base URL clients use. curl: a ready-to-paste chat completion with the key from the Secret.
    """

    def __init__(self, name: str, args: ExposureArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TOKEN, name, None, opts)
        self.resources: list[pulumi.Resource] = []
        for manifest in render_exposure(args.config, args.instance):
            child = pulumi.ResourceOptions(parent=self, depends_on=list(args.depends_on))
            metadata: Any = with_namespace(manifest, args.namespace)  # a plain dict; the SDK types a TypedDict
            resource_name = f"{name}-{manifest['kind'].lower()}"
            if manifest["kind"] == "Ingress":
                self.resources.append(
                    k8s.networking.v1.Ingress(resource_name, metadata=metadata, spec=manifest["spec"], opts=child)
                )
            else:  # HTTPRoute, InferencePool: CRDs installed by the cluster's Gateway API / Inference Extension
                self.resources.append(
                    k8s.apiextensions.CustomResource(
                        resource_name,
                        api_version=manifest["apiVersion"],
                        kind=manifest["kind"],
                        metadata=metadata,
                        spec=manifest["spec"],
                        opts=child,
                    )
                )
        self.client_url = pulumi.Output.from_input(client_url(args.config, args.instance))
        self.curl = pulumi.Output.from_input(curl_command(args.config, args.instance))
        self.register_outputs({"clientUrl": self.client_url, "curl": self.curl})
