"""ServingStack: the Kubernetes target. Namespace, model cache and vLLM server, composed in one component."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pulumi

from components.kube import register
from components.model_cache import ModelCache, ModelCacheArgs
from components.render import manifests
from components.vllm_server import TYPE_TOKEN as VLLM_SERVER_TYPE
from components.vllm_server import VllmServer, VllmServerArgs
from config.secrets import StackSecrets
from plan import Plan
from plan.names import PORT_NAME

# Object names are `<name>-model-download-<8 hex>`; Kubernetes names (and Job labels) stop at 63 characters.
_INSTANCE = re.compile(r"^[a-z]([-a-z0-9]{0,36}[a-z0-9])?$")

TYPE_TOKEN = "vllm-serving:index:ServingStack"


@dataclass(frozen=True)
class ServingStackArgs:
    plan: Plan
    secrets: StackSecrets = field(default_factory=StackSecrets)


class ServingStack(pulumi.ComponentResource):
    """Everything one model needs on Kubernetes, for a config that passed validation.check_stack."""

    namespace: pulumi.Output[str]
    deployment_name: pulumi.Output[str]
    service_name: pulumi.Output[str]
    service_port_name: str
    selector_labels: dict[str, str]
    url: pulumi.Output[str]
    served_model_name: str

    def __init__(self, name: str, args: ServingStackArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        if not _INSTANCE.match(name):
            raise ValueError(f"ServingStack name {name!r} must be a DNS label of at most 38 characters")
        super().__init__(TYPE_TOKEN, name, None, opts)
        plan = args.plan
        self.namespace = self._namespace(name, plan)
        account = self._server_account(name, plan)
        self.cache = ModelCache(
            f"{name}-cache",
            ModelCacheArgs(plan=plan, namespace=self.namespace, hf_token=args.secrets.hf_token, server_account=account),
            pulumi.ResourceOptions(parent=self),
        )
        self.server = VllmServer(
            f"{name}-server",
            VllmServerArgs(
                plan=plan,
                namespace=self.namespace,
                api_key=args.secrets.api_key,
                api_key_previous=args.secrets.api_key_previous,
                wait_for=(account, *self.cache.ready),
            ),
            pulumi.ResourceOptions(parent=self),
        )
        self.deployment_name = self.server.deployment_name
        self.service_name = self.server.service_name
        self.service_port_name = PORT_NAME
        self.selector_labels = dict(plan.server.selector)
        self.url = self.server.url
        self.served_model_name = plan.engine.served_model_name
        self.register_outputs(self.outputs())

    def _namespace(self, name: str, plan: Plan) -> pulumi.Output[str]:
        identity = plan.identity
        if not identity.creates_namespace:
            return pulumi.Output.from_input(identity.namespace)
        namespace = register(
            f"{name}-namespace",
            manifests.namespace_manifest(identity, plan.pod_security),
            pulumi.ResourceOptions(parent=self, retain_on_delete=identity.retain_namespace_on_delete or None),
        )
        return namespace.metadata.apply(lambda m: m["name"])

    def _server_account(self, name: str, plan: Plan) -> pulumi.Resource:
        """The server's ServiceAccount, before the cache: the bucket-copy Job runs as it (one identity to grant).
        Stacks deployed before it moved here registered it under VllmServer with the same name; the alias names
        that parent, so an upgrade moves it in the state instead of deleting it and creating it again (a create
        under the new URN would meet the old object's name)."""
        moved_from = pulumi.create_urn(f"{name}-server", VLLM_SERVER_TYPE, parent=self)
        return register(
            f"{name}-server-sa",
            manifests.server_service_account(plan),
            pulumi.ResourceOptions(parent=self, aliases=[pulumi.Alias(parent=moved_from)]),
            namespace=self.namespace,
        )

    def outputs(self) -> dict[str, Any]:
        """Stack outputs, camelCase like every Pulumi output name."""
        return {
            "namespace": self.namespace,
            "deploymentName": self.deployment_name,
            "serviceName": self.service_name,
            "servicePortName": self.service_port_name,
            "podSelectorLabels": self.selector_labels,
            "url": self.url,
            "servedModelName": self.served_model_name,
        }
