"""Every Kubernetes object of the kubernetes target as plain manifests, without Pulumi. Pure.

`stack_manifests` is the complete, ordered list for a stack: what the components register (tests/
test_offline_render.py holds them equal, object by object) and what `python -m components.render` writes.
Secret values are placeholders here. To add an object: render it in a pure module, add a `*_manifests`
group function below (or extend one) and append it in `stack_manifests`; register it in its component.
"""

from __future__ import annotations

from typing import Any

from components.render import bucket_copy, cache, delivery, leaderworkerset, pod, scheduling
from components.render.exposure import render_exposure
from components.render.keda import render_scaled_object
from components.render.network_policy import render_network_policies
from components.render.observability import monitoring_objects
from components.render.security import (
    API_KEY_KEY,
    HF_TOKEN_KEY,
    pod_security_level,
    render_namespace,
    render_secret,
    render_service_account,
)
from components.render.smoke import render_smoke_test
from config.delivery import delivery_mode
from config.stack import StackConfig
from plan import Plan
from plan.names import Names, labels, namespace_labels, namespace_name, selector_labels
from preflight.delivery import delivery_budget
from preflight.report import Sizing

SECRET_PLACEHOLDER = "<pulumi secret>"


def server_plan(cfg: StackConfig, report: Sizing, instance: str, with_token: bool = False) -> pod.ServerPlan:
    names, weights = Names(instance), report.weights_on_disk_gib
    budget = delivery_budget(cfg, weights)
    per_replica_token = with_token and delivery_mode(cfg) == "per_replica_volume"
    return pod.ServerPlan(
        name=names.server,
        namespace=namespace_name(cfg.namespace, instance),
        labels=labels(instance, "server"),
        selector=selector_labels(instance, "server"),
        claim=cache.claim_name(cfg, weights, instance),
        service_account=names.server,
        api_key_secret=names.api_key_secret if cfg.security.require_api_key else None,
        resolved=report.resolved,
        budget=budget.probe,
        delivery=budget,
        weights_on_disk_gib=weights,
        hf_token_secret=names.hf_token_secret if per_replica_token else None,
    )


def cache_manifests(cfg: StackConfig, report: Sizing, instance: str, with_token: bool) -> list[dict[str, Any]]:
    return cache_objects(cfg, report.weights_on_disk_gib, instance, with_token)


def cache_objects(cfg: StackConfig, weights: float, instance: str, with_token: bool) -> list[dict[str, Any]]:
    """In registration order: the HF token Secret, then per delivery mode the download ServiceAccount and Job
    (shared volume) or the bucket-copy Job (object storage), then the shared claim, which waits for its Job:
    the Job is the claim's first consumer (components/model_cache.py)."""
    names, meta = Names(instance), labels(instance, "model-cache")
    ns, mode = namespace_name(cfg.namespace, instance), delivery_mode(cfg)
    claim = cache.claim_name(cfg, weights, instance)
    objects: list[dict[str, Any]] = []
    token_secret = names.hf_token_secret if with_token else None
    fetches = cache.needs_download(cfg) or bucket_copy.copies_to_bucket(cfg)
    if fetches and token_secret:
        objects.append(render_secret(token_secret, ns, meta, HF_TOKEN_KEY, SECRET_PLACEHOLDER))
    if fetches and mode != "per_replica_volume":  # per-replica pods download into their own claims
        objects.append(download_service_account(cfg, instance))
        objects.append(scheduling.with_job_pod_settings(cfg, _fill_job(cfg, weights, instance, claim, token_secret)))
    if cfg.cache.existing_claim is None and mode == "shared_volume":
        objects.append(cache.render_pvc(cfg, weights, claim, ns, meta))
    return objects


def _fill_job(cfg: StackConfig, weights: float, instance: str, claim: str, token_secret: str | None) -> dict[str, Any]:
    """The Job that fills the volume from the Hub, or copies the Hub snapshot to the bucket."""
    names, meta, ns = Names(instance), labels(instance, "model-cache"), namespace_name(cfg.namespace, instance)
    if delivery_mode(cfg) == "object_storage":
        return bucket_copy.render_copy_job(
            cfg,
            weights,
            name=bucket_copy.copy_job_name(cfg, instance),
            namespace=ns,
            service_account=names.download_service_account,
            labels=meta,
            token_secret=token_secret,
        )
    return cache.render_download_job(
        cfg,
        weights,
        name=cache.job_name(cfg, weights, instance),
        namespace=ns,
        claim=claim,
        service_account=names.download_service_account,
        labels=meta,
        token_secret=token_secret,
    )


def download_service_account(cfg: StackConfig, instance: str) -> dict[str, Any]:
    """The download or bucket-copy Job's account; the copy writes to the bucket with workload identity."""
    account = render_service_account(
        Names(instance).download_service_account, namespace_name(cfg.namespace, instance), labels(instance, "model-cache")
    )
    return _with_identity(cfg, account)


def server_service_account(cfg: StackConfig, plan: pod.ServerPlan) -> dict[str, Any]:
    """With object storage, workload identity annotations (IRSA, GKE Workload Identity) go here."""
    return _with_identity(cfg, render_service_account(plan.service_account, plan.namespace, plan.labels))


def _with_identity(cfg: StackConfig, account: dict[str, Any]) -> dict[str, Any]:
    annotations = delivery.service_account_annotations(cfg)
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


def namespace_security_level(cfg: StackConfig) -> str:
    return pod_security_level(cfg.engine.nnodes > 1 and cfg.multinode.adds_ipc_lock)


def namespace_manifest(cfg: StackConfig, instance: str) -> dict[str, Any]:
    """The Namespace, labelled for the instance that owns it and its Pod Security level."""
    return render_namespace(namespace_name(cfg.namespace, instance), namespace_labels(instance), namespace_security_level(cfg))


def render_manifests(cfg: StackConfig, report: Sizing, instance: str, with_token: bool = False) -> list[dict[str, Any]]:
    """Namespace (when created), cache objects, then server objects."""
    objects = [namespace_manifest(cfg, instance)] if cfg.namespace.creates else []
    return objects + cache_manifests(cfg, report, instance, with_token) + server_manifests(cfg, report, instance, with_token)


def network_manifests(plan: Plan) -> list[dict[str, Any]]:
    return render_network_policies(plan.identity, plan.traffic)


def traffic_manifests(plan: Plan) -> list[dict[str, Any]]:
    """The route or Ingress (when exposed), then the smoke test's ConfigMap and Job (when on)."""
    return render_exposure(plan.identity, plan.traffic) + render_smoke_test(plan.identity, plan.traffic)


def observability_manifests(plan: Plan) -> list[dict[str, Any]]:
    """KEDA's ScaledObject (when on), then the monitoring objects; the queue alert fires where KEDA acts."""
    scaling, monitoring = plan.scaling, plan.monitoring
    objects = [render_scaled_object(scaling)] if scaling.enabled else []
    return objects + (monitoring_objects(monitoring, scaling.workload) if monitoring.enabled else [])


def stack_manifests(plan: Plan) -> list[dict[str, Any]]:
    """Every object of a kubernetes stack, in the order the program registers them."""
    with_token = plan.delivery.hf_token_secret is not None
    return (
        render_manifests(plan.config, plan.sizing, plan.identity.instance, with_token)
        + network_manifests(plan)
        + traffic_manifests(plan)
        + observability_manifests(plan)
    )
