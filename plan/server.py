"""The vLLM server, decided once for both targets: its names, image, the `vllm serve` command line and
environment, resources, security and lifecycle. Pure.

Every value the preflight used (GPU product, GPUs per replica, engine flags) comes from the same resolved
engine, so the scheduled pod and the preflight cannot disagree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog.vllm_flags import FLAG_TABLES
from config.docker import DockerConfig, docker_settings
from config.stack import StackConfig
from plan.delivery import DeliveryPlan
from plan.flows import IMAGE_PREPULL
from plan.identity import Identity
from plan.names import endpoint_labels
from plan.routing import resolve_scale_out
from plan.security import PodSecurity, resolve_server_security
from plan.vllm_args import vllm_args, vllm_env
from preflight.delivery import DeliveryBudget, server_memory_limit_gib, shm_gib
from preflight.resolve import ResolvedEngine


@dataclass(frozen=True)
class Resources:
    """Requests equal limits (Guaranteed QoS, so a GPU pod is the last to be evicted)."""

    cpu: str
    memory_gib: float  # process memory plus /dev/shm: a memory-backed emptyDir is charged to the limit
    shm_gib: float  # /dev/shm: NCCL moves tensor-parallel traffic through it
    gpus: int  # per pod
    gpu_resource: str  # the GPU vendor's extended resource


@dataclass(frozen=True)
class PrepullPlan:
    """server.prepull_image: a DaemonSet on the server's GPU nodes whose one container, the vLLM image sleeping,
    keeps the image on each node (the kubelet's image GC spares images of running containers)."""

    name: str
    namespace: str
    labels: dict[str, str]
    selector: dict[str, str]
    image: str
    image_pull_policy: str
    security: PodSecurity


@dataclass(frozen=True)
class ServerPlan:
    name: str  # Deployment, Service, ServiceAccount and PDB name
    namespace: str
    labels: dict[str, str]
    selector: dict[str, str]
    service_account: str
    api_key_secret: str | None  # set when security.require_api_key
    # The api_key_previous secret is set: the Secret holds it too and vLLM accepts both keys (validation refuses it
    # without api_key_secret, on the docker target and before vllm_flags.SEVERAL_API_KEYS_SINCE).
    api_key_previous: bool
    image: str
    image_pull_policy: str
    port: int
    args: tuple[str, ...]  # after `vllm serve`, as vLLM reads them (a multi-node rank adds its flags)
    env: dict[str, str]  # vLLM's environment, secrets excluded; vllm.extra_env last
    extra_env: dict[str, str]  # the user's word, kept last over what the delivery mode adds too
    startup_seconds: int  # the engine-ready timeout: the startup probe's budget; on Docker the start period
    resources: Resources
    security: PodSecurity
    home_size_gib: float
    tmp_size_gib: float
    pre_stop_sleep_seconds: int
    termination_grace_period_seconds: int
    # The count at creation: KEDA's minimum when it owns the count (without it Kubernetes starts 1, and the smoke
    # test runs on one replica), else `replicas`.
    replicas: int
    autoscaled: bool  # KEDA owns later changes: Pulumi ignores spec.replicas on update (components/vllm_server.py)
    weights_on_disk_gib: float  # what the server loads; the per-replica claim template is sized from it
    docker: DockerConfig | None  # the docker target's host settings
    prepull: PrepullPlan | None  # server.prepull_image on the kubernetes target


def server_cpu(cpu: str | None, gpus_per_node: int) -> str:
    return cpu or str(2 + 4 * gpus_per_node)


def resolve_resources(cfg: StackConfig, engine: ResolvedEngine) -> Resources:
    """One formula with the preflight's page-cache check (preflight/delivery.py)."""
    gpus = cfg.engine.gpus_per_node
    return Resources(
        cpu=server_cpu(cfg.server.cpu, gpus),
        memory_gib=server_memory_limit_gib(cfg.server, gpus),
        shm_gib=shm_gib(cfg.server, gpus),
        gpus=gpus,
        gpu_resource=engine.gpu.vendor.resource,
    )


def docker_start_period(budget: DeliveryBudget) -> int:
    """The health check's start period: the Kubernetes startup budget plus the first start's download
    (the report's download term, the model and any draft model; 0 for a local_path model).

    On Docker no Job fills the cache first; with a warm cache the container turns healthy at its first passing
    check, so the download allowance costs nothing after the first start. An override is final."""
    if budget.probe.overridden:
        return budget.probe.total_seconds
    download = budget.download_seconds
    return budget.probe.total_seconds + math.ceil(download * budget.probe.safety_factor)


def resolve_server(
    cfg: StackConfig,
    identity: Identity,
    engine: ResolvedEngine,
    delivery: DeliveryPlan,
    replicas: int,
    ranks_lock_memory: bool,
    drain: int,
    api_key_previous: bool = False,
) -> ServerPlan:
    """`replicas`: the count at creation, the fewest that run (plan/cost.py replica_bounds); `ranks_lock_memory`:
    the ranks of a multi-node group add IPC_LOCK as UID 0 (plan/multinode.py); `drain`: plan/vllm_args.py
    drain_seconds; `api_key_previous`: whether that secret is set."""
    names, budget = identity.names, delivery.budget
    resources = resolve_resources(cfg, engine)
    scale_out = resolve_scale_out(cfg.routing, FLAG_TABLES[engine.release.version])
    startup = docker_start_period(budget) if cfg.target == "docker" else budget.probe.total_seconds
    return ServerPlan(
        name=names.server,
        namespace=identity.namespace,
        labels=identity.labels("server") | endpoint_labels(cfg.routing.endpoint),
        selector=identity.selector("server"),
        service_account=names.server,
        api_key_secret=names.api_key_secret if cfg.security.require_api_key else None,
        api_key_previous=api_key_previous,
        image=cfg.vllm.image_ref,
        image_pull_policy=cfg.vllm.image_pull_policy,
        port=cfg.server.port,
        args=tuple(vllm_args(cfg, engine, resources.memory_gib, drain, scale_out)),
        env=vllm_env(cfg, engine, startup, scale_out),
        extra_env=dict(cfg.vllm.extra_env),
        startup_seconds=startup,
        resources=resources,
        security=resolve_server_security(cfg.security, cfg.cluster.defaults, ranks_lock_memory),
        home_size_gib=cfg.server.home_size_gib,
        tmp_size_gib=cfg.server.tmp_size_gib,
        pre_stop_sleep_seconds=cfg.server.pre_stop_sleep_seconds,
        termination_grace_period_seconds=cfg.server.termination_grace_period_seconds,
        replicas=replicas,
        autoscaled=cfg.autoscaling.enabled,
        weights_on_disk_gib=delivery.weights_on_disk_gib,
        docker=docker_settings(cfg.docker) if cfg.target == "docker" else None,
        prepull=_prepull(cfg, identity, delivery.security),
    )


def _prepull(cfg: StackConfig, identity: Identity, security: PodSecurity) -> PrepullPlan | None:
    if not cfg.server.prepull_image or cfg.target != "kubernetes":
        return None
    return PrepullPlan(
        name=identity.names.image_prepull,
        namespace=identity.namespace,
        labels=identity.labels(IMAGE_PREPULL),
        selector=identity.selector(IMAGE_PREPULL),
        image=cfg.vllm.image_ref,
        image_pull_policy=cfg.vllm.image_pull_policy,
        security=security,
    )
