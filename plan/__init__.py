"""The deployment plan: every derived decision of one stack, computed once by `resolve`.

validation.assess calls `resolve` once; the preflight's report, the validation rules, the cluster check, the
renderers (components/render), the Pulumi components and the CLIs read the plan's parts. A renderer takes the
parts it needs, never the whole config. Pure: never imports pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from config.cluster import ClusterConfig
from config.model import ModelConfig
from config.stack import StackConfig
from plan.cost import CostPlan, replica_bounds, resolve_cost
from plan.delivery import DeliveryPlan, resolve_delivery
from plan.identity import Identity, resolve_identity
from plan.lora import LoraPlan, resolve_lora
from plan.monitoring import MonitoringPlan, resolve_observability
from plan.multinode import MultinodePlan, resolve_multinode
from plan.placement import Placement, resolve_placement
from plan.rollout_gate import RolloutGatePlan, gate_deadline_seconds, resolve_rollout_gate
from plan.routing import RoutingPlan, resolve_routing
from plan.scaling import ScalingPlan
from plan.security import PodSecurityLevel, pod_security_level
from plan.server import ServerPlan, resolve_server
from plan.sizing import resolve_sizing
from plan.traffic import TrafficPlan, inline_media_warnings, launch_of, request_body_mib, resolve_traffic
from plan.upgrades import budget_hold, upgrade_warnings
from plan.vllm_args import drain_seconds
from plan.zero import ZeroPlan, resolve_zero
from preflight.report import PreflightReport
from preflight.resolve import ResolvedEngine


@dataclass(frozen=True)
class Plan:
    target: Literal["kubernetes", "docker"]
    identity: Identity
    engine: ResolvedEngine  # every engine value vLLM will use, rendered as flags
    sizing: PreflightReport  # GPU memory, KV capacity and the verdict
    delivery: DeliveryPlan
    server: ServerPlan  # the vLLM server: command line, environment, resources, security
    placement: Placement  # where its pods run
    multinode: MultinodePlan | None  # None with one node per replica
    rollout_gate: RolloutGatePlan | None  # the Job that awaits the workload's rollout; None for the Docker target
    pod_security: PodSecurityLevel  # the Pod Security level the pods meet, which their namespace must admit
    traffic: TrafficPlan  # exposure, client URL, network-policy inputs, smoke test
    routing: RoutingPlan | None  # vLLM's router in front of the replicas; None when routing.enabled is false
    lora: LoraPlan | None  # LoRA adapters served on the model; None without them
    scaling: ScalingPlan  # KEDA: capacity, thresholds, the workload PromQL queries, server address
    zero: ZeroPlan | None  # the KEDA HTTP add-on in front of the server (scale to zero); None without it
    monitoring: MonitoringPlan  # Prometheus wiring and alert limits
    model: ModelConfig  # the model as the stack names it (id, revision, local_path)
    cluster: ClusterConfig  # the cluster profile and where the cluster check reads its facts
    cost: CostPlan  # GPUs, GPU-hours and USD per month at the fewest and the most replicas
    render_yaml_to_directory: str | None  # manifests written to this folder instead of applied


def resolve(cfg: StackConfig, instance: str, hf_token: bool = False, api_key_previous: bool = False) -> Plan:
    """The plan of a parsed stack for one instance (plan/names.py instance_name of the Pulumi stack). Raises
    ConfigError when the model cannot be sized (an unreadable model.config_json). `hf_token`: whether the
    hf_token secret is set (the download Jobs mount it); `api_key_previous`: whether that secret is set (the server
    accepts it beside api_key)."""
    sizing = resolve_sizing(cfg)
    identity = resolve_identity(cfg.namespace, instance)
    token_secret = identity.names.hf_token_secret if hf_token else None
    bounds = replica_bounds(cfg.replicas, cfg.autoscaling)
    delivery = resolve_delivery(cfg, sizing.resolved, sizing.weights_on_disk_gib, identity.names, token_secret, bounds[1])
    placement = resolve_placement(cfg, delivery.most_replicas)
    # The report shows the delivery's startup budget and its page-cache warning, decided here above the preflight,
    # and what the provider's managed node upgrades do to the serving pods' drain.
    upgrades = upgrade_warnings(
        cfg.cluster.upgrade_drain if cfg.target == "kubernetes" else None,
        budget_hold(delivery.budget, placement.several_replicas),
        cfg.server.termination_grace_period_seconds,
    )
    body_mib = request_body_mib(cfg.exposure.ingress, sizing.resolved.max_model_len)
    media = inline_media_warnings(cfg.exposure.ingress, body_mib, sizing.resolved.architecture.multimodal)
    verdict = replace(sizing.verdict, warnings=sizing.verdict.warnings + delivery.warnings + upgrades + media)
    sizing = replace(sizing, verdict=verdict, startup=delivery.budget)
    scaling, monitoring = resolve_observability(cfg, identity, sizing, delivery)
    drain = drain_seconds(cfg.server, cfg.target)
    multinode = resolve_multinode(cfg, drain)
    ranks_lock_memory = multinode is not None and multinode.ipc_lock
    server = resolve_server(cfg, identity, sizing.resolved, delivery, bounds[0], ranks_lock_memory, drain, api_key_previous)
    zero = resolve_zero(
        cfg.autoscaling, cfg.exposure, identity, scaling.workload, server.port, scaling.thresholds.running, delivery.budget
    )
    cost = resolve_cost(cfg.cost, cfg.gpu, sizing.resolved, bounds, cfg.cluster.profile)
    routing = resolve_routing(
        cfg.routing,
        identity,
        cfg.security,
        delivery.security,
        server.port,
        server.startup_seconds,
        server.pre_stop_sleep_seconds,
    )
    gate_deadline = gate_deadline_seconds(delivery, server.termination_grace_period_seconds)
    return Plan(
        target=cfg.target,
        identity=identity,
        engine=sizing.resolved,
        sizing=sizing,
        delivery=delivery,
        server=server,
        placement=placement,
        multinode=multinode,
        rollout_gate=resolve_rollout_gate(cfg.target, delivery, identity, cfg.smoke_test.image, gate_deadline),
        pod_security=pod_security_level(ranks_lock_memory),
        traffic=resolve_traffic(
            cfg,
            identity,
            delivery,
            launch_of(server.args, server.env),
            body_mib,
            zero,
            scaling.enabled and scaling.thanos is not None,
        ),
        routing=routing,
        lora=resolve_lora(cfg.lora, cfg.delivery.mode),
        scaling=scaling,
        zero=zero,
        monitoring=monitoring,
        model=cfg.model,
        cluster=cfg.cluster,
        cost=cost,
        render_yaml_to_directory=cfg.render_yaml_to_directory,
    )
