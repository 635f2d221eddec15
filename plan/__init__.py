"""The deployment plan: every derived decision of one stack, computed once by `resolve`.

validation.assess calls `resolve` once; the preflight's report, the validation rules, the cluster check, the
renderers (components/render), the Pulumi components and the CLIs read the plan's parts. A renderer takes the
parts it needs, never the whole config. Pure: never imports pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from catalog.vllm_metrics import metrics_for
from config.stack import StackConfig
from plan.delivery import DeliveryPlan, resolve_delivery
from plan.identity import Identity, resolve_identity
from plan.monitoring import MonitoringPlan, alert_limits, new_replica_seconds, prometheus_wiring
from plan.scaling import ScalingPlan, Workload, resolve_scaling, workload_name
from plan.traffic import TrafficPlan, resolve_traffic
from preflight import run_preflight
from preflight.report import PreflightReport
from preflight.resolve import ResolvedEngine


@dataclass(frozen=True)
class Plan:
    target: Literal["kubernetes", "docker"]
    identity: Identity
    engine: ResolvedEngine  # every engine value vLLM will use, rendered as flags
    sizing: PreflightReport  # GPU memory, KV capacity and the verdict
    delivery: DeliveryPlan
    traffic: TrafficPlan  # exposure, client URL, network-policy inputs, smoke test
    scaling: ScalingPlan  # KEDA: capacity, thresholds, the workload PromQL queries, server address
    monitoring: MonitoringPlan  # Prometheus wiring and alert limits
    config: StackConfig  # transitional: each renderer moves to the parts above


def resolve(cfg: StackConfig, instance: str, hf_token: bool = False) -> Plan:
    """The plan of a parsed stack for one instance (plan/names.py instance_name of the Pulumi stack). Raises
    ConfigError when the model cannot be sized (an unreadable model.config_json). `hf_token`: whether the
    hf_token secret is set (the download Jobs mount it)."""
    sizing = run_preflight(cfg)
    identity = resolve_identity(cfg.namespace, instance)
    token_secret = identity.names.hf_token_secret if hf_token else None
    delivery = resolve_delivery(cfg, sizing.weights_on_disk_gib, token_secret)
    scaling, monitoring = _observability(cfg, identity, sizing, delivery)
    return Plan(
        target=cfg.target,
        identity=identity,
        engine=sizing.resolved,
        sizing=sizing,
        delivery=delivery,
        traffic=resolve_traffic(cfg, identity, delivery.mode),
        scaling=scaling,
        monitoring=monitoring,
        config=cfg,
    )


def _observability(
    cfg: StackConfig, identity: Identity, sizing: PreflightReport, delivery: DeliveryPlan
) -> tuple[ScalingPlan, MonitoringPlan]:
    """KEDA and monitoring share the workload, the metric names and the thresholds: the queue alert fires where
    the scaler acts."""
    server, metrics = identity.selector("server"), metrics_for(cfg.vllm.version)
    wiring = prometheus_wiring(cfg.monitoring, cfg.autoscaling, server)
    workload = Workload(
        identity.namespace,
        cfg.served_model_name,
        workload_name(identity.names, cfg.engine.nnodes),
        kind=delivery.workload_kind,
    )
    scaling = resolve_scaling(cfg.autoscaling, identity, sizing, workload, wiring.server_address, metrics)
    queue = scaling.thresholds.queue if scaling.enabled else None
    rollout = new_replica_seconds(cfg.server.image_pull_seconds, delivery.budget)
    limits = alert_limits(cfg.monitoring, cfg.autoscaling, scaling.capacity, queue, rollout)
    monitoring = MonitoringPlan(cfg.monitoring, f"{identity.instance}-monitoring", server, wiring, limits, metrics)
    return scaling, monitoring
