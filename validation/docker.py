"""Rules between the `docker` group, the target and the Kubernetes-only groups: a docker stack rejects every
Kubernetes-only key the user sets, naming it and what to do instead."""

from __future__ import annotations

import ipaddress
from typing import Any

from config.base import ConfigGroup
from config.docker import docker_settings
from config.errors import ConfigIssue, show
from config.stack import StackConfig


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
    docker = docker_settings(cfg.docker)
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
    address = docker_settings(cfg.docker).publish_address
    if not ipaddress.ip_address(address).is_unspecified or cfg.security.require_api_key:
        return []
    return [
        ConfigIssue(
            "docker.publish_address",
            f"is {show(address)}: every network the host is on could use the model, and security.require_api_key is false.",
            "set security.require_api_key: true (and the api_key secret), or publish on 127.0.0.1.",
        )
    ]
