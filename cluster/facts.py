"""Cluster facts: one pure, frozen data type holding what the cluster checks need.

Built from Kubernetes API objects exactly as `kubectl get -o json` (or a list call) returns them, so the
snapshot reader and the live reader share one parser (`facts_from_items`). A kind that was not read is
None (unknown), which the checks tell apart from "read, and there are none".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from catalog.gpus import VENDORS

OWNER_LABEL = "app.kubernetes.io/instance"  # who created a namespace (plan/names.py labels)
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
WEBHOOKS = "MutatingWebhookConfiguration"
KEDA_OPERATOR = "keda-operator"  # the Deployment (and container) name in KEDA's Helm chart and manifests
# The KEDA HTTP add-on's interceptor image (ghcr.io/kedacore/http-add-on-interceptor:<release>, kedacore/charts
# http-add-on values.yaml images.interceptor) and the timeout it reads from its environment (catalog/keda_http.py).
INTERCEPTOR_IMAGE = "http-add-on-interceptor"
REQUEST_TIMEOUT_ENV = "KEDA_HTTP_REQUEST_TIMEOUT"


@dataclass(frozen=True)
class Interceptor:
    """The KEDA HTTP add-on's interceptor Deployment, as found."""

    namespace: str
    version: str | None  # its image tag
    request_timeout: str | None  # KEDA_HTTP_REQUEST_TIMEOUT as set (a Go duration); None: unset, no deadline


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclass(frozen=True)
class Node:
    name: str
    labels: Mapping[str, str]
    allocatable: Mapping[str, str]
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False


@dataclass(frozen=True)
class NodePool:
    """A pool that can create nodes: a Karpenter NodePool, or a declared autoscaled pool (cluster.node_pools)."""

    name: str
    requirements: tuple[Mapping[str, Any], ...]  # node selector requirements (key, operator, values)
    labels: Mapping[str, str]  # labels its nodes get for sure
    taints: tuple[Taint, ...] = ()
    gpu_limit: int | None = None  # spec.limits nvidia.com/gpu; None = unlimited
    cpu_limit: int | None = None  # spec.limits cpu (whole vCPUs); None = unlimited
    gpus_per_node: int | None = None  # known for declared pools
    max_nodes: int | None = None  # a declared pool's autoscaler maximum; None = unbounded
    karpenter: bool = False  # the instance type is chosen at creation (cluster/karpenter.py)
    # A Karpenter NodePool's spec.template.spec.terminationGracePeriod and expireAfter, as written (Go durations, or
    # Never for expireAfter); None when unset (cluster/disruption.py).
    termination_grace_period: str | None = None
    expire_after: str | None = None


@dataclass(frozen=True)
class StorageClass:
    name: str
    provisioner: str
    binding_mode: str  # Immediate (the API default) or WaitForFirstConsumer
    is_default: bool
    parameters: Mapping[str, str] = field(default_factory=dict)  # the provisioner's, e.g. {type: gp3, throughput: "500"}


@dataclass(frozen=True)
class Prometheus:
    name: str
    namespace: str
    service_monitor_selector: Mapping[str, Any] | None  # None (null): selects no objects
    service_monitor_namespace_selector: Mapping[str, Any] | None  # None: its own namespace only
    rule_selector: Mapping[str, Any] | None
    rule_namespace_selector: Mapping[str, Any] | None
    pod_monitor_selector: Mapping[str, Any] | None = None
    pod_monitor_namespace_selector: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class ClaimTemplate:
    """One volumeClaimTemplate of a StatefulSet already in the cluster: what its replacement would change."""

    name: str
    storage: str  # spec.resources.requests.storage as written, e.g. "160Gi"
    storage_class: str | None  # spec.storageClassName; None: the default class


@dataclass(frozen=True)
class ServicePort:
    """One port of a Service: what clients call (`port`) and where the pods receive it (`target_port`: a number,
    a container port's name, or the port itself when unset)."""

    port: int
    target_port: int | str


