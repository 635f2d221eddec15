"""`docker`: a single GPU host through the Docker API (target: docker).

Field names follow pulumi-docker's `Container`/`Provider` arguments (pulumi_docker 5.2.0 `container.py`,
`provider.py`), in snake_case. A docker stack shares the model, gpu, engine, vllm and preflight groups with
Kubernetes stacks, and a few keys of probes, server and security; `cross_checks` rejects every other key
the user sets, naming it and what to do instead.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, PositiveFloat, field_validator, model_validator

from config.base import ConfigGroup
from config.errors import ConfigIssue, show
from config.syntax import NonNegativeInt, PositiveInt

if TYPE_CHECKING:
    from config.stack import StackConfig

# Docker's rule for container and volume names (daemon/names.go: RestrictedNameChars).
DOCKER_NAME = r"^[a-zA-Z0-9][a-zA-Z0-9_.-]+$"
# Hosts the docker.Provider can reach without extra TLS material: the local socket or SSH.
HOST_SCHEMES = ("unix://", "ssh://")


class DockerCacheConfig(ConfigGroup):
    """Where the Hugging Face cache (mounted at HF_HOME in the container) lives on the host."""

    volume_name: str = Field(
        "huggingface-cache",
        pattern=DOCKER_NAME,
        description="Named Docker volume for the cache; kept on `pulumi destroy` so a redeploy does not re-download.",
    )
    host_path: str | None = Field(
        None, description="Bind-mount this absolute host folder instead of the named volume, e.g. /data/hf-cache."
    )
    download_throughput_gib_per_s: PositiveFloat = Field(
        0.1,
        description="Expected download speed at the first start (on docker vLLM downloads the weights itself); "
        "added to the health check's start period.",
    )

    @field_validator("host_path")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("/"):
            raise ValueError(
                f"host_path {show(value)} is relative; Docker resolves bind mounts on the host. "
                "Fix: give an absolute path such as /data/hf-cache."
            )
        return value

    @model_validator(mode="after")
    def _one_source(self) -> DockerCacheConfig:
        if self.host_path is not None and "volume_name" in self.model_fields_set:
            raise ValueError(
                f"both volume_name ({show(self.volume_name)}) and host_path ({show(self.host_path)}) are set. "
                "Fix: keep one of them."
            )
        return self


class DockerLogOpts(ConfigGroup):
    """Options of the json-file log driver (`docker run --log-opt`); Docker's default keeps logs forever."""

    max_size: str = Field("100m", pattern=r"^[1-9][0-9]*[kmg]$", description="json-file max-size, e.g. 100m.")
    max_file: PositiveInt = Field(5, description="json-file max-file: rotated files kept.")


class DockerConfig(ConfigGroup):
    """The Docker host and how the vLLM container runs and is published on it."""

    host: str = Field(
        "unix:///var/run/docker.sock",
        description="Docker host: the local socket, or ssh://user@gpu-host (pulumi-docker `host`).",
    )
    ssh_opts: tuple[str, ...] = Field((), description="Extra ssh flags for an ssh:// host (pulumi-docker `ssh_opts`).")
    container_name: str = Field("vllm", pattern=DOCKER_NAME, description="Container name (`docker logs <name>`).")
    gpus: Literal["all"] | tuple[NonNegativeInt | str, ...] = Field(
        "all", description="`all`, or the device ids/UUIDs one replica uses (as many as GPUs per replica)."
    )
    publish_address: str = Field(
        "127.0.0.1", description="Host address the port is published on; 127.0.0.1 keeps the API off the network."
    )
    port: int = Field(8000, gt=0, le=65535, description="Host port published for the container's server.port.")
    restart: Literal["no", "on-failure", "always", "unless-stopped"] = Field(
        "unless-stopped", description="Restart policy (`docker run --restart`)."
    )
    wait: bool = Field(True, description="`pulumi up` waits until /health passes, up to the startup budget.")
    cache: DockerCacheConfig = Field(default_factory=DockerCacheConfig, description="Hugging Face cache on the host.")
    log_opts: DockerLogOpts = Field(default_factory=DockerLogOpts, description="json-file log rotation.")

    @field_validator("host")
    @classmethod
    def _known_scheme(cls, value: str) -> str:
        if not value.startswith(HOST_SCHEMES):
            raise ValueError(
                f"host {show(value)} is neither a local socket nor an SSH address. "
                "Fix: use unix:///var/run/docker.sock or ssh://user@gpu-host."
            )
        return value

    @field_validator("gpus", mode="before")
    @classmethod
    def _gpus_shape(cls, value: Any) -> Any:
        if isinstance(value, str) and value != "all":
            raise ValueError(f"gpus {show(value)} is not `all` or a list. Fix: write gpus: all, or gpus: [0, 1].")
        if isinstance(value, list | tuple) and (not value or len(set(map(str, value))) != len(value)):
            raise ValueError(f"gpus {list(value)} must list distinct device ids. Fix: e.g. gpus: [0, 1, 2, 3].")
        return value

    @field_validator("publish_address")
    @classmethod
    def _ip_address(cls, value: str) -> str:
        try:
            ipaddress.ip_address(value)
        except ValueError:
            raise ValueError(
                f"publish_address {show(value)} is not an IP address. Fix: use 127.0.0.1, or the host's LAN address."
            ) from None
        return value


