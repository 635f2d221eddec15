"""Every Kubernetes object of the kubernetes target as plain manifests, without Pulumi. Pure.

The components register these same renderings; this list is what the schema test validates and what a
reviewer can dump to YAML. Secret values are placeholders here.
"""

from __future__ import annotations

from typing import Any

from components.render import bucket_copy, cache, delivery, leaderworkerset, pod, scheduling
from components.render.names import Names, labels, namespace_labels, namespace_name, selector_labels
from components.render.security import (
    API_KEY_KEY,
    HF_TOKEN_KEY,
    pod_security_level,
    render_namespace,
    render_secret,
    render_service_account,
)
from config.delivery import delivery_mode
from config.stack import StackConfig
from preflight.delivery import delivery_budget
from preflight.report import PreflightReport

SECRET_PLACEHOLDER = "<pulumi secret>"


def server_plan(cfg: StackConfig, report: PreflightReport, instance: str, with_token: bool = False) -> pod.ServerPlan:
    names, weights = Names(instance), report.weights_on_disk_gib
    budget = delivery_budget(cfg, weights)
    per_replica_token = with_token and delivery_mode(cfg) == "per_replica_volume"
    return pod.ServerPlan(
        name=names.server, namespace=namespace_name(cfg.namespace, instance), labels=labels(instance, "server"),
        selector=selector_labels(instance, "server"), claim=cache.claim_name(cfg, weights, instance),
        service_account=names.server, api_key_secret=names.api_key_secret if cfg.security.require_api_key else None,
        resolved=report.resolved, budget=budget.probe, delivery=budget, weights_on_disk_gib=weights,
        hf_token_secret=names.hf_token_secret if per_replica_token else None)


def server_service_account(cfg: StackConfig, plan: pod.ServerPlan) -> dict[str, Any]:
    """With object storage, workload identity annotations (IRSA, GKE Workload Identity) go here."""
    account = render_service_account(plan.service_account, plan.namespace, plan.labels)
    annotations = delivery.service_account_annotations(cfg)
    if annotations:
        account["metadata"]["annotations"] = annotations
    return account


def cache_manifests(cfg: StackConfig, report: PreflightReport, instance: str,
                    with_token: bool) -> list[dict[str, Any]]:
    names, meta = Names(instance), labels(instance, "model-cache")
    ns, weights = namespace_name(cfg.namespace, instance), report.weights_on_disk_gib
    claim, mode = cache.claim_name(cfg, weights, instance), delivery_mode(cfg)
    objects: list[dict[str, Any]] = []
    if cfg.cache.existing_claim is None and mode == "shared_volume":
        objects.append(cache.render_pvc(cfg, weights, claim, ns, meta))
    if not (cache.needs_download(cfg) or bucket_copy.copies_to_bucket(cfg)):
        return objects
    token_secret = names.hf_token_secret if with_token else None
    if token_secret:
        objects.append(render_secret(token_secret, ns, meta, HF_TOKEN_KEY, SECRET_PLACEHOLDER))
    if mode == "per_replica_volume":  # each replica's init container downloads into its own claim
        return objects
    objects.append(download_service_account(cfg, instance))
    if mode == "object_storage":
        return [*objects, scheduling.with_job_pod_settings(cfg, bucket_copy.render_copy_job(
            cfg, weights, name=bucket_copy.copy_job_name(cfg, instance), namespace=ns,
            service_account=names.download_service_account, labels=meta, token_secret=token_secret))]
    objects.append(scheduling.with_job_pod_settings(cfg, cache.render_download_job(
        cfg, weights, name=cache.job_name(cfg, weights, instance), namespace=ns, claim=claim,
        service_account=names.download_service_account, labels=meta, token_secret=token_secret)))
    return objects


def download_service_account(cfg: StackConfig, instance: str) -> dict[str, Any]:
    """The download or bucket-copy Job's account; the copy writes to the bucket with workload identity."""
    account = render_service_account(Names(instance).download_service_account, namespace_name(cfg.namespace, instance),
                                     labels(instance, "model-cache"))
    annotations = delivery.service_account_annotations(cfg)
    if annotations:
        account["metadata"]["annotations"] = annotations
    return account


def server_manifests(cfg: StackConfig, report: PreflightReport, instance: str,
                     with_token: bool = False) -> list[dict[str, Any]]:
    plan = server_plan(cfg, report, instance, with_token)
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


def render_manifests(cfg: StackConfig, report: PreflightReport, instance: str,
                     with_token: bool = False) -> list[dict[str, Any]]:
    """Namespace (when created), cache objects, then server objects."""
    objects: list[dict[str, Any]] = []
    if cfg.namespace.creates:
        objects.append(render_namespace(namespace_name(cfg.namespace, instance), namespace_labels(instance),
                                        namespace_security_level(cfg)))
    return objects + cache_manifests(cfg, report, instance, with_token) + server_manifests(
        cfg, report, instance, with_token)