@dataclass(frozen=True)
class ClusterFacts:
    source: str  # "snapshot a.json, b.json" or "live (context x)"
    nodes: tuple[Node, ...] = ()
    node_pools: tuple[NodePool, ...] | None = None  # None: Karpenter NodePools not read
    storage_classes: tuple[StorageClass, ...] = ()
    crds: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # name -> served versions
    namespaces: Mapping[str, Mapping[str, str]] | None = None  # name -> labels; None: not read
    prometheuses: tuple[Prometheus, ...] | None = None  # None: not read
    keda_version: str | None = None  # from the keda-operator image tag, e.g. "2.16.1"
    # "namespace/name" -> the claim templates of each StatefulSet read; None: StatefulSets not read
    statefulsets: Mapping[str, tuple[ClaimTemplate, ...]] | None = None
    interceptor: Interceptor | None = None  # the KEDA HTTP add-on's, when a Deployment runs its image
    services: Mapping[str, tuple[ServicePort, ...]] | None = None  # "namespace/name" -> ports; None: not read
    daemonsets: frozenset[str] | None = None  # "namespace/name" of the DaemonSets read; None: not read
    mutating_webhooks: frozenset[str] | None = None  # names of the MutatingWebhookConfigurations; None: not read
    kinds_read: frozenset[str] = frozenset()

    def has_crd(self, name: str) -> bool:
        return name in self.crds


def facts_from_items(
    items: Iterable[Mapping[str, Any]], source: str, declared_pools: tuple[NodePool, ...] = ()
) -> ClusterFacts:
    """Facts from API objects (any order, any mix of kinds); unknown kinds are ignored."""
    by_kind: dict[str, list[Mapping[str, Any]]] = {}
    for item in items:
        by_kind.setdefault(str(item.get("kind", "")), []).append(item)
    karpenter = [_node_pool(i) for i in by_kind.get("NodePool", []) if _api_group(i) == "karpenter.sh"]
    pools = (*karpenter, *declared_pools) if (karpenter or declared_pools or "NodePool" in by_kind) else None
    keda = [i for i in by_kind.get("Deployment", []) if _meta(i).get("name") == KEDA_OPERATOR]
    return ClusterFacts(
        source=source,
        nodes=tuple(_node(i) for i in by_kind.get("Node", [])),
        node_pools=pools,
        storage_classes=tuple(_storage_class(i) for i in by_kind.get("StorageClass", [])),
        crds={_meta(i).get("name", ""): _served(i) for i in by_kind.get("CustomResourceDefinition", [])},
        namespaces={_meta(i).get("name", ""): _labels(i) for i in by_kind["Namespace"]} if "Namespace" in by_kind else None,
        prometheuses=tuple(_prometheus(i) for i in by_kind["Prometheus"]) if "Prometheus" in by_kind else None,
        keda_version=next((v for v in map(_keda_version, keda) if v), None),
        statefulsets={_namespaced(i): _claim_templates(i) for i in by_kind["StatefulSet"]}
        if "StatefulSet" in by_kind
        else None,
        interceptor=next(filter(None, map(_interceptor, by_kind.get("Deployment", []))), None),
        services={_namespaced(i): _service_ports(i) for i in by_kind["Service"]} if "Service" in by_kind else None,
        daemonsets=frozenset(map(_namespaced, by_kind["DaemonSet"])) if "DaemonSet" in by_kind else None,
        mutating_webhooks=frozenset(str(_meta(i).get("name", "")) for i in by_kind[WEBHOOKS]) if WEBHOOKS in by_kind else None,
        kinds_read=frozenset(by_kind),
    )


def _namespaced(item: Mapping[str, Any]) -> str:
    return f"{_meta(item).get('namespace', '')}/{_meta(item).get('name', '')}"


