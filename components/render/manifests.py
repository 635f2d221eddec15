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
from components.render.keda import capacity_from_report, derive_thresholds, hpa_name
from components.render.network_policy import render_network_policies
from components.render.observability import alert_limits, monitoring_objects, scaled_object
from components.render.probes import budget_annotations, new_replica_seconds, render_probes, rollout_timeout_seconds
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
from config.delivery import delivery_mode, most_replicas, workload_kind
from config.stack import StackConfig
from plan import Plan
from plan.names import Names, labels, namespace_labels, namespace_name, selector_labels
from plan.placement import resolve_placement
from preflight.delivery import delivery_budget
from preflight.report import Sizing

SECRET_PLACEHOLDER = "<pulumi secret>"


def server_delivery(plan: Plan, claim: str) -> pod.PodDelivery:
    """What the delivery mode adds to the server pod, from the delivery renderers. TRANSITIONAL (server
    branch): they still take the StackConfig; the delivery branch turns these calls into plan reads."""
    cfg, weights = plan.config, plan.delivery.weights_on_disk_gib
    per_replica = plan.delivery.mode == "per_replica_volume"
    token = plan.delivery.hf_token_secret if per_replica else None  # a per-replica download mounts the token
    init: list[dict[str, Any]] = []
    if per_replica and cache.needs_download(cfg):
        init = [delivery.per_replica_download(cfg, weights, token)]
    elif cache.needs_download(cfg):
        init = [cache.render_wait_container(cfg)]
    return pod.PodDelivery(
        model_volumes=delivery.model_volumes(cfg, claim, token),
        env=delivery.server_env(cfg),
        env_from=delivery.server_env_from(cfg),
        probes=render_probes(cfg, plan.delivery.budget.probe),
        init_containers=init,
        annotations=budget_annotations(plan.delivery.budget),
        progress_deadline_seconds=rollout_timeout_seconds(cfg, plan.delivery.budget),
    )


def server_claim(plan: Plan) -> str:
    """The model cache claim the server mounts (the registered one comes from components/model_cache.py)."""
    return cache.claim_name(plan.config, plan.delivery.weights_on_disk_gib, plan.identity.instance)


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
        placement = resolve_placement(cfg, most_replicas(cfg))  # TRANSITIONAL (server branch): plan.placement
        objects.append(scheduling.with_job_pod_settings(placement, _fill_job(cfg, weights, instance, claim, token_secret)))
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


def server_service_account(plan: Plan) -> dict[str, Any]:
    """With object storage, workload identity annotations (IRSA, GKE Workload Identity) go here."""
    server = plan.server
    return _with_identity(plan.config, render_service_account(server.service_account, server.namespace, server.labels))


def _with_identity(cfg: StackConfig, account: dict[str, Any]) -> dict[str, Any]:
    annotations = delivery.service_account_annotations(cfg)
    if annotations:
        account["metadata"]["annotations"] = annotations
    return account


def server_manifests(plan: Plan) -> list[dict[str, Any]]:
    return server_objects(plan, server_claim(plan))


def server_objects(plan: Plan, claim: str) -> list[dict[str, Any]]:
    """ServiceAccount, API-key Secret (when required), the workload, Service, PodDisruptionBudget."""
    server = plan.server
    objects = [server_service_account(plan)]
    if server.api_key_secret:
        objects.append(render_secret(server.api_key_secret, server.namespace, server.labels, API_KEY_KEY, SECRET_PLACEHOLDER))
    return [*objects, render_workload(plan, server_delivery(plan, claim)), render_server_service(plan), pod.render_pdb(server)]


def render_workload(plan: Plan, pod_delivery: pod.PodDelivery) -> dict[str, Any]:
    """The Deployment, the StatefulSet when each replica owns its claim, or with engine.nnodes > 1 the
    LeaderWorkerSet built from the Deployment."""
    server, placement = plan.server, plan.placement
    if plan.multinode is not None:
        deployment = pod.render_deployment(server, placement, pod_delivery)
        return leaderworkerset.render_leaderworkerset(plan.multinode, deployment, plan.identity.instance)
    if plan.delivery.workload_kind == "StatefulSet":
        pod_spec = pod.render_pod_spec(server, placement, pod_delivery)
        return delivery.render_statefulset(plan.config, server, pod_spec, pod_delivery.annotations)
    return pod.render_deployment(server, placement, pod_delivery)


