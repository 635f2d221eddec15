"""Cluster facts from the live cluster, read-only (list calls only), through the official `kubernetes` client.

The client is imported only here, and only when a live read is asked for (it takes ~1 s to import). It uses
the same kubeconfig and context as the Pulumi Kubernetes provider: `kubernetes:kubeconfig` (a path or the
file's contents) and `kubernetes:context` when set, else $KUBECONFIG / ~/.kube/config and its current context.
Responses are parsed as raw JSON by the same parser as `kubectl get -o json` snapshots (cluster/facts.py).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from typing import Any

from cluster.facts import WEBHOOKS, ClusterFacts, NodePool, facts_from_items

PAGE = 500
MAX_ITEMS = 200_000
TIMEOUT_SECONDS = 15
# CRD -> (group, version, plural, kind) of the optional custom resources read when the CRD is installed.
OPTIONAL_CUSTOM = {
    "prometheuses.monitoring.coreos.com": ("monitoring.coreos.com", "v1", "prometheuses", "Prometheus"),
    "nodepools.karpenter.sh": ("karpenter.sh", "v1", "nodepools", "NodePool"),
}


class LiveReadError(RuntimeError):
    """The cluster could not be read (no kubeconfig, unreachable, forbidden); the message says which."""


def api_client(kubeconfig: str | None, context: str | None) -> Any:
    """An ApiClient for the provider's kubeconfig (path or contents) and context."""
    try:
        from kubernetes import config
        from kubernetes.config.config_exception import ConfigException
    except ImportError as error:  # pinned in requirements.txt; a broken venv lands here
        raise LiveReadError(
            f"the kubernetes Python client is not installed ({error}); pip install -r requirements.txt"
        ) from None
    try:
        if kubeconfig and ("\n" in kubeconfig or kubeconfig.lstrip().startswith(("apiVersion", "{"))):
            import yaml

            return config.new_client_from_config_dict(yaml.safe_load(kubeconfig), context=context)
        return config.new_client_from_config(config_file=kubeconfig, context=context)
    except (ConfigException, OSError, ValueError, TypeError) as error:
        raise LiveReadError(f"no usable kubeconfig ({str(error)[:200]})") from None


def read_live(
    kubeconfig: str | None,
    context: str | None,
    keda_namespace: str,
    declared_pools: tuple[NodePool, ...] = (),
    client: Any = None,
    namespace: str | None = None,
    store_namespace: str | None = None,
    daemonset_namespace: str | None = None,
    webhooks: bool = False,
) -> ClusterFacts:
    """Facts from the cluster. `client` is an ApiClient (tests pass one with a fake transport). `namespace`:
    the stack's, whose StatefulSets are read (a claim-template change would replace the server's);
    `store_namespace`: an in-cluster bucket store's, whose Services are read (the port its Service forwards to);
    `daemonset_namespace`: where a node agent the stack needs runs (kube-system: EKS Pod Identity's); `webhooks`:
    read the MutatingWebhookConfigurations (Azure Workload Identity's webhook)."""
    client = client or api_client(kubeconfig, context)
    from kubernetes import client as k8s

    core, crds = k8s.CoreV1Api(client), k8s.ApiextensionsV1Api(client)
    items = _all(core.list_node, "Node", "v1") + _all(core.list_namespace, "Namespace", "v1")
    items += _all(k8s.StorageV1Api(client).list_storage_class, "StorageClass", "storage.k8s.io/v1")
    crd_items = _all(crds.list_custom_resource_definition, "CustomResourceDefinition", "apiextensions.k8s.io/v1")
    installed = {str(i.get("metadata", {}).get("name", "")) for i in crd_items}
    items += crd_items + _optional(client, installed, keda_namespace)
    if store_namespace is not None:
        items += _maybe(lambda **kw: core.list_namespaced_service(store_namespace, **kw), "Service", "v1")
    facts = facts_from_items(items, f"live cluster (context {context or 'current'})", declared_pools)
    facts = _with_webhooks(facts, client) if webhooks else facts
    facts = facts if daemonset_namespace is None else _with_namespaced(facts, client, daemonset_namespace, "DaemonSet")
    return facts if namespace is None else _with_namespaced(facts, client, namespace, "StatefulSet")


