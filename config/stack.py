"""The whole stack config: one frozen model, validated once, with every problem reported together."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, ValidationError

from config.base import ConfigGroup
from config.cluster import ClusterConfig
from config.cost import CostConfig
from config.delivery import DeliveryConfig
from config.docker import DockerConfig
from config.engine import EngineConfig
from config.errors import ConfigError
from config.exposure import ExposureConfig, SmokeTestConfig
from config.gpu import GpuConfig
from config.kubernetes import CacheConfig, NamespaceConfig, ProbesConfig, SchedulingConfig, SecurityConfig, ServerConfig
from config.lora import LoraConfig
from config.messages import issue_from_pydantic
from config.model import ModelConfig
from config.multinode import MultinodeConfig
from config.network import NetworkPolicyConfig
from config.observability import AutoscalingConfig, MonitoringConfig
from config.preflight import PreflightConfig
from config.routing import RoutingConfig
from config.secrets import SECRET_KEYS
from config.syntax import Replicas
from config.vllm import VllmConfig


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
    routing: RoutingConfig = Field(
        default_factory=RoutingConfig, description="vLLM's router in front of the replicas (docs/routing.md)."
    )
    lora: LoraConfig = Field(default_factory=LoraConfig, description="LoRA adapters served on the model (docs/lora.md).")
    autoscaling: AutoscalingConfig = Field(default_factory=AutoscalingConfig, description="KEDA autoscaling.")
    monitoring: MonitoringConfig = Field(default_factory=MonitoringConfig, description="Prometheus and Grafana.")
    docker: DockerConfig | None = Field(None, description="The Docker host, for target docker.")
    multinode: MultinodeConfig = Field(
        default_factory=MultinodeConfig, description="A replica across several nodes (engine.nnodes > 1)."
    )
    cluster: ClusterConfig = Field(default_factory=ClusterConfig, description="Cluster profile and fact sources.")
    preflight: PreflightConfig = Field(default_factory=PreflightConfig, description="Preflight policies.")
    cost: CostConfig = Field(default_factory=CostConfig, description="The price of the report's monthly cost.")
    render_yaml_to_directory: str | None = Field(
        None, description="Write Kubernetes manifests to this folder instead of applying them (secrets in plain text)."
    )

    @property
    def served_model_name(self) -> str:
        return self.engine.served_model_name or self.model.id


def parse_config(raw: Mapping[str, Any]) -> StackConfig:
    """Parse the project's config keys (without the `vllm-serving:` prefix) into a StackConfig: the schema only.

    Raises ConfigError listing every unknown key and bad value. The rules between keys run next
    (validation/keys.py validate_config), then those that need the preflight report, the target or the secrets
    (validation.check_stack).
    """
    data = {key: value for key, value in raw.items() if key not in SECRET_KEYS}
    try:
        return StackConfig.model_validate(data)
    except ValidationError as error:
        raise ConfigError([issue_from_pydantic(StackConfig, e) for e in error.errors()]) from None
