"""Every Kubernetes object of the kubernetes target as plain manifests, without Pulumi. Pure.

`stack_manifests` is the complete, ordered list for a stack: what the components register (tests/
test_offline_render.py holds them equal, object by object) and what `python -m components.render` writes.
Secret values are placeholders here. To add an object: render it in a pure module, add a `*_manifests`
group function below (or extend one) and append it in `stack_manifests`; register it in its component.
"""

from __future__ import annotations

from typing import Any

from components.render import bucket_copy, cache, leaderworkerset, pod, scheduling
from components.render import delivery as delivery_render
from components.render.exposure import render_exposure
from components.render.keda import capacity_from_report, derive_thresholds, hpa_name
from components.render.network_policy import render_network_policies
from components.render.observability import alert_limits, monitoring_objects, scaled_object
from components.render.prometheus import server_address
from components.render.promql import Workload
from components.render.security import (
    API_KEY_KEY,
    HF_TOKEN_KEY,
    pod_security_level,
    render_namespace,
    render_secret,
    render_service_account,
)
from components.render.smoke import render_smoke_test
from config.multinode import MultinodeConfig
from config.stack import StackConfig
from plan.delivery import DeliveryPlan, resolve_delivery
from plan.identity import Identity, resolve_identity
from plan.names import Names, labels, namespace_labels, namespace_name, selector_labels
from preflight.report import Sizing

SECRET_PLACEHOLDER = "<pulumi secret>"


def server_plan(cfg: StackConfig, report: Sizing, instance: str, with_token: bool = False) -> pod.ServerPlan:
    names, weights = Names(instance), report.weights_on_disk_gib
    delivery = resolve_delivery(cfg, weights, names, names.hf_token_secret if with_token else None)  # transitional
    per_replica_token = with_token and delivery.mode == "per_replica_volume"
    return pod.ServerPlan(
        name=names.server,
        namespace=namespace_name(cfg.namespace, instance),
        labels=labels(instance, "server"),
        selector=selector_labels(instance, "server"),
        claim=delivery.claim,
        service_account=names.server,
        api_key_secret=names.api_key_secret if cfg.security.require_api_key else None,
        resolved=report.resolved,
        budget=delivery.budget.probe,
        delivery=delivery,
        weights_on_disk_gib=weights,
        hf_token_secret=names.hf_token_secret if per_replica_token else None,
    )


def cache_objects(cfg: StackConfig, delivery: DeliveryPlan, identity: Identity) -> list[dict[str, Any]]:
    """In registration order: the HF token Secret, then per delivery mode the download ServiceAccount and Job
    (shared volume) or the bucket-copy Job (object storage), then the shared claim, which waits for its Job:
    the Job is the claim's first consumer (components/model_cache.py). `cfg`: the config groups and the GPU
    placement the Job reuses (transitional: until placement is a plan part)."""
    meta, ns, token_secret = identity.labels("model-cache"), identity.namespace, delivery.hf_token_secret
    objects: list[dict[str, Any]] = []
    fetches = delivery.needs_download or delivery.copies_to_bucket
    if fetches and token_secret:
        objects.append(render_secret(token_secret, ns, meta, HF_TOKEN_KEY, SECRET_PLACEHOLDER))
    if fetches and delivery.mode != "per_replica_volume":  # per-replica pods download into their own claims
        objects.append(download_service_account(delivery, identity))
        objects.append(scheduling.with_job_pod_settings(cfg, _fill_job(cfg, delivery, identity)))
    if delivery.creates_claim:
        objects.append(cache.render_pvc(delivery, ns, meta))
    return objects


def _fill_job(cfg: StackConfig, delivery: DeliveryPlan, identity: Identity) -> dict[str, Any]:
    """The Job that fills the volume from the Hub, or copies the Hub snapshot to the bucket."""
    ns, account, meta = identity.namespace, identity.names.download_service_account, identity.labels("model-cache")
    if delivery.mode == "object_storage":
        return bucket_copy.render_copy_job(
            delivery, cfg.vllm, cfg.cache, cfg.security, namespace=ns, service_account=account, labels=meta
        )
    placement = _download_placement(cfg) if cache.download_on_gpu_nodes(delivery) else {}
    return cache.render_download_job(
        delivery, cfg.vllm, cfg.cache, cfg.security, namespace=ns, service_account=account, labels=meta, placement=placement
    )


def _download_placement(cfg: StackConfig) -> dict[str, Any]:
    """The server's tolerations, affinity and node selector, for a download Job on its GPU nodes."""
    placement: dict[str, Any] = {"tolerations": scheduling.render_tolerations(cfg)}
    affinity = scheduling.render_affinity(cfg)
    if affinity:
        placement["affinity"] = affinity
    if cfg.gpu.node_selector:
        placement["nodeSelector"] = scheduling.render_node_selector(cfg)
    return placement


def download_service_account(delivery: DeliveryPlan, identity: Identity) -> dict[str, Any]:
    """The download or bucket-copy Job's account; the copy writes to the bucket with workload identity."""
    account = render_service_account(
        identity.names.download_service_account, identity.namespace, identity.labels("model-cache")
    )
    return _with_identity(delivery, account)


def server_service_account(cfg: StackConfig, plan: pod.ServerPlan) -> dict[str, Any]:
    """With object storage, workload identity annotations (IRSA, GKE Workload Identity) go here."""
    return _with_identity(plan.delivery, render_service_account(plan.service_account, plan.namespace, plan.labels))


