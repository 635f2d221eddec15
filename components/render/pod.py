"""The vLLM server Deployment and Service. Pure: takes typed config and the preflight's figures.

Every value the preflight used (GPU product, GPUs per replica, engine flags) is rendered from the same
config, so the scheduled pod and the preflight cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from components.render import delivery, scheduling
from components.render.cache import render_wait_container
from components.render.probes import budget_annotations, render_probes
from components.render.resources import memory_quantity, render_server_resources, shm_size_gib
from components.render.security import api_key_env, container_security_context, pod_security_context
from components.render.vllm_args import render_vllm_args, render_vllm_env
from config.stack import StackConfig
from plan.delivery import DeliveryPlan
from plan.names import HF_HOME, HOME, PORT_NAME
from preflight.resolve import ResolvedEngine
from preflight.startup import StartupBudget


@dataclass(frozen=True)
class ServerPlan:
    """Everything the server pod needs besides the config: names and the computed figures."""

    name: str  # Deployment, Service, ServiceAccount and PDB name
    namespace: str
    labels: dict[str, str]
    selector: dict[str, str]
    claim: str  # the model cache PVC
    service_account: str
    api_key_secret: str | None  # set when security.require_api_key
    resolved: ResolvedEngine
    budget: StartupBudget  # the startup probe's
    delivery: DeliveryPlan  # the mode, the volume, the first start's sum term by term, the timeouts
    weights_on_disk_gib: float
    hf_token_secret: str | None = None  # mounted by a per-replica download init container


def render_volumes(cfg: StackConfig, plan: ServerPlan) -> list[dict[str, Any]]:
    return [
        *delivery.model_volumes(plan.delivery, plan.hf_token_secret),
        # Shared memory for NCCL/tensor parallel; the default 64 MiB /dev/shm makes multi-GPU start fail.
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": memory_quantity(shm_size_gib(cfg))}},
        {"name": "home", "emptyDir": {"sizeLimit": memory_quantity(cfg.server.home_size_gib)}},
        {"name": "tmp", "emptyDir": {"sizeLimit": memory_quantity(cfg.server.tmp_size_gib)}},
    ]


def render_volume_mounts() -> list[dict[str, Any]]:  # model-cache: a claim, a per-replica claim or an emptyDir
    # The cache stays writable: huggingface_hub and vLLM may take lock files next to the snapshot.
    return [
        {"name": "model-cache", "mountPath": HF_HOME},
        {"name": "dshm", "mountPath": "/dev/shm"},
        {"name": "home", "mountPath": HOME},
        {"name": "tmp", "mountPath": "/tmp"},
    ]


def render_env(cfg: StackConfig, plan: ServerPlan) -> list[dict[str, Any]]:
    values = render_vllm_env(cfg, plan.resolved, plan.budget.total_seconds) | delivery.server_env(plan.delivery)
    values.update(cfg.vllm.extra_env)  # the user's word stays last, as in render_vllm_env
    env: list[dict[str, Any]] = [{"name": key, "value": value} for key, value in values.items()]
    if plan.api_key_secret:
        env.append(api_key_env(plan.api_key_secret))
    return env


def render_server_container(cfg: StackConfig, plan: ServerPlan) -> dict[str, Any]:
    return {
        "name": "vllm",
        "image": cfg.vllm.image_ref,
        "imagePullPolicy": cfg.vllm.image_pull_policy,
        "command": ["vllm", "serve"],  # explicit: the image ENTRYPOINT differs between releases (docs/sources.md §A.6)
        "args": kubelet_literal(render_vllm_args(cfg, plan.resolved)),
        "ports": [{"name": PORT_NAME, "containerPort": cfg.server.port, "protocol": "TCP"}],
        "env": render_env(cfg, plan),
        **delivery.server_env_from(plan.delivery),
        "resources": render_server_resources(cfg),
        "volumeMounts": render_volume_mounts(),
        **render_probes(cfg.probes, plan.budget),
        # Endpoints drop the pod while it sleeps; then SIGTERM lets uvicorn finish in-flight requests.
        "lifecycle": {"preStop": {"exec": {"command": ["sleep", str(cfg.server.pre_stop_sleep_seconds)]}}},
        "securityContext": container_security_context(),
        "terminationMessagePolicy": "FallbackToLogsOnError",  # the vLLM traceback shows in `kubectl describe`
    }


def render_pod_spec(cfg: StackConfig, plan: ServerPlan) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "serviceAccountName": plan.service_account,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,  # a Service named like vllm-* would inject VLLM_* variables (docs/sources.md §A.4)
        "securityContext": pod_security_context(cfg.security),
        "tolerations": scheduling.render_tolerations(cfg),
        "terminationGracePeriodSeconds": cfg.server.termination_grace_period_seconds,
        "containers": [render_server_container(cfg, plan)],
        "volumes": render_volumes(cfg, plan),
        **scheduling.render_pod_settings(cfg, gpu=True),
    }
    if plan.delivery.mode == "per_replica_volume" and plan.delivery.needs_download:
        spec["initContainers"] = [delivery.per_replica_download(plan.delivery, cfg.vllm, cfg.cache)]
    elif plan.delivery.needs_download:
        spec["initContainers"] = [render_wait_container(plan.delivery, cfg.vllm)]
    affinity = scheduling.render_affinity(cfg)
    if affinity:
        spec["affinity"] = affinity
    if cfg.gpu.node_selector:
        spec["nodeSelector"] = scheduling.render_node_selector(cfg)
    spread = scheduling.render_topology_spread(cfg, plan.selector)
    if spread:
        spec["topologySpreadConstraints"] = spread
    return spec


def render_workload(cfg: StackConfig, plan: ServerPlan) -> dict[str, Any]:
    """A StatefulSet when each replica owns its claim, else a Deployment."""
    if plan.delivery.workload_kind == "StatefulSet":
        template = {"metadata": {"labels": dict(plan.labels)}, "spec": render_pod_spec(cfg, plan)}
        metadata = {
            "name": plan.name,
            "namespace": plan.namespace,
            "labels": dict(plan.labels),
            "annotations": budget_annotations(plan.delivery.budget),
        }
        replicas = None if cfg.autoscaling.enabled else cfg.replicas
        return delivery.render_statefulset(plan.delivery, metadata, plan.selector, template, replicas)
    return render_deployment(cfg, plan)


def render_deployment(cfg: StackConfig, plan: ServerPlan) -> dict[str, Any]:
    """spec.replicas is left out when KEDA owns it, so Server-Side Apply never fights the HPA (docs/sources.md §H.8).
    The annotations carry the startup budget term by term (the probe's and the deadline's arithmetic)."""
    spec: dict[str, Any] = {
        "selector": {"matchLabels": dict(plan.selector)},
        "strategy": scheduling.render_strategy(cfg),
        "progressDeadlineSeconds": plan.delivery.rollout_seconds,
        "revisionHistoryLimit": 3,
        "template": {"metadata": {"labels": dict(plan.labels)}, "spec": render_pod_spec(cfg, plan)},
    }
    if not cfg.autoscaling.enabled:
        spec = {"replicas": cfg.replicas, **spec}
    metadata = {
        "name": plan.name,
        "namespace": plan.namespace,
        "labels": dict(plan.labels),
        "annotations": budget_annotations(plan.delivery.budget),
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata, "spec": spec}


def render_service(cfg: StackConfig, plan: ServerPlan) -> dict[str, Any]:
    if plan.name == "vllm":
        raise ValueError("a Service named vllm injects VLLM_PORT=tcp://... into pods and crashes vLLM")
    port = {"name": PORT_NAME, "port": cfg.server.port, "targetPort": PORT_NAME, "protocol": "TCP"}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": plan.name, "namespace": plan.namespace, "labels": dict(plan.labels)},
        "spec": {"type": "ClusterIP", "selector": dict(plan.selector), "ports": [port]},
    }


def render_pdb(plan: ServerPlan) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": plan.name, "namespace": plan.namespace, "labels": dict(plan.labels)},
        "spec": scheduling.render_pdb_spec(plan.selector),
    }


def kubelet_literal(args: list[str]) -> list[str]:
    """Container args as typed: the kubelet expands `$(VAR)` in args and reads `$$` as `$` (kubernetes
    third_party/forked/golang/expansion/expand.go), so a literal `$(` is written `$$(`."""
    return [arg.replace("$(", "$$(") for arg in args]