def docker_settings(cfg: StackConfig) -> DockerConfig:
    """The docker group of a docker stack, with every default when the stack file leaves it out."""
    return cfg.docker or DockerConfig()


def cross_checks(cfg: StackConfig) -> list[ConfigIssue]:
    """Rules between the docker group, the target and the Kubernetes-only groups."""
    if cfg.target != "docker":
        if cfg.docker is None:
            return []
        return [
            ConfigIssue(
                "docker",
                f"is set, but target is {show(cfg.target)}; the docker group would be ignored.",
                "set target: docker, or remove vllm-serving:docker.",
            )
        ]
    return _kubernetes_only(cfg) + _single_host(cfg) + _gpu_devices(cfg) + _exposure(cfg)


# Top-level keys a docker stack uses. Any other key the user sets is Kubernetes-only: failing closed means a
# group added later for Kubernetes is rejected on docker rather than silently ignored.
_DOCKER_KEYS = frozenset(
    {
        "model",
        "gpu",
        "engine",
        "vllm",
        "replicas",
        "target",
        "probes",
        "server",
        "security",
        "docker",
        "preflight",
        "smoke_test",
    }
)
# Groups shared with Kubernetes, and the only keys of each that mean something on one Docker host.
_DOCKER_KEYS_IN_SHARED_GROUPS: dict[str, frozenset[str]] = {
    "server": frozenset({"port", "shm_size_gib"}),
    "probes": frozenset(
        {
            "load_throughput_gib_per_s",
            "engine_start_seconds",
            "per_gpu_start_seconds",
            "cuda_graph_capture_seconds",
            "safety_factor",
            "startup_seconds",
        }
    ),
    "security": frozenset({"require_api_key"}),
}
_K8S_ONLY_KEYS: dict[tuple[str, str], str] = {
    ("gpu", "node_selector"): "remove it; there are no nodes to select on one Docker host.",
    ("gpu", "also_accept"): "remove it; the host's GPUs are one known product (set gpu.product to it).",
    ("vllm", "image_pull_policy"): "remove it; the image is pulled once (change vllm.tag or vllm.digest to re-pull).",
}
# What to do instead, per Kubernetes-only key or group.
_FIXES: dict[str, str] = {
    "namespace": "remove it; a Docker host has no namespaces.",
    "scheduling": "remove it; one host has no nodes to spread over.",
    "cache": "remove it, and set docker.cache.volume_name or docker.cache.host_path instead.",
    "delivery": "remove it; a Docker host reads the weights from docker.cache.",
    "autoscaling": "remove it; a docker stack runs one container (use target: kubernetes to autoscale).",
    "monitoring": "remove it; on docker, point your Prometheus at the metrics_url stack output.",
    "render_yaml_to_directory": "remove it; it renders Kubernetes manifests.",
    "server": "remove it; on docker only server.port and server.shm_size_gib apply.",
    "probes": "remove it; Docker runs one health check, whose start period is the startup budget.",
    "security": "remove it; on docker only security.require_api_key applies (the image runs as root, docs/sources.md §A.6).",
}
_DEFAULT_FIX = "remove it; target docker does not use it."
# Keys whose Kubernetes concept has a Docker counterpart the program already sets, or none.
_KEY_FIXES: dict[tuple[str, str], str] = {
    ("scheduling", "runtime_class_name"): "remove it; on docker the GPUs reach the container through docker.gpus "
    "(Docker's --gpus device requests), which needs no runtime class.",
    ("scheduling", "priority_class_name"): "remove it; one Docker host has no pod priorities.",
    ("server", "image_pull_secrets"): "remove it; on docker the image is pulled with the Docker provider's "
    "registry credentials (docker login where pulumi runs).",
}


