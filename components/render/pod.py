"""The vLLM server Deployment, Service and PodDisruptionBudget. Pure: writes the plan's server and placement
(plan/server.py, plan/placement.py) and what the delivery mode adds (PodDelivery) as manifests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from components.render import scheduling
from components.render.resources import memory_quantity, render_server_resources
from components.render.security import (
    api_key_annotations,
    api_key_args,
    api_key_env,
    container_security_context,
    pod_security_context,
)
from plan.names import HF_HOME, HOME, PORT_NAME
from plan.placement import Placement
from plan.server import ServerPlan as ServerPlan  # components/render/delivery.py reads it from here


@dataclass(frozen=True)
class PodDelivery:
    """What the delivery mode adds to the server pod, rendered by components/render/delivery.py, cache.py and
    probes.py (components/render/manifests.py server_delivery)."""

    model_volumes: list[dict[str, Any]]  # the model-cache volume: a claim, a per-replica claim or an emptyDir
    env: dict[str, str]  # over vLLM's environment, under vllm.extra_env
    env_from: dict[str, Any]  # {"envFrom": [...]} or nothing
    probes: dict[str, dict[str, Any]]
    init_containers: list[dict[str, Any]]  # the per-replica download, or the wait for the download Job
    annotations: dict[str, str]  # the startup budget, term by term
    progress_deadline_seconds: int
    pod_labels: dict[str, str]  # over the server's labels on the pod template only (a webhook reads them)


def render_volumes(server: ServerPlan, delivery: PodDelivery) -> list[dict[str, Any]]:
    return [
        *delivery.model_volumes,
        # Shared memory for NCCL/tensor parallel; the default 64 MiB /dev/shm makes multi-GPU start fail.
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": memory_quantity(server.resources.shm_gib)}},
        {"name": "home", "emptyDir": {"sizeLimit": memory_quantity(server.home_size_gib)}},
        {"name": "tmp", "emptyDir": {"sizeLimit": memory_quantity(server.tmp_size_gib)}},
    ]


def render_volume_mounts() -> list[dict[str, Any]]:  # model-cache: a claim, a per-replica claim or an emptyDir
    # The cache stays writable: huggingface_hub and vLLM may take lock files next to the snapshot.
    return [
        {"name": "model-cache", "mountPath": HF_HOME},
        {"name": "dshm", "mountPath": "/dev/shm"},
        {"name": "home", "mountPath": HOME},
        {"name": "tmp", "mountPath": "/tmp"},
    ]


def render_env(server: ServerPlan, delivery: PodDelivery) -> list[dict[str, Any]]:
    values = server.env | delivery.env | server.extra_env  # the user's word stays last, as in plan/vllm_args.py
    env: list[dict[str, Any]] = [{"name": key, "value": value} for key, value in values.items()]
    if server.api_key_secret:
        env += api_key_env(server.api_key_secret, server.api_key_previous)
    return env


def render_server_container(server: ServerPlan, delivery: PodDelivery) -> dict[str, Any]:
    return {
        "name": "vllm",
        "image": server.image,
        "imagePullPolicy": server.image_pull_policy,
        "command": ["vllm", "serve"],  # explicit: the image ENTRYPOINT differs between releases (docs/sources.md §A.6)
        # After kubelet_literal: the keys' $(VAR) must expand.
        "args": kubelet_literal(list(server.args)) + api_key_args(bool(server.api_key_secret) and server.api_key_previous),
        "ports": [{"name": PORT_NAME, "containerPort": server.port, "protocol": "TCP"}],
        "env": render_env(server, delivery),
        **delivery.env_from,
        "resources": render_server_resources(server.resources),
        "volumeMounts": render_volume_mounts(),
        **delivery.probes,
        # Endpoints drop the pod while it sleeps; then SIGTERM lets uvicorn finish in-flight requests.
        "lifecycle": {"preStop": {"exec": {"command": ["sleep", str(server.pre_stop_sleep_seconds)]}}},
        "securityContext": container_security_context(),
        "terminationMessagePolicy": "FallbackToLogsOnError",  # the vLLM traceback shows in `kubectl describe`
    }


def render_pod_spec(server: ServerPlan, placement: Placement, delivery: PodDelivery) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "serviceAccountName": server.service_account,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,  # a Service named like vllm-* would inject VLLM_* variables (docs/sources.md §A.4)
        "securityContext": pod_security_context(server.security),
        "tolerations": scheduling.render_tolerations(placement),
        "terminationGracePeriodSeconds": server.termination_grace_period_seconds,
        "containers": [render_server_container(server, delivery)],
        "volumes": render_volumes(server, delivery),
        **scheduling.render_pod_settings(placement, gpu=True),
    }
    if delivery.init_containers:
        spec["initContainers"] = list(delivery.init_containers)
    affinity = scheduling.render_affinity(placement)
    if affinity:
        spec["affinity"] = affinity
    if placement.node_selector:
        spec["nodeSelector"] = scheduling.render_node_selector(placement)
    spread = scheduling.render_topology_spread(placement, server.selector)
    if spread:
        spec["topologySpreadConstraints"] = spread
    return spec


def pod_metadata(server: ServerPlan, placement: Placement, delivery: PodDelivery) -> dict[str, Any]:
    """The pod template's labels (with the identity webhook's), the profile's GPU pod annotations and the API key's
    fingerprint (a LeaderWorkerSet copies this template to its leaders and workers)."""
    metadata: dict[str, Any] = {"labels": {**server.labels, **delivery.pod_labels}}
    annotations = {**placement.pod_annotations, **api_key_annotations(server.api_key_secret)}
    if annotations:
        metadata["annotations"] = annotations
    return metadata


def render_deployment(server: ServerPlan, placement: Placement, delivery: PodDelivery) -> dict[str, Any]:
    """spec.replicas is the count at creation (KEDA's minimum when it owns the count; Pulumi then ignores the
    field on update so it never fights the HPA: docs/sources.md §H.8). The annotations carry the startup budget
    term by term (the probe's and the deadline's arithmetic)."""
    spec: dict[str, Any] = {
        "replicas": server.replicas,
        "selector": {"matchLabels": dict(server.selector)},
        "strategy": scheduling.render_strategy(placement),
        "progressDeadlineSeconds": delivery.progress_deadline_seconds,
        "revisionHistoryLimit": 3,
        "template": {
            "metadata": pod_metadata(server, placement, delivery),
            "spec": render_pod_spec(server, placement, delivery),
        },
    }
    metadata = {
        "name": server.name,
        "namespace": server.namespace,
        "labels": dict(server.labels),
        "annotations": dict(delivery.annotations),
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata, "spec": spec}


def render_service(server: ServerPlan) -> dict[str, Any]:
    if server.name == "vllm":
        raise ValueError("a Service named vllm injects VLLM_PORT=tcp://... into pods and crashes vLLM")
    port = {"name": PORT_NAME, "port": server.port, "targetPort": PORT_NAME, "protocol": "TCP"}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": server.name, "namespace": server.namespace, "labels": dict(server.labels)},
        "spec": {"type": "ClusterIP", "selector": dict(server.selector), "ports": [port]},
    }


def render_pdb(server: ServerPlan) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": server.name, "namespace": server.namespace, "labels": dict(server.labels)},
        "spec": scheduling.render_pdb_spec(server.selector),
    }


def kubelet_literal(args: list[str]) -> list[str]:
    """Container args as typed: the kubelet expands `$(VAR)` in args and reads `$$` as `$` (kubernetes
    third_party/forked/golang/expansion/expand.go), so a literal `$(` is written `$$(`."""
    return [arg.replace("$(", "$$(") for arg in args]
