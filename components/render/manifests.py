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
from components.render.keda import render_autoscaler
from components.render.network_policy import render_network_policies
from components.render.observability import monitoring_objects
from components.render.prepull import render_prepull_daemonset
from components.render.probes import budget_annotations, render_probes
from components.render.rollout_gate import render_rollout_gate
from components.render.router import router_objects
from components.render.security import (
    API_KEY_KEY,
    API_KEY_PREVIOUS_KEY,
    HF_TOKEN_KEY,
    render_namespace,
    render_scc_use,
    render_secret,
    render_service_account,
)
from components.render.smoke import render_smoke_test
from plan import Plan
from plan.delivery import DeliveryPlan
from plan.identity import Identity
from plan.names import namespace_labels
from plan.security import PodSecurityLevel

SECRET_PLACEHOLDER = "<pulumi secret>"


def server_delivery(plan: Plan) -> pod.PodDelivery:
    """What the delivery mode adds to the server pod, from the delivery renderers."""
    delivery = plan.delivery
    per_replica = delivery.mode == "per_replica_volume"
    token = delivery.hf_token_secret if per_replica else None  # a per-replica download mounts the token
    init: list[dict[str, Any]] = []
    if per_replica and delivery.needs_download:
        init = [delivery_render.per_replica_download(delivery, delivery.vllm, delivery.cache_config)]
    elif delivery.needs_download:
        init = [cache.render_wait_container(delivery, delivery.vllm)]
    lora = plan.lora if plan.lora is not None and plan.lora.fetched_in_pod else None
    if lora is not None:
        init.append(delivery_render.adapter_fetch(delivery, lora))
        token = delivery.hf_token_secret
    return pod.PodDelivery(
        model_volumes=delivery_render.model_volumes(delivery, token, lora),
        env=delivery_render.server_env(delivery),
        env_from=delivery_render.server_env_from(delivery),
        probes=render_probes(delivery.probes, delivery.budget.probe),
        init_containers=init,
        annotations=budget_annotations(delivery.budget),
        progress_deadline_seconds=delivery.rollout_seconds,
        pod_labels=delivery_render.identity_pod_labels(delivery),
    )


def cache_objects(plan: Plan) -> list[dict[str, Any]]:
    """In registration order: the StorageClass the stack creates, the HF token Secret, then per delivery mode the
    download ServiceAccount and Job (shared volume) or the bucket-copy Job, which runs as the server's account
    (object storage), then the shared claim, which waits for its Job: the Job is the claim's first consumer
    (components/model_cache.py)."""
    delivery, identity = plan.delivery, plan.identity
    meta, ns, token_secret = identity.labels("model-cache"), identity.namespace, delivery.hf_token_secret
    objects: list[dict[str, Any]] = []
    if delivery.storage_class is not None:  # before any claim of its class
        objects.append(cache.render_storage_class(delivery.storage_class, meta))
    if token_secret:  # set by the plan exactly when a pod of the stack mounts it
        objects.append(render_secret(token_secret, ns, meta, {HF_TOKEN_KEY: SECRET_PLACEHOLDER}))
    if delivery.runs_fill_job:  # per-replica pods download into their own claims
        account = fill_job_account(plan)
        if account == identity.names.download_service_account:
            objects.append(download_service_account(identity))
        objects.append(scheduling.with_job_pod_settings(plan.placement, _fill_job(plan, account)))
    if delivery.creates_claim:
        objects.append(cache.render_pvc(delivery, ns, meta))
    return objects


def _fill_job(plan: Plan, account: str) -> dict[str, Any]:
    """The Job that fills the volume from the Hub, or copies the Hub snapshot to the bucket, as `account`."""
    delivery, identity = plan.delivery, plan.identity
    ns, meta = identity.namespace, identity.labels("model-cache")
    if delivery.mode == "object_storage":
        return bucket_copy.render_copy_job(
            delivery,
            delivery.vllm,
            delivery.cache_config,
            delivery.security,
            namespace=ns,
            service_account=account,
            labels=meta,
        )
    placement = scheduling.render_gpu_node_placement(plan.placement) if cache.download_on_gpu_nodes(delivery) else {}
    return cache.render_download_job(
        delivery,
        delivery.vllm,
        delivery.cache_config,
        delivery.security,
        namespace=ns,
        service_account=account,
        labels=meta,
        placement=placement,
    )


def fill_job_account(plan: Plan) -> str:
    """The account the Job filling the cache runs as. The bucket copy runs as the server's, whose workload identity
    reads the bucket: an IRSA trust policy's `sub`, an EKS Pod Identity association, a GKE Workload Identity binding
    and an Azure federated credential each name one ServiceAccount (docs/security.md), so one account is one grant.
    The Hub download to a volume needs no identity and runs as its own account."""
    if plan.delivery.copies_to_bucket:
        return plan.server.service_account
    return plan.identity.names.download_service_account


def download_service_account(identity: Identity) -> dict[str, Any]:
    """The Hub download Job's account: no workload identity, no API token."""
    return render_service_account(identity.names.download_service_account, identity.namespace, identity.labels("model-cache"))


def server_service_account(plan: Plan) -> dict[str, Any]:
    """The server's account, which the bucket-copy Job runs as too (registered before both: components/
    serving_stack.py). With object storage, workload identity annotations (IRSA, GKE Workload Identity) go here."""
    server = plan.server
    return _with_identity(plan.delivery, render_service_account(server.service_account, server.namespace, server.labels))


def _with_identity(delivery: DeliveryPlan, account: dict[str, Any]) -> dict[str, Any]:
    annotations = delivery_render.service_account_annotations(delivery)
    if annotations:
        account["metadata"]["annotations"] = annotations
    return account