def _kubernetes_only(cfg: StackConfig) -> list[ConfigIssue]:
    """One issue per Kubernetes-only key the user wrote; defaults are never an error (model_fields_set)."""
    issues: list[ConfigIssue] = []
    for group in (name for name in type(cfg).model_fields if name in cfg.model_fields_set):
        value = getattr(cfg, group)
        if group in _DOCKER_KEYS_IN_SHARED_GROUPS:
            keys = sorted(value.model_fields_set - _DOCKER_KEYS_IN_SHARED_GROUPS[group])
        elif group in _DOCKER_KEYS:
            continue
        elif isinstance(value, ConfigGroup):
            keys = sorted(value.model_fields_set) or [""]
        else:
            keys = [""]
        issues += [_k8s_only_issue(cfg, group, key) for key in keys if not _reported_elsewhere(cfg, group, key)]
    for (group, key), fix in _K8S_ONLY_KEYS.items():
        if key in getattr(cfg, group).model_fields_set:
            issues.append(
                ConfigIssue(
                    f"{group}.{key}",
                    f"is {_shown(getattr(getattr(cfg, group), key))}, but it is Kubernetes-only and target is 'docker'.",
                    fix,
                )
            )
    return issues


def _k8s_only_issue(cfg: StackConfig, group: str, key: str) -> ConfigIssue:
    value = getattr(cfg, group)
    shown = _shown(getattr(value, key)) if key else ("{}" if isinstance(value, ConfigGroup) else _shown(value))
    return ConfigIssue(
        f"{group}.{key}" if key else group,
        f"is {shown}, but {group} is Kubernetes-only and target is 'docker'.",
        _KEY_FIXES.get((group, key), _FIXES.get(group, _DEFAULT_FIX)),
    )


def _reported_elsewhere(cfg: StackConfig, group: str, key: str) -> bool:
    # observability.cross_checks already rejects autoscaling.enabled: true on any target but kubernetes.
    return (group, key) == ("autoscaling", "enabled") and cfg.autoscaling.enabled


def _shown(value: Any) -> str:
    """A value as the user typed it: YAML lists arrive as tuples in the frozen models."""
    return show(list(value) if isinstance(value, tuple) else value)


def _single_host(cfg: StackConfig) -> list[ConfigIssue]:
    if cfg.replicas == 1:
        return []
    return [
        ConfigIssue(
            "replicas",
            f"is {cfg.replicas}, but a docker stack runs one container on one host.",
            "set replicas: 1 (or remove it), or use target: kubernetes for more replicas.",
        )
    ]


def _gpu_devices(cfg: StackConfig) -> list[ConfigIssue]:
    docker = docker_settings(cfg)
    per_replica = cfg.engine.gpus_per_replica
    ids = f"{per_replica} device id{'s' if per_replica > 1 else ''}"
    if docker.gpus == "all":
        on_host = cfg.gpu.gpus_per_node
        if on_host is not None and on_host != per_replica:
            return [
                ConfigIssue(
                    "docker.gpus",
                    f"is 'all', which gives the container the host's {on_host} GPUs "
                    f"(gpu.gpus_per_node), but one replica uses {per_replica}.",
                    f"list {ids}, e.g. gpus: {list(range(per_replica))}.",
                )
            ]
        return []
    if len(docker.gpus) != per_replica:
        return [
            ConfigIssue(
                "docker.gpus",
                f"is {list(docker.gpus)} ({len(docker.gpus)} GPUs), but "
                f"engine.tensor_parallel_size x engine.pipeline_parallel_size = {per_replica}.",
                f"list exactly {ids}, or set gpus: all.",
            )
        ]
    return []


def _exposure(cfg: StackConfig) -> list[ConfigIssue]:
    address = docker_settings(cfg).publish_address
    if not ipaddress.ip_address(address).is_unspecified or cfg.security.require_api_key:
        return []
    return [
        ConfigIssue(
            "docker.publish_address",
            f"is {show(address)}: every network the host is on could use the model, and security.require_api_key is false.",
            "set security.require_api_key: true (and the api_key secret), or publish on 127.0.0.1.",
        )
    ]
