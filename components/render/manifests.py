"""Every Kubernetes object of the kubernetes target as plain manifests, without Pulumi. Pure.

`stack_manifests` is the complete, ordered list for a stack: what the components register (tests/
test_offline_render.py holds them equal, object by object) and what `python -m components.render` writes.
Secret values are placeholders here. To add an object: render it in a pure module, add a `*_manifests`
group function below (or extend one) and append it in `stack_manifests`; register it in its component.
"""

from __future__ import annotations

from typing import Any

from components.render import cache, pod
from components.render.keda import capacity_from_report, derive_thresholds, hpa_name
from components.render.names import Names, labels, selector_labels
from components.render.network_policy import render_network_policies
from components.render.observability import alert_limits, monitoring_objects, scaled_object
from components.render.probes import server_startup_budget
from components.render.promql import Workload
from components.render.security import API_KEY_KEY, HF_TOKEN_KEY, render_namespace, render_secret, render_service_account
from config.stack import StackConfig
from preflight.report import Sizing

SECRET_PLACEHOLDER = "<pulumi secret>"


def server_plan(cfg: StackConfig, report: Sizing, instance: str) -> pod.ServerPlan:
    names = Names(instance)
    return pod.ServerPlan(
        name=names.server, namespace=cfg.namespace.name, labels=labels(instance, "server"),
        selector=selector_labels(instance, "server"), claim=cache.claim_name(cfg, report.weights_on_disk_gib, instance),
        service_account=names.server, api_key_secret=names.api_key_secret if cfg.security.require_api_key else None,
        resolved=report.resolved, budget=server_startup_budget(cfg, report.weights_on_disk_gib))


def cache_manifests(cfg: StackConfig, report: Sizing, instance: str,
                    with_token: bool) -> list[dict[str, Any]]:
    return cache_objects(cfg, report.weights_on_disk_gib, instance, with_token)


def cache_objects(cfg: StackConfig, weights: float, instance: str, with_token: bool) -> list[dict[str, Any]]:
    """PVC (unless an existing claim), then, when the model is downloaded: HF token Secret, ServiceAccount, Job."""
    names, meta, ns = Names(instance), labels(instance, "model-cache"), cfg.namespace.name
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
    objects.append(cache.render_download_job(
        cfg, weights, name=cache.job_name(cfg, weights, instance), namespace=ns, claim=claim,
        service_account=names.download_service_account, labels=meta, token_secret=token_secret))
    return objects


def server_manifests(cfg: StackConfig, report: Sizing, instance: str) -> list[dict[str, Any]]:
    return server_objects(cfg, server_plan(cfg, report, instance))


def server_objects(cfg: StackConfig, plan: pod.ServerPlan) -> list[dict[str, Any]]:
    """ServiceAccount, API-key Secret (when required), Deployment, Service, PodDisruptionBudget."""
    objects = [render_service_account(plan.service_account, plan.namespace, plan.labels)]
    if plan.api_key_secret:
        objects.append(render_secret(plan.api_key_secret, plan.namespace, plan.labels, API_KEY_KEY, SECRET_PLACEHOLDER))
    return [*objects, pod.render_deployment(cfg, plan), pod.render_service(cfg, plan), pod.render_pdb(plan)]


def namespace_manifest(cfg: StackConfig, instance: str) -> dict[str, Any]:
    """The Namespace, labelled for the instance and Pod Security "restricted"."""
    return render_namespace(cfg.namespace.name, labels(instance, "server") | {"app.kubernetes.io/component": "namespace"})


def render_manifests(cfg: StackConfig, report: Sizing, instance: str,
                     with_token: bool = False) -> list[dict[str, Any]]:
    """Namespace (when created), cache objects, then server objects."""
    objects = [namespace_manifest(cfg, instance)] if cfg.namespace.create else []
    return objects + cache_manifests(cfg, report, instance, with_token) + server_manifests(cfg, report, instance)


def network_manifests(cfg: StackConfig, instance: str) -> list[dict[str, Any]]:
    return render_network_policies(cfg.namespace.name, instance, cfg.server.port, cfg.network_policy)


def observability_manifests(cfg: StackConfig, report: Sizing, instance: str) -> list[dict[str, Any]]:
    """KEDA's ScaledObject (when on), then the monitoring objects; the queue alert fires where KEDA acts."""
    capacity, selector = capacity_from_report(report), selector_labels(instance, "server")
    hpa = hpa_name(instance) if cfg.autoscaling.enabled else None
    workload = Workload(cfg.namespace.name, cfg.served_model_name, Names(instance).server, hpa)
    thresholds = derive_thresholds(cfg.autoscaling, capacity)
    objects = [scaled_object(instance, selector, cfg.autoscaling, thresholds, cfg.vllm.version, workload)] \
        if cfg.autoscaling.enabled else []
    if cfg.monitoring.enabled:
        budget = server_startup_budget(cfg, report.weights_on_disk_gib).total_seconds
        limits = alert_limits(cfg.monitoring, cfg.autoscaling, capacity, thresholds.queue if hpa else None, budget)
        objects += monitoring_objects(f"{instance}-monitoring", cfg.monitoring, limits, cfg.vllm.version, selector,
                                      workload)
    return objects


def stack_manifests(cfg: StackConfig, report: Sizing, instance: str,
                    with_token: bool = False) -> list[dict[str, Any]]:
    """Every object of a kubernetes stack, in the order the program registers them."""
    return (render_manifests(cfg, report, instance, with_token) + network_manifests(cfg, instance)
            + observability_manifests(cfg, report, instance))