# Kinds read in one namespace, with the ClusterFacts field each fills and its value when the list is empty: read
# and none differs from not read (None, e.g. forbidden).
NAMESPACED_READS: dict[str, tuple[str, str, Any]] = {
    "DaemonSet": ("list_namespaced_daemon_set", "daemonsets", frozenset()),
    "StatefulSet": ("list_namespaced_stateful_set", "statefulsets", {}),
}


def _with_namespaced(facts: ClusterFacts, client: Any, namespace: str, kind: str) -> ClusterFacts:
    """One namespace's objects of an apps/v1 `kind` (NAMESPACED_READS), or the facts as they were if forbidden."""
    from kubernetes import client as k8s

    method, field, empty = NAMESPACED_READS[kind]
    call = getattr(k8s.AppsV1Api(client), method)
    try:
        items = _all(lambda **kw: call(namespace, **kw), kind, "apps/v1")
    except LiveReadError:
        return facts
    return dataclasses.replace(facts, **{field: getattr(facts_from_items(items, facts.source), field) or empty})


def _with_webhooks(facts: ClusterFacts, client: Any) -> ClusterFacts:
    """The cluster's MutatingWebhookConfigurations: read and none differs from not read (None, e.g. forbidden)."""
    from kubernetes import client as k8s

    admission = k8s.AdmissionregistrationV1Api(client)
    try:
        found = _all(admission.list_mutating_webhook_configuration, WEBHOOKS, "admissionregistration.k8s.io/v1")
    except LiveReadError:
        return facts
    return dataclasses.replace(facts, mutating_webhooks=facts_from_items(found, facts.source).mutating_webhooks or frozenset())


def _optional(client: Any, installed: set[str], keda_namespace: str) -> list[Mapping[str, Any]]:
    """Custom resources and KEDA's Deployment; one that is forbidden or absent is simply not read."""
    from kubernetes import client as k8s

    items: list[Mapping[str, Any]] = []
    custom = k8s.CustomObjectsApi(client)
    for crd, (group, version, plural, kind) in OPTIONAL_CUSTOM.items():
        if crd in installed:
            items += _maybe(
                lambda g=group, v=version, p=plural, **kw: custom.list_cluster_custom_object(g, v, p, **kw),
                kind,
                f"{group}/{version}",
            )
    if "scaledobjects.keda.sh" in installed:
        apps = k8s.AppsV1Api(client)
        items += _maybe(lambda **kw: apps.list_namespaced_deployment(keda_namespace, **kw), "Deployment", "apps/v1")
    return items


def _maybe(call: Callable[..., Any], kind: str, api_version: str) -> list[Mapping[str, Any]]:
    try:
        return _all(call, kind, api_version)
    except LiveReadError:
        return []


def _all(call: Callable[..., Any], kind: str, api_version: str) -> list[Mapping[str, Any]]:
    """Every item of a paged list call, each with the kind and apiVersion kubectl would print."""
    items: list[Mapping[str, Any]] = []
    token: str | None = None
    while True:
        page = _page(call, token)
        items += [{**i, "kind": kind, "apiVersion": api_version} for i in page.get("items") or [] if isinstance(i, Mapping)]
        token = (page.get("metadata") or {}).get("continue") or None
        if not token or len(items) > MAX_ITEMS:
            return items


def _page(call: Callable[..., Any], token: str | None) -> Mapping[str, Any]:
    from kubernetes.client.exceptions import ApiException

    try:
        response = call(limit=PAGE, _continue=token, _preload_content=False, _request_timeout=TIMEOUT_SECONDS)
    except ApiException as error:
        raise LiveReadError(f"list failed: HTTP {error.status} {error.reason}") from None
    except Exception as error:  # urllib3 connection errors, TLS, DNS: the cluster is not reachable
        raise LiveReadError(f"cluster not reachable ({type(error).__name__}: {str(error)[:200]})") from None
    if not 200 <= int(response.status) <= 299:
        raise LiveReadError(f"list failed: HTTP {response.status} {response.reason}")
    try:
        body = json.loads(response.data)
    except (ValueError, TypeError):
        raise LiveReadError("the API server answered with something that is not JSON") from None
    if not isinstance(body, dict):
        raise LiveReadError("the API server answered with something that is not a list")
    return body
