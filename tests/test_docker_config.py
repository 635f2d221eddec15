"""The docker group and the rules between it, the target and the Kubernetes-only groups."""

from __future__ import annotations

from typing import Any

import pytest

from config.docker import DockerCacheConfig, DockerConfig, DockerLogOpts
from config.errors import ConfigError
from config.stack import StackConfig
from tests.factories import load_stack_file
from validation.keys import validate_config

MODEL_8B = {"id": "meta-llama/Llama-3.1-8B-Instruct"}


def docker_stack(**overrides: Any) -> dict[str, Any]:
    return {"model": MODEL_8B, "gpu": {"product": "L40S"}, "target": "docker", **overrides}


def problems(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        validate_config(raw)
    return [issue.render() for issue in caught.value.issues]


def test_docker_stack_without_a_docker_group_is_valid() -> None:
    cfg = validate_config(docker_stack())

    assert cfg.docker is None


def test_docker_defaults_are_the_local_socket_all_gpus_and_loopback() -> None:
    docker = DockerConfig()

    assert docker.host == "unix:///var/run/docker.sock"
    assert docker.gpus == "all"
    assert docker.publish_address == "127.0.0.1"
    assert docker.port == 8000
    assert docker.restart == "unless-stopped"
    assert (docker.cache.volume_name, docker.cache.host_path) == ("huggingface-cache", None)
    assert docker.log_opts == DockerLogOpts(max_size="100m", max_file=5)
    assert docker.wait is True


def test_docker_group_on_a_kubernetes_stack_is_rejected() -> None:
    raw = {"model": MODEL_8B, "gpu": {"product": "L40S"}, "docker": {"gpus": "all"}}

    assert problems(raw) == [
        "vllm-serving:docker: is set, but target is 'kubernetes'; the docker group would be ignored. "
        "Fix: set target: docker, or remove vllm-serving:docker."
    ]


def test_more_than_one_replica_is_rejected_on_docker() -> None:
    assert problems(docker_stack(replicas=2)) == [
        "vllm-serving:replicas: is 2, but a docker stack runs one container on one host. "
        "Fix: set replicas: 1 (or remove it), or use target: kubernetes for more replicas."
    ]


def test_autoscaling_set_on_docker_is_rejected_naming_key_and_value() -> None:
    assert problems(docker_stack(autoscaling={"max_replica_count": 8})) == [
        "vllm-serving:autoscaling.max_replica_count: is 8, but autoscaling is Kubernetes-only and target is "
        "'docker'. Fix: remove it; a docker stack runs one container (use target: kubernetes to autoscale)."
    ]


def test_monitoring_set_on_docker_points_at_the_metrics_url_output() -> None:
    assert problems(docker_stack(monitoring={"enabled": True})) == [
        "vllm-serving:monitoring.enabled: is True, but monitoring is Kubernetes-only and target is 'docker'. "
        "Fix: remove it; on docker, point your Prometheus at the metrics_url stack output."
    ]


def test_cache_pvc_settings_on_docker_point_at_the_docker_cache_keys() -> None:
    assert problems(docker_stack(cache={"size_gib": 200})) == [
        "vllm-serving:cache.size_gib: is 200.0, but cache is Kubernetes-only and target is 'docker'. "
        "Fix: remove it, and set docker.cache.volume_name or docker.cache.host_path instead."
    ]


def test_an_empty_namespace_group_on_docker_is_still_rejected() -> None:
    assert problems(docker_stack(namespace={})) == [
        "vllm-serving:namespace: is {}, but namespace is Kubernetes-only and target is 'docker'. "
        "Fix: remove it; a Docker host has no namespaces."
    ]


def test_scheduling_set_on_docker_is_rejected() -> None:
    assert problems(docker_stack(scheduling={"spread": "none"})) == [
        "vllm-serving:scheduling.spread: is 'none', but scheduling is Kubernetes-only and target is 'docker'. "
        "Fix: remove it; one host has no nodes to spread over."
    ]


def test_gpu_node_selector_on_docker_is_rejected() -> None:
    gpu = {"product": "L40S", "node_selector": {"pool": "gpu"}}

    assert problems(docker_stack(gpu=gpu)) == [
        "vllm-serving:gpu.node_selector: is {'pool': 'gpu'}, but it is Kubernetes-only and target is 'docker'. "
        "Fix: remove it; there are no nodes to select on one Docker host."
    ]


def test_gpu_also_accept_on_docker_is_rejected_showing_the_list() -> None:
    gpu = {"product": "L40S", "also_accept": ["H100-80GB-HBM3"]}

    assert problems(docker_stack(gpu=gpu)) == [
        "vllm-serving:gpu.also_accept: is ['H100-80GB-HBM3'], but it is Kubernetes-only and target is 'docker'. "
        "Fix: remove it; the host's GPUs are one known product (set gpu.product to it)."
    ]


def test_image_pull_policy_on_docker_is_rejected() -> None:
    vllm = {"image_pull_policy": "Always"}

    assert problems(docker_stack(vllm=vllm)) == [
        "vllm-serving:vllm.image_pull_policy: is 'Always', but it is Kubernetes-only and target is 'docker'. "
        "Fix: remove it; the image is pulled once (change vllm.tag or vllm.digest to re-pull)."
    ]


def test_render_yaml_to_directory_on_docker_is_rejected() -> None:
    assert problems(docker_stack(render_yaml_to_directory="rendered")) == [
        "vllm-serving:render_yaml_to_directory: is 'rendered', but render_yaml_to_directory is Kubernetes-only and "
        "target is 'docker'. Fix: remove it; it renders Kubernetes manifests."
    ]


def test_autoscaling_enabled_on_docker_is_reported_once() -> None:
    keys = [line.split(":")[1] for line in problems(docker_stack(autoscaling={"enabled": True}))]

    assert keys.count("autoscaling.enabled") == 1


def test_kubernetes_only_server_keys_are_rejected_on_docker() -> None:
    assert problems(docker_stack(server={"port": 9000, "cpu": "8"})) == [
        "vllm-serving:server.cpu: is '8', but server is Kubernetes-only and target is 'docker'. "
        "Fix: remove it; on docker only server.port and server.shm_size_gib apply."
    ]


def test_kubernetes_only_probe_keys_are_rejected_on_docker() -> None:
    assert problems(docker_stack(probes={"liveness_period_seconds": 60})) == [
        "vllm-serving:probes.liveness_period_seconds: is 60, but probes is Kubernetes-only and target is 'docker'. "
        "Fix: remove it; Docker runs one health check, whose start period is the startup budget."
    ]


def test_pod_security_keys_are_rejected_on_docker() -> None:
    assert problems(docker_stack(security={"run_as_user": 1000})) == [
        "vllm-serving:security.run_as_user: is 1000, but security is Kubernetes-only and target is 'docker'. "
        "Fix: remove it; on docker only security.require_api_key applies (the image runs as root, docs/sources.md §A.6)."
    ]


def test_every_kubernetes_only_problem_is_reported_together() -> None:
    raw = docker_stack(replicas=3, namespace={"name": "llm"}, autoscaling={"polling_interval": 10, "max_replica_count": 8})

    assert [line.split(":")[1] for line in problems(raw)] == [
        "namespace.name",
        "autoscaling.max_replica_count",
        "autoscaling.polling_interval",
        "replicas",
    ]


def test_groups_shared_with_kubernetes_are_accepted_on_docker() -> None:
    raw = docker_stack(
        probes={"load_throughput_gib_per_s": 2.0, "startup_seconds": 900},
        server={"port": 9000, "shm_size_gib": 4},
        security={"require_api_key": True},
        preflight={"min_margin_percent": 10},
    )

    cfg = validate_config(raw)

    assert (cfg.server.port, cfg.probes.startup_seconds, cfg.server.shm_size_gib) == (9000, 900, 4.0)


def test_device_list_must_match_gpus_per_replica() -> None:
    raw = docker_stack(engine={"tensor_parallel_size": 4}, docker={"gpus": [0, 1]})

    assert problems(raw) == [
        "vllm-serving:docker.gpus: is [0, 1] (2 GPUs), but engine.tensor_parallel_size x "
        "engine.pipeline_parallel_size = 4. Fix: list exactly 4 device ids, or set gpus: all."
    ]


def test_device_list_matching_tensor_parallel_size_is_accepted() -> None:
    raw = docker_stack(engine={"tensor_parallel_size": 2}, docker={"gpus": [2, "GPU-3a23c669"]})

    assert validate_config(raw).docker.gpus == (2, "GPU-3a23c669")  # type: ignore[union-attr]


def test_all_gpus_on_a_host_with_more_gpus_than_a_replica_uses_is_rejected() -> None:
    raw = docker_stack(gpu={"product": "L40S", "gpus_per_node": 8})

    assert problems(raw) == [
        "vllm-serving:docker.gpus: is 'all', which gives the container the host's 8 GPUs (gpu.gpus_per_node), "
        "but one replica uses 1. Fix: list 1 device id, e.g. gpus: [0]."
    ]


def test_gpus_written_as_a_comma_string_is_rejected() -> None:
    assert problems(docker_stack(docker={"gpus": "0,1"})) == [
        "vllm-serving:docker.gpus: gpus '0,1' is not `all` or a list. Fix: write gpus: all, or gpus: [0, 1]."
    ]


def test_duplicate_device_ids_are_rejected() -> None:
    assert problems(docker_stack(docker={"gpus": [0, 0]})) == [
        "vllm-serving:docker.gpus: gpus [0, 0] must list distinct device ids. Fix: e.g. gpus: [0, 1, 2, 3]."
    ]


def test_publishing_on_every_interface_without_an_api_key_is_rejected() -> None:
    assert problems(docker_stack(docker={"publish_address": "0.0.0.0"})) == [
        "vllm-serving:docker.publish_address: is '0.0.0.0': every network the host is on could use the model, "
        "and security.require_api_key is false. Fix: set security.require_api_key: true (and the api_key "
        "secret), or publish on 127.0.0.1."
    ]


def test_publishing_on_every_interface_with_an_api_key_is_accepted() -> None:
    raw = docker_stack(docker={"publish_address": "0.0.0.0"}, security={"require_api_key": True})

    assert validate_config(raw).docker.publish_address == "0.0.0.0"  # type: ignore[union-attr]


def test_publish_address_must_be_an_ip_address() -> None:
    assert problems(docker_stack(docker={"publish_address": "gpu-host"})) == [
        "vllm-serving:docker.publish_address: publish_address 'gpu-host' is not an IP address. "
        "Fix: use 127.0.0.1, or the host's LAN address."
    ]


def test_a_tcp_docker_host_is_rejected() -> None:
    assert problems(docker_stack(docker={"host": "tcp://gpu-host:2375"})) == [
        "vllm-serving:docker.host: host 'tcp://gpu-host:2375' is neither a local socket nor an SSH address. "
        "Fix: use unix:///var/run/docker.sock or ssh://user@gpu-host."
    ]


def test_a_relative_cache_host_path_is_rejected() -> None:
    assert problems(docker_stack(docker={"cache": {"host_path": "hf-cache"}})) == [
        "vllm-serving:docker.cache.host_path: host_path 'hf-cache' is relative; Docker resolves bind mounts on "
        "the host. Fix: give an absolute path such as /data/hf-cache."
    ]


def test_cache_host_path_and_volume_name_together_are_rejected() -> None:
    cache = {"host_path": "/data/hf", "volume_name": "hf"}

    assert problems(docker_stack(docker={"cache": cache})) == [
        "vllm-serving:docker.cache: both volume_name ('hf') and host_path ('/data/hf') are set. Fix: keep one of them."
    ]


def test_an_unknown_docker_key_is_rejected_with_a_suggestion() -> None:
    assert problems(docker_stack(docker={"publish_adress": "127.0.0.1"}))[0].startswith(
        "vllm-serving:docker.publish_adress: unknown key (did you mean `publish_address`?)."
    )


@pytest.mark.parametrize("model", [DockerConfig, DockerCacheConfig, DockerLogOpts])
def test_every_docker_field_has_a_description(model: type[StackConfig]) -> None:
    assert [name for name, info in model.model_fields.items() if not info.description] == []


@pytest.mark.parametrize("stack", ["docker-70b", "docker-8b"])
def test_docker_stack_files_load_as_docker_stacks(stack: str) -> None:
    cfg = load_stack_file(f"stacks/Pulumi.{stack}.yaml")

    assert (cfg.target, cfg.docker is not None, cfg.replicas) == ("docker", True, 1)