def _with_identity(delivery: DeliveryPlan, account: dict[str, Any]) -> dict[str, Any]:
    annotations = delivery_render.service_account_annotations(delivery)
    if annotations:
        account["metadata"]["annotations"] = annotations
    return account


def server_manifests(cfg: StackConfig, report: Sizing, instance: str, with_token: bool = False) -> list[dict[str, Any]]:
    return server_objects(cfg, server_plan(cfg, report, instance, with_token), instance)


def server_objects(cfg: StackConfig, plan: pod.ServerPlan, instance: str) -> list[dict[str, Any]]:
    """ServiceAccount, API-key Secret (when required), the workload, Service, PodDisruptionBudget."""
    objects = [server_service_account(cfg, plan)]
    if plan.api_key_secret:
        objects.append(render_secret(plan.api_key_secret, plan.namespace, plan.labels, API_KEY_KEY, SECRET_PLACEHOLDER))
    return [*objects, render_workload(cfg, plan, instance), render_server_service(cfg, plan), pod.render_pdb(plan)]


def render_workload(cfg: StackConfig, plan: pod.ServerPlan, instance: str) -> dict[str, Any]:
    """The Deployment or StatefulSet, or with engine.nnodes > 1 the LeaderWorkerSet built from the Deployment."""
    if cfg.engine.nnodes == 1:
        return pod.render_workload(cfg, plan)
    return leaderworkerset.render_leaderworkerset(cfg, pod.render_deployment(cfg, plan), instance)


def render_server_service(cfg: StackConfig, plan: pod.ServerPlan) -> dict[str, Any]:
    """The clients' Service; with several nodes per replica it selects the leaders, the only HTTP servers."""
    service = pod.render_service(cfg, plan)
    if cfg.engine.nnodes > 1:
        service["spec"]["selector"] = leaderworkerset.leader_selector(plan.selector)
    return service


def namespace_manifest(identity: Identity, nnodes: int, multinode: MultinodeConfig) -> dict[str, Any]:
    """The Namespace, labelled for the instance that owns it and its Pod Security level: privileged only for a
    multi-node group that adds IPC_LOCK."""
    level = pod_security_level(nnodes > 1 and multinode.adds_ipc_lock)
    return render_namespace(identity.namespace, namespace_labels(identity.instance), level)


def render_manifests(cfg: StackConfig, report: Sizing, instance: str, with_token: bool = False) -> list[dict[str, Any]]:
    """Namespace (when created), cache objects, then server objects."""
    identity = resolve_identity(cfg.namespace, instance)  # transitional: until the callers pass the plan
    delivery = resolve_delivery(
        cfg, report.weights_on_disk_gib, identity.names, identity.names.hf_token_secret if with_token else None
    )
    objects = [namespace_manifest(identity, cfg.engine.nnodes, cfg.multinode)] if cfg.namespace.creates else []
    return objects + cache_objects(cfg, delivery, identity) + server_manifests(cfg, report, instance, with_token)


def network_manifests(cfg: StackConfig, instance: str) -> list[dict[str, Any]]:
    return render_network_policies(
        namespace_name(cfg.namespace, instance),
        instance,
        cfg.server.port,
        cfg.network_policy,
        cfg.exposure,
        cfg.smoke_test.enabled,
        resolve_delivery(cfg, 0.0, Names(instance), None).mode != "shared_volume",  # transitional
    )


def traffic_manifests(cfg: StackConfig, instance: str) -> list[dict[str, Any]]:
    """The route or Ingress (when exposed), then the smoke test's ConfigMap and Job (when on)."""
    return render_exposure(cfg, instance) + (render_smoke_test(cfg, instance) if cfg.smoke_test.enabled else [])


def observability_manifests(cfg: StackConfig, report: Sizing, instance: str) -> list[dict[str, Any]]:
    """KEDA's ScaledObject (when on), then the monitoring objects; the queue alert fires where KEDA acts."""
    capacity, selector = capacity_from_report(report), selector_labels(instance, "server")
    delivery = resolve_delivery(cfg, report.weights_on_disk_gib, Names(instance), None)  # transitional
    hpa = hpa_name(instance) if cfg.autoscaling.enabled else None
    workload = Workload(
        namespace_name(cfg.namespace, instance),
        cfg.served_model_name,
        workload_name(cfg, instance),
        hpa,
        delivery.workload_kind,
    )
    thresholds = derive_thresholds(cfg.autoscaling, capacity)
    objects = (
        [scaled_object(instance, selector, cfg.autoscaling, thresholds, cfg.vllm.version, workload, server_address(cfg) or "")]
        if cfg.autoscaling.enabled
        else []
    )
    if cfg.monitoring.enabled:
        rollout = delivery.new_replica_seconds
        limits = alert_limits(cfg.monitoring, cfg.autoscaling, capacity, thresholds.queue if hpa else None, rollout)
        objects += monitoring_objects(f"{instance}-monitoring", cfg.monitoring, limits, cfg.vllm.version, selector, workload)
    return objects


def workload_name(cfg: StackConfig, instance: str) -> str:
    """The server workload's name: the Deployment's or StatefulSet's, or the LeaderWorkerSet's."""
    return leaderworkerset.group_name(instance) if cfg.engine.nnodes > 1 else Names(instance).server


def stack_manifests(cfg: StackConfig, report: Sizing, instance: str, with_token: bool = False) -> list[dict[str, Any]]:
    """Every object of a kubernetes stack, in the order the program registers them."""
    return (
        render_manifests(cfg, report, instance, with_token)
        + network_manifests(cfg, instance)
        + traffic_manifests(cfg, instance)
        + observability_manifests(cfg, report, instance)
    )
