"""Who the stack is: its instance name, namespace and the names of its objects. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from config.kubernetes import NamespaceConfig
from plan.names import Names, labels, namespace_name, selector_labels


@dataclass(frozen=True)
class Identity:
    """The instance (`vllm-<stack>`, the app.kubernetes.io/instance label), its namespace and object names."""

    instance: str
    namespace: str
    creates_namespace: bool
    retain_namespace_on_delete: bool
    names: Names

    def labels(self, component: str) -> dict[str, str]:
        return labels(self.instance, component)

    def selector(self, component: str) -> dict[str, str]:
        return selector_labels(self.instance, component)


def resolve_identity(namespace: NamespaceConfig, instance: str) -> Identity:
    return Identity(
        instance=instance,
        namespace=namespace_name(namespace, instance),
        creates_namespace=namespace.creates,
        retain_namespace_on_delete=namespace.retain_on_delete,
        names=Names(instance),
    )