def render_server_service(plan: Plan) -> dict[str, Any]:
    """The clients' Service; with several nodes per replica it selects the leaders, the only HTTP servers."""
    service = pod.render_service(plan.server)
    if plan.multinode is not None:
        service["spec"]["selector"] = leaderworkerset.leader_selector(plan.server.selector)
    return service


def namespace_security_level(cfg: StackConfig) -> str:
    return pod_security_level(cfg.engine.nnodes > 1 and cfg.multinode.adds_ipc_lock)


def namespace_manifest(cfg: StackConfig, instance: str) -> dict[str, Any]:
    """The Namespace, labelled for the instance that owns it and its Pod Security level."""
    return render_namespace(namespace_name(cfg.namespace, instance), namespace_labels(instance), namespace_security_level(cfg))


def render_manifests(plan: Plan) -> list[dict[str, Any]]:
    """Namespace (when created), cache objects, then server objects."""
    cfg, instance = plan.config, plan.identity.instance
    with_token = plan.delivery.hf_token_secret is not None
    objects = [namespace_manifest(cfg, instance)] if plan.identity.creates_namespace else []
    return objects + cache_manifests(cfg, plan.sizing, instance, with_token) + server_manifests(plan)


def network_manifests(cfg: StackConfig, instance: str) -> list[dict[str, Any]]:
    return render_network_policies(
        namespace_name(cfg.namespace, instance),
        instance,
        cfg.server.port,
        cfg.network_policy,
        cfg.exposure,
        cfg.smoke_test.enabled,
        delivery_mode(cfg) != "shared_volume",
    )


def traffic_manifests(cfg: StackConfig, instance: str) -> list[dict[str, Any]]:
    """The route or Ingress (when exposed), then the smoke test's ConfigMap and Job (when on)."""
    return render_exposure(cfg, instance) + (render_smoke_test(cfg, instance) if cfg.smoke_test.enabled else [])


def observability_manifests(cfg: StackConfig, report: Sizing, instance: str) -> list[dict[str, Any]]:
    """KEDA's ScaledObject (when on), then the monitoring objects; the queue alert fires where KEDA acts."""
    capacity, selector = capacity_from_report(report), selector_labels(instance, "server")
    hpa = hpa_name(instance) if cfg.autoscaling.enabled else None
    workload = Workload(
        namespace_name(cfg.namespace, instance), cfg.served_model_name, workload_name(cfg, instance), hpa, workload_kind(cfg)
    )
    thresholds = derive_thresholds(cfg.autoscaling, capacity)
    objects = (
        [scaled_object(instance, selector, cfg.autoscaling, thresholds, cfg.vllm.version, workload, server_address(cfg) or "")]
        if cfg.autoscaling.enabled
        else []
    )
    if cfg.monitoring.enabled:
        rollout = new_replica_seconds(cfg, delivery_budget(cfg, report.weights_on_disk_gib))
        limits = alert_limits(cfg.monitoring, cfg.autoscaling, capacity, thresholds.queue if hpa else None, rollout)
        objects += monitoring_objects(f"{instance}-monitoring", cfg.monitoring, limits, cfg.vllm.version, selector, workload)
    return objects


def workload_name(cfg: StackConfig, instance: str) -> str:
    """The server workload's name: the Deployment's or StatefulSet's, or the LeaderWorkerSet's."""
    return leaderworkerset.group_name(instance) if cfg.engine.nnodes > 1 else Names(instance).server


def stack_manifests(plan: Plan) -> list[dict[str, Any]]:
    """Every object of a kubernetes stack, in the order the program registers them."""
    cfg, report, instance = plan.config, plan.sizing, plan.identity.instance
    return (
        render_manifests(plan)
        + network_manifests(cfg, instance)
        + traffic_manifests(cfg, instance)
        + observability_manifests(cfg, report, instance)
    )