def server_objects(plan: Plan) -> list[dict[str, Any]]:
    """The SCC grant of a multi-node group on OpenShift, API-key Secret (when required), the workload, Service,
    PodDisruptionBudget, and the image pre-pull DaemonSet (server.prepull_image). The server's ServiceAccount
    comes before the cache objects (render_manifests)."""
    server, multinode = plan.server, plan.multinode
    objects: list[dict[str, Any]] = []
    if multinode is not None and multinode.scc is not None:
        objects += render_scc_use(f"{server.name}-scc", server.namespace, server.labels, multinode.scc, server.service_account)
    if server.api_key_secret:
        keys = (API_KEY_KEY, API_KEY_PREVIOUS_KEY) if server.api_key_previous else (API_KEY_KEY,)
        data = dict.fromkeys(keys, SECRET_PLACEHOLDER)
        objects.append(render_secret(server.api_key_secret, server.namespace, server.labels, data))
    objects += [render_workload(plan, server_delivery(plan)), render_server_service(plan), pod.render_pdb(server)]
    if server.prepull is not None:
        objects.append(render_prepull_daemonset(server.prepull, plan.placement))
    return objects


def render_workload(plan: Plan, pod_delivery: pod.PodDelivery) -> dict[str, Any]:
    """The Deployment, the StatefulSet when each replica owns its claim, or with engine.nnodes > 1 the
    LeaderWorkerSet built from the Deployment. Pulumi does not await a Deployment or a StatefulSet: the rollout
    gate does, and fails in minutes where Pulumi's await ran to its timeout (plan/rollout_gate.py)."""
    server, placement = plan.server, plan.placement
    if plan.multinode is not None:
        deployment = pod.render_deployment(server, placement, pod_delivery)
        return leaderworkerset.render_leaderworkerset(plan.multinode, deployment, plan.identity.instance)
    if plan.delivery.workload_kind == "StatefulSet":
        pod_spec = pod.render_pod_spec(server, placement, pod_delivery)
        metadata = {
            "name": server.name,
            "namespace": server.namespace,
            "labels": dict(server.labels),
            "annotations": {**pod_delivery.annotations, **cache.SKIP_AWAIT},
        }
        template = {"metadata": pod.pod_metadata(server, placement, pod_delivery), "spec": pod_spec}
        return delivery_render.render_statefulset(plan.delivery, metadata, server.selector, template, server.replicas)
    deployment = pod.render_deployment(server, placement, pod_delivery)
    deployment["metadata"]["annotations"] = {**deployment["metadata"].get("annotations", {}), **cache.SKIP_AWAIT}
    return deployment


def render_server_service(plan: Plan) -> dict[str, Any]:
    """The clients' Service on the pods that serve the API (the leaders only with several nodes per replica).
    Pulumi awaits a Service until it selects a ready pod (docs/sources.md §S8.2); at zero replicas by design
    (autoscaling's minimum 0) there is none, so that one is not awaited: the rollout gate awaits the pods."""
    service = pod.render_service(plan.server)
    service["spec"]["selector"] = dict(plan.traffic.api_selector)
    if plan.server.replicas == 0:
        service["metadata"]["annotations"] = dict(cache.SKIP_AWAIT)
    return service


def namespace_manifest(identity: Identity, level: PodSecurityLevel) -> dict[str, Any]:
    """The Namespace, labelled for the instance that owns it and the Pod Security level its pods meet: privileged
    only for a multi-node group that adds IPC_LOCK (plan/security.py)."""
    return render_namespace(identity.namespace, namespace_labels(identity.instance), level.level)


def render_manifests(plan: Plan) -> list[dict[str, Any]]:
    """Namespace (when created), the server's ServiceAccount (the bucket-copy Job runs as it), cache objects, then
    server objects and the rollout gate."""
    identity = plan.identity
    objects = [namespace_manifest(identity, plan.pod_security)] if identity.creates_namespace else []
    server = server_objects(plan)
    return [*objects, server_service_account(plan), *cache_objects(plan), *server, *rollout_gate_objects(plan, server)]


def rollout_gate_objects(plan: Plan, server: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rollout gate of the workload among the server's objects (server_objects); none for the Docker target."""
    gate = plan.rollout_gate
    if gate is None:
        return []
    (workload,) = [obj for obj in server if obj["kind"] == gate.kind]
    return render_rollout_gate(gate, workload, plan.server.api_key_secret)


def network_manifests(plan: Plan) -> list[dict[str, Any]]:
    return render_network_policies(plan.identity, plan.traffic)


def router_manifests(plan: Plan) -> list[dict[str, Any]]:
    """The router's objects (components/render/router.py) when routing is on."""
    return router_objects(plan.routing, plan.monitoring) if plan.routing is not None else []


def traffic_manifests(plan: Plan) -> list[dict[str, Any]]:
    """The route or Ingress (when exposed), then the smoke test's ConfigMap and Job (when on)."""
    return render_exposure(plan.identity, plan.traffic) + render_smoke_test(plan.identity, plan.traffic)


def observability_manifests(plan: Plan) -> list[dict[str, Any]]:
    """KEDA's ScaledObject, or the add-on's HTTPScaledObject (when on), then the monitoring objects; the queue
    alert fires where KEDA acts."""
    scaling, monitoring = plan.scaling, plan.monitoring
    objects = render_autoscaler(scaling, plan.zero) if scaling.enabled else []
    return objects + (monitoring_objects(monitoring, scaling.workload, plan.zero) if monitoring.enabled else [])


def stack_manifests(plan: Plan) -> list[dict[str, Any]]:
    """Every object of a kubernetes stack, in the order the program registers them."""
    return (
        render_manifests(plan)
        + network_manifests(plan)
        + traffic_manifests(plan)
        + observability_manifests(plan)
        + router_manifests(plan)
    )
