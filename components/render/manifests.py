"""Every Kubernetes object of the kubernetes target as plain manifests, without Pulumi. Pure.

The components register these same renderings; this list is what the schema test validates and what a
reviewer can dump to YAML. Secret values are placeholders here.
"""

from __future__ import annotations

from typing import Any

from components.render import cache, leaderworkerset, pod, scheduling
from components.render.names import Names, labels, namespace_labels, namespace_name, selector_labels
from components.render.probes import server_startup_budget
from components.render.security import (
    API_KEY_KEY,
    HF_TOKEN_KEY,
    pod_security_level,
    render_namespace,
    render_secret,
    render_service_account,
)
from config.stack import StackConfig
from preflight.report import PreflightReport

SECRET_PLACEHOLDER = "<pulumi secret>"


def server_plan(cfg: StackConfig, report: PreflightReport, instance: str) -> pod.ServerPlan:
    names = Names(instance)
    return pod.ServerPlan(
        name=names.server, namespace=namespace_name(cfg.namespace, instance), labels=labels(instance, "server"),
        selector=selector_labels(instance, "server"), claim=cache.claim_name(cfg, report.weights_on_disk_gib, instance),
        service_account=names.server, api_key_secret=names.api_key_secret if cfg.security.require_api_key else None,
        resolved=report.resolved, budget=server_startup_budget(cfg, report.weights_on_disk_gib))


def cache_manifests(cfg: StackConfig, report: PreflightReport, instance: str,
                    with_token: bool) -> list[dict[str, Any]]:
    names, meta = Names(instance), labels(instance, "model-cache")
    ns, weights = namespace_name(cfg.namespace, instance), report.weights_on_disk_gib
    claim = cache.claim_name(cfg, weights, instance)
    objects: list[dict[str, Any]] = []
    if cfg.cache.existing_claim is None:
        objects.append(cache.render_pvc(cfg, weights, claim, ns, meta))
    if not cache.needs_download(cfg):
        return objects
    token_secret = names.hf_token_secret if with_token else None
    if token_secret:
        objects.append(render_secret(token_secret, ns, meta, HF_TOKEN_KEY, SECRET_PLACEHOLDER))
    objects.append(render_service_account(names.download_service_account, ns, meta))
    objects.append(scheduling.with_job_pod_settings(cfg, cache.render_download_job(
        cfg, weights, name=cache.job_name(cfg, weights, instance), namespace=ns, claim=claim,
        service_account=names.download_service_account, labels=meta, token_secret=token_secret)))
    return objects


def server_manifests(cfg: StackConfig, report: PreflightReport, instance: str) -> list[dict[str, Any]]:
    plan = server_plan(cfg, report, instance)
    objects = [render_service_account(plan.service_account, plan.namespace, plan.labels)]
    if plan.api_key_secret:
        objects.append(render_secret(plan.api_key_secret, plan.namespace, plan.labels, API_KEY_KEY, SECRET_PLACEHOLDER))
    return [*objects, render_workload(cfg, plan, instance), render_server_service(cfg, plan), pod.render_pdb(plan)]


def render_workload(cfg: StackConfig, plan: pod.ServerPlan, instance: str) -> dict[str, Any]:
    """The Deployment, or with engine.nnodes > 1 the LeaderWorkerSet built from it."""
    deployment = pod.render_deployment(cfg, plan)
    if cfg.engine.nnodes == 1:
        return deployment
    return leaderworkerset.render_leaderworkerset(cfg, deployment, instance)


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
    return objects + cache_manifests(cfg, report, instance, with_token) + server_manifests(cfg, report, instance)
