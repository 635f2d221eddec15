"""Object names and well-known labels (kubernetes.io/docs/concepts/overview/working-with-objects/common-labels)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from config.kubernetes import NamespaceConfig

HF_HOME = "/home/vllm/.cache/huggingface"  # the cache volume's mount point; HF_HOME points here
HOME = "/home/vllm"  # writable emptyDir: ~/.cache/vllm, ~/.triton, ~/.config
PORT_NAME = "http"  # the container and Service port name ServiceMonitors refer to
MARKER_DIR = ".vllm-serving"  # completion markers, inside the cache volume


@dataclass(frozen=True)
class Names:
    """Every object name of one stack instance. No Service is ever called `vllm` (it would inject
    VLLM_PORT=tcp://... into pods and crash vLLM; docs/sources.md §A.4)."""

    instance: str

    @property
    def server(self) -> str:  # Deployment, Service, ServiceAccount, PodDisruptionBudget
        return f"{self.instance}-server"

    @property
    def group(self) -> str:
        """The LeaderWorkerSet of engine.nnodes > 1, its leader StatefulSet and the headless Service LWS creates; it
        differs from the server Service's name (`<instance>-server`)."""
        return f"{self.instance}-group"

    @property
    def rollout_gate(self) -> str:  # the rollout gate's ConfigMap, ServiceAccount, Role, RoleBinding; its Job's prefix
        return f"{self.instance}-rolled-out"

    @property
    def image_prepull(self) -> str:  # the DaemonSet that keeps the vLLM image on the GPU nodes
        return f"{self.instance}-image-prepull"

    def cache_claim(self, volume_key: str) -> str:
        """A new name per volume spec (size, class, access mode), so a changed volume is created beside the old."""
        return f"{self.instance}-model-cache-{volume_key}"

    @property
    def router(self) -> str:  # the router's Deployment, Service, ServiceAccount, Role, RoleBinding, PDB
        return f"{self.instance}-router"

    @property
    def thanos_reader(self) -> str:  # KEDA's token for OpenShift's Thanos: ServiceAccount, Role, RoleBinding, auth
        return f"{self.instance}-thanos-reader"

    @property
    def hf_token_secret(self) -> str:
        return f"{self.instance}-hf-token"

    @property
    def api_key_secret(self) -> str:
        return f"{self.instance}-api-key"

    @property
    def download_service_account(self) -> str:
        return f"{self.instance}-model-download"

    def download_job(self, cache_key: str) -> str:
        """A new name per model, revision and volume, so a model or volume change runs a new Job."""
        return f"{self.instance}-model-download-{cache_key}"


# The label every server (and router) pod of a shared endpoint carries, whichever stack it belongs to
# (routing.endpoint, docs/routing.md): what the endpoint's router discovers and its NetworkPolicies name.
ENDPOINT_LABEL = "vllm-serving/endpoint"


def service_host(name: str, namespace: str) -> str:
    """A Service's in-cluster DNS name: <service>.<namespace>.svc."""
    return f"{name}.{namespace}.svc"


def endpoint_labels(endpoint: str | None) -> dict[str, str]:
    return {ENDPOINT_LABEL: endpoint} if endpoint else {}


def endpoint_selector(endpoint: str, component: str) -> dict[str, str]:
    """The pods of one component of every stack on the endpoint (instance left out)."""
    return {"app.kubernetes.io/name": "vllm", "app.kubernetes.io/component": component, ENDPOINT_LABEL: endpoint}


def labels(instance: str, component: str) -> dict[str, str]:
    """The full label set; selectors use the same three keys."""
    return {
        "app.kubernetes.io/name": "vllm",
        "app.kubernetes.io/instance": instance,
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/managed-by": "pulumi",
    }


def selector_labels(instance: str, component: str) -> dict[str, str]:
    """The immutable subset used in Deployment selectors (managed-by may change)."""
    full = labels(instance, component)
    del full["app.kubernetes.io/managed-by"]
    return full


def cache_key(*parts: str | None) -> str:
    """Eight hex digits naming a combination (models + revisions, a volume spec) for object and marker names."""
    text = "|".join(part or "" for part in parts)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def instance_name(stack: str) -> str:
    """The app.kubernetes.io/instance of this stack: `vllm-<stack>`, as a DNS label of at most 38 characters,
    so two stacks can share a namespace without colliding."""
    cleaned = re.sub(r"[^a-z0-9-]+", "-", stack.lower()).strip("-")
    return f"vllm-{cleaned}"[:38].rstrip("-") if cleaned else "vllm"


def namespace_name(namespace: NamespaceConfig, instance: str) -> str:
    """The stack's namespace: namespace.name, or the instance name (`vllm-<stack>`), which no other stack has."""
    return namespace.name or instance


def namespace_labels(instance: str) -> dict[str, str]:
    """Labels of a Namespace this stack creates: app.kubernetes.io/instance says which stack owns it."""
    return labels(instance, "server") | {"app.kubernetes.io/component": "namespace"}