def _claim_templates(item: Mapping[str, Any]) -> tuple[ClaimTemplate, ...]:
    templates = _spec(item).get("volumeClaimTemplates")
    found = []
    for template in templates if isinstance(templates, list) else ():
        if not isinstance(template, Mapping):
            continue
        spec = _spec(template)
        resources = spec.get("resources") if isinstance(spec.get("resources"), Mapping) else {}
        requests = resources.get("requests") if isinstance(resources, Mapping) else None
        storage = requests.get("storage") if isinstance(requests, Mapping) else None
        storage_class = spec.get("storageClassName")
        found.append(
            ClaimTemplate(
                name=str(_meta(template).get("name", "")),
                storage=str(storage or ""),
                storage_class=str(storage_class) if storage_class else None,
            )
        )
    return tuple(found)


def _service_ports(item: Mapping[str, Any]) -> tuple[ServicePort, ...]:
    ports = _spec(item).get("ports")
    found = []
    for entry in ports if isinstance(ports, list) else ():
        number = entry.get("port") if isinstance(entry, Mapping) else None
        if isinstance(number, int) and not isinstance(number, bool):
            target = entry.get("targetPort", number)
            found.append(ServicePort(number, target if isinstance(target, int | str) else number))
    return tuple(found)


def _meta(item: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = item.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _spec(item: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = item.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _labels(item: Mapping[str, Any]) -> dict[str, str]:
    labels = _meta(item).get("labels")
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {}


def _api_group(item: Mapping[str, Any]) -> str:
    return str(item.get("apiVersion", "")).partition("/")[0]


def _taints(raw: Any) -> tuple[Taint, ...]:
    if not isinstance(raw, list):
        return ()
    return tuple(
        Taint(str(t.get("key", "")), str(t.get("value", "")), str(t.get("effect", ""))) for t in raw if isinstance(t, Mapping)
    )


def _node(item: Mapping[str, Any]) -> Node:
    status = item.get("status") if isinstance(item.get("status"), Mapping) else {}
    allocatable = status.get("allocatable") if isinstance(status, Mapping) else None
    return Node(
        name=str(_meta(item).get("name", "")),
        labels=_labels(item),
        allocatable={str(k): str(v) for k, v in allocatable.items()} if isinstance(allocatable, Mapping) else {},
        taints=_taints(_spec(item).get("taints")),
        unschedulable=bool(_spec(item).get("unschedulable", False)),
    )


def _node_pool(item: Mapping[str, Any]) -> NodePool:
    """A Karpenter v1 NodePool: spec.template.spec.requirements/taints/terminationGracePeriod/expireAfter,
    spec.template.metadata.labels, spec.limits."""
    template = _spec(item).get("template") if isinstance(_spec(item).get("template"), Mapping) else {}
    template_spec = template.get("spec") if isinstance(template, Mapping) else None
    template_spec = template_spec if isinstance(template_spec, Mapping) else {}
    template_meta = template.get("metadata") if isinstance(template, Mapping) else None
    labels = template_meta.get("labels") if isinstance(template_meta, Mapping) else None
    requirements = template_spec.get("requirements")
    limits = _spec(item).get("limits")
    limits = limits if isinstance(limits, Mapping) else {}
    return NodePool(
        name=str(_meta(item).get("name", "")),
        requirements=tuple(r for r in requirements if isinstance(r, Mapping)) if isinstance(requirements, list) else (),
        labels={str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {},
        taints=_taints(template_spec.get("taints")),
        gpu_limit=next((quantity_int(limits[v.resource]) for v in VENDORS if v.resource in limits), None),
        cpu_limit=quantity_int(limits["cpu"]) if "cpu" in limits else None,
        karpenter=True,
        termination_grace_period=_text(template_spec.get("terminationGracePeriod")),
        expire_after=_text(template_spec.get("expireAfter")),
    )


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _storage_class(item: Mapping[str, Any]) -> StorageClass:
    annotations, parameters = _meta(item).get("annotations"), item.get("parameters")
    default = isinstance(annotations, Mapping) and str(annotations.get(DEFAULT_CLASS_ANNOTATION, "")).lower() == "true"
    return StorageClass(
        name=str(_meta(item).get("name", "")),
        provisioner=str(item.get("provisioner", "")),
        binding_mode=str(item.get("volumeBindingMode") or "Immediate"),
        is_default=default,
        parameters={str(k): str(v) for k, v in parameters.items()} if isinstance(parameters, Mapping) else {},
    )


def _served(item: Mapping[str, Any]) -> tuple[str, ...]:
    versions = _spec(item).get("versions")
    if not isinstance(versions, list):
        return ()
    return tuple(str(v.get("name")) for v in versions if isinstance(v, Mapping) and v.get("served", True))


def _selector(spec: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = spec.get(key)
    return value if isinstance(value, Mapping) else None


def _prometheus(item: Mapping[str, Any]) -> Prometheus:
    spec = _spec(item)
    return Prometheus(
        name=str(_meta(item).get("name", "")),
        namespace=str(_meta(item).get("namespace", "")),
        service_monitor_selector=_selector(spec, "serviceMonitorSelector"),
        service_monitor_namespace_selector=_selector(spec, "serviceMonitorNamespaceSelector"),
        rule_selector=_selector(spec, "ruleSelector"),
        rule_namespace_selector=_selector(spec, "ruleNamespaceSelector"),
        pod_monitor_selector=_selector(spec, "podMonitorSelector"),
        pod_monitor_namespace_selector=_selector(spec, "podMonitorNamespaceSelector"),
    )


_VERSION = re.compile(r"^v?([0-9]{1,9}\.[0-9]{1,9}(?:\.[0-9]{1,9})?)", re.ASCII)


def _containers(item: Mapping[str, Any]) -> list[Any]:
    template = _spec(item).get("template")
    pod_spec = template.get("spec") if isinstance(template, Mapping) else None
    containers = pod_spec.get("containers") if isinstance(pod_spec, Mapping) else None
    return containers if isinstance(containers, list) else []


def _keda_version(item: Mapping[str, Any]) -> str | None:
    """The keda-operator container's image tag (ghcr.io/kedacore/keda:2.16.1 -> 2.16.1)."""
    for container in _containers(item):
        image = str(container.get("image", "")) if isinstance(container, Mapping) else ""
        tag = image.split("@")[0].rpartition(":")[2] if ":" in image.split("@")[0].rpartition("/")[2] else ""
        match = _VERSION.match(tag)
        if match:
            return match.group(1)
    return None


_WHOLE_QUANTITY = re.compile(r"([0-9]{1,18})(?:\.0*)?", re.ASCII)


def quantity_int(value: Any) -> int:
    """A whole-number Kubernetes quantity ("8", 8, "8.0"); anything else ("500m", "1e400", "²") counts as 0."""
    found = _WHOLE_QUANTITY.fullmatch(str(value)[:40])
    return int(found.group(1)) if found else 0


def parse_version(text: str) -> tuple[int, int, int]:
    """ "2.16" -> (2, 16, 0); a part that is not 1 to 9 ASCII digits counts as 0."""
    parts = [int(p) if p.isascii() and p.isdigit() and len(p) <= 9 else 0 for p in text.split(".")[:3]]
    major, minor, patch = [*parts, 0, 0, 0][:3]
    return major, minor, patch


# --- snapshot files: what kubectl never writes, and what the checks never read ---------------------------

GPU_FIELDS = ("allocatable", "capacity")
BULKY_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"


def item_problem(item: Mapping[str, Any]) -> str | None:
    """Why an object from a file cannot be what the API server returned (labels as a list, a GPU count that
    is not whole), or None. The live reader needs no such check: the API server validates both."""
    return (
        _name_problem(_meta(item))
        or _labels_problem(_meta(item).get("labels"))
        or (_gpu_problem(item) if item.get("kind") == "Node" else None)
    )


def _name_problem(meta: Mapping[str, Any]) -> str | None:
    for key in ("name", "namespace"):
        if key in meta and not isinstance(meta[key], str):
            return f"metadata.{key} is a {type(meta[key]).__name__}, not a string"
    return None


def _labels_problem(labels: Any) -> str | None:
    if labels is not None and not isinstance(labels, Mapping):
        return f"metadata.labels is a {type(labels).__name__}, not a mapping of label: value"
    for key, value in (labels or {}).items():
        if not isinstance(value, str):
            return f"the label {str(key)[:63]!r} is {str(value)[:40]!r}, a {type(value).__name__}, not a string"
    return None


def _gpu_problem(node: Mapping[str, Any]) -> str | None:
    status = node.get("status")
    for name in GPU_FIELDS if isinstance(status, Mapping) else ():
        resources = status.get(name)  # type: ignore[union-attr]
        for resource in (v.resource for v in VENDORS):
            gpus = str(resources.get(resource, "0")) if isinstance(resources, Mapping) else "0"
            if not _WHOLE_QUANTITY.fullmatch(gpus[:40]):
                shown = gpus if len(gpus) <= 24 else f"{gpus[:24]}… ({len(gpus):,} characters)"
                return f"status.{name}[{resource!r}] is {shown!r}, not a whole number of GPUs"
    return None


# A Node's fields the checks read; the rest (images, conditions, addresses, ...) is most of a real node's
# 27 KB. Add a field here when a check starts reading it.
NODE_FIELDS = {"metadata": ("name", "labels", "annotations"), "spec": ("taints", "unschedulable"), "status": GPU_FIELDS}


def slim_item(item: dict[str, Any]) -> dict[str, Any]:
    """The object without what no check reads and makes snapshots large: managed fields, the last-applied
    annotation, a Node's fields outside NODE_FIELDS, a Deployment's all but its containers, a DaemonSet's or a webhook
    configuration's all but its metadata, a CRD's schemas."""
    if item.get("kind") == "Node":
        kept = {
            part: {k: v for k, v in item[part].items() if k in keys}
            for part, keys in NODE_FIELDS.items()
            if isinstance(item.get(part), dict)
        }
        item = {"apiVersion": item.get("apiVersion"), "kind": "Node", **kept}
    if item.get("kind") in ("DaemonSet", WEBHOOKS):  # only the name is read
        item = {"apiVersion": item.get("apiVersion"), "kind": item.get("kind"), "metadata": item.get("metadata")}
    if item.get("kind") == "Deployment":
        item = {
            "apiVersion": item.get("apiVersion"),
            "kind": "Deployment",
            "metadata": item.get("metadata"),
            "spec": {"template": {"spec": {"containers": _containers(item)}}},
        }
    meta = item.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
        if isinstance(meta.get("annotations"), dict):
            meta["annotations"].pop(BULKY_ANNOTATION, None)
    versions = _spec(item).get("versions")
    if item.get("kind") == "CustomResourceDefinition" and isinstance(versions, list):
        for version in versions:
            if isinstance(version, dict):
                version.pop("schema", None)
    return item


def _interceptor(item: Mapping[str, Any]) -> Interceptor | None:
    """The add-on's interceptor, from a Deployment whose container runs its image."""
    for container in _containers(item):
        if not isinstance(container, Mapping):
            continue
        image = str(container.get("image", "")).split("@")[0]
        name, _, tag = image.rpartition("/")[2].partition(":")
        if name != INTERCEPTOR_IMAGE:
            continue
        match = _VERSION.match(tag)
        env = container.get("env")
        found = [e for e in env if isinstance(e, Mapping)] if isinstance(env, list) else []
        timeout = next((str(e.get("value", "")) for e in found if e.get("name") == REQUEST_TIMEOUT_ENV), None)
        return Interceptor(str(_meta(item).get("namespace", "")), match.group(1) if match else None, timeout)
    return None
