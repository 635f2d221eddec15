"""The whole stack config: one frozen model, validated once, with every problem reported together."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, ValidationError

from config import cluster, delivery, docker, exposure, kubernetes, multinode, observability
from config.base import ConfigGroup
from config.cluster import ClusterConfig
from config.delivery import DeliveryConfig
from config.docker import DockerConfig
from config.engine import EngineConfig
from config.errors import ConfigError, ConfigIssue
from config.exposure import ExposureConfig, SmokeTestConfig
from config.gpu import GpuConfig
from config.kubernetes import CacheConfig, NamespaceConfig, ProbesConfig, SchedulingConfig, SecurityConfig, ServerConfig
from config.messages import issue_from_pydantic
from config.model import ModelConfig
from config.multinode import MultinodeConfig
from config.network import NetworkPolicyConfig
from config.observability import AutoscalingConfig, MonitoringConfig
from config.preflight import PreflightConfig
from config.syntax import Replicas
from config.vllm import VllmConfig

# Keys that hold credentials: only ever set with `pulumi config set --secret`.
SECRET_KEYS: tuple[str, ...] = ("hf_token", "api_key")


class StackConfig(ConfigGroup):
    """Everything one stack deploys. Each field is one `vllm-serving:<key>` in the stack file."""

    model: ModelConfig = Field(description="The model to serve.")
    gpu: GpuConfig = Field(description="GPU product and GPUs per replica.")
    engine: EngineConfig = Field(default_factory=EngineConfig, description="vLLM engine arguments.")
    vllm: VllmConfig = Field(default_factory=VllmConfig, description="vLLM release and image.")
    replicas: Replicas = Field(1, description="Replicas (the starting count when autoscaling is on).")
    target: Literal["kubernetes", "docker"] = Field("kubernetes", description="Where to deploy.")
    namespace: NamespaceConfig = Field(default_factory=NamespaceConfig, description="Kubernetes namespace.")
    scheduling: SchedulingConfig = Field(default_factory=SchedulingConfig, description="Replica spreading.")
    cache: CacheConfig = Field(default_factory=CacheConfig, description="Model cache volume.")
    delivery: DeliveryConfig = Field(default_factory=DeliveryConfig, description="How weights reach the GPUs.")
    probes: ProbesConfig = Field(default_factory=ProbesConfig, description="Startup, readiness and liveness probes.")
    server: ServerConfig = Field(default_factory=ServerConfig, description="The vLLM container.")
    security: SecurityConfig = Field(default_factory=SecurityConfig, description="Security defaults.")
    network_policy: NetworkPolicyConfig = Field(
        default_factory=NetworkPolicyConfig, description="NetworkPolicies for the server and download pods."
    )
    exposure: ExposureConfig = Field(
        default_factory=ExposureConfig, description="How clients reach the API: a Gateway HTTPRoute or an Ingress."
    )
    smoke_test: SmokeTestConfig = Field(
        default_factory=SmokeTestConfig, description="The post-deploy chat completion that must answer."
    )
    autoscaling: AutoscalingConfig = Field(default_factory=AutoscalingConfig, description="KEDA autoscaling.")
    monitoring: MonitoringConfig = Field(default_factory=MonitoringConfig, description="Prometheus and Grafana.")
    docker: DockerConfig | None = Field(None, description="The Docker host, for target docker.")
    multinode: MultinodeConfig = Field(
        default_factory=MultinodeConfig, description="A replica across several nodes (engine.nnodes > 1)."
    )
    cluster: ClusterConfig = Field(default_factory=ClusterConfig, description="Cluster profile and fact sources.")
    preflight: PreflightConfig = Field(default_factory=PreflightConfig, description="Preflight policies.")
    render_yaml_to_directory: str | None = Field(
        None, description="Write Kubernetes manifests to this folder instead of applying them (secrets in plain text)."
    )

    @property
    def served_model_name(self) -> str:
        return self.engine.served_model_name or self.model.id


def validate_config(raw: Mapping[str, Any]) -> StackConfig:
    """Validate the project's config keys (without the `vllm-serving:` prefix) into a StackConfig.

    Raises ConfigError listing every problem: unknown keys, bad values, and cross-key rules. The rules that
    need the preflight report, the target or the secrets run next, in validation.check_stack.
    """
    data = {key: value for key, value in raw.items() if key not in SECRET_KEYS}
    try:
        cfg = StackConfig.model_validate(data)
    except ValidationError as error:
        raise ConfigError([issue_from_pydantic(StackConfig, e) for e in error.errors()]) from None
    issues = _core_checks(cfg)
    for module in (kubernetes, delivery, observability, docker, multinode, cluster, exposure):
        issues += module.cross_checks(cfg)
    if issues:
        raise ConfigError(issues)
    return cfg


def missing_secrets(cfg: StackConfig, secrets_present: frozenset[str]) -> list[ConfigIssue]:
    """Secrets the config requires that are not set. A rule of validation.check_stack: a stack file may get
    them from elsewhere (a Pulumi ESC environment, CI), so the offline preflight only notes them."""
    if cfg.security.require_api_key and "api_key" not in secrets_present:
        return [
            ConfigIssue(
                "api_key",
                "is required because security.require_api_key is true, but it is not set.",
                "pulumi config set --secret api_key <key>, or set security.require_api_key: false.",
            )
        ]
    return []


def _core_checks(cfg: StackConfig) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []
    per_replica = cfg.engine.gpus_per_replica
    if cfg.gpu.count is not None and cfg.gpu.count != per_replica:
        issues.append(
            ConfigIssue(
                "gpu.count",
                f"is {cfg.gpu.count}, but engine.tensor_parallel_size ({cfg.engine.tensor_parallel_size}) x "
                f"engine.pipeline_parallel_size ({cfg.engine.pipeline_parallel_size}) = {per_replica} GPUs per replica.",
                f"set gpu.count to {per_replica}, or remove it (it defaults to that).",
            )
        )
    speculative = cfg.engine.speculative
    draft_tp = speculative.draft_tensor_parallel_size if speculative else None
    if draft_tp is not None and draft_tp not in (1, cfg.engine.tensor_parallel_size):
        issues.append(
            ConfigIssue(
                "engine.speculative.draft_tensor_parallel_size",
                f"is {draft_tp}, but vLLM runs a draft model on 1 GPU or on all {cfg.engine.tensor_parallel_size} "
                "of the target's tensor-parallel GPUs.",
                f"set it to 1 or {cfg.engine.tensor_parallel_size}, or remove it (it defaults to the target's).",
            )
        )
    return issues
