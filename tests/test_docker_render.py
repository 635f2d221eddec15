"""The vLLM container spec for a Docker host, rendered without the Pulumi engine."""

from __future__ import annotations

import csv
import math
from dataclasses import replace
from typing import Any

from components.render.delivery import compile_cache_env
from components.render.docker import (
    CACHE_PATH,
    HF_TOKEN_FILE,
    base_url,
    metrics_url,
    render_container,
    render_env,
    shm_size_mib,
    wait_timeout_s,
)
from config.docker import docker_settings
from config.stack import StackConfig
from plan.names import HF_HOME
from plan.server import ServerPlan
from tests.kubernetes_fixtures import plan_of
from validation.keys import validate_config

ARGS = ["meta-llama/Llama-3.1-8B-Instruct", "--port", "8000"]


def stack(**overrides: Any) -> StackConfig:
    raw = {"model": {"id": "meta-llama/Llama-3.1-8B-Instruct"}, "gpu": {"product": "L40S"}, "target": "docker"}
    return validate_config({**raw, **overrides})


def server(cfg: StackConfig) -> ServerPlan:
    return plan_of(cfg).server


def container(cfg: StackConfig | None = None, start_period_s: int = 600, with_hf_token: bool = False) -> dict[str, Any]:
    """The container of a server whose arguments, environment and start period are stubbed."""
    stub = replace(server(cfg or stack()), args=tuple(ARGS), env={"VLLM_LOGGING_LEVEL": "INFO"}, extra_env={})
    return render_container(replace(stub, startup_seconds=start_period_s), with_hf_token)


def stub_envs(*extra: str) -> list[str]:
    """The stub's environment as Docker gets it: plus the compile caches and online downloads, sorted."""
    env = {"VLLM_LOGGING_LEVEL": "INFO", **compile_cache_env(), "HF_HUB_OFFLINE": "0"}
    return sorted([*(f"{key}={value}" for key, value in env.items()), *extra])


def test_entrypoint_is_vllm_serve_whatever_the_image_sets() -> None:
    assert container()["entrypoints"] == ["vllm", "serve"]


def test_command_is_exactly_the_shared_vllm_arguments() -> None:
    assert container()["command"] == ARGS


def test_container_name_defaults_to_vllm() -> None:
    assert container()["name"] == "vllm"


def test_all_gpus_are_requested_by_default() -> None:
    assert container()["gpus"] == "all"


def test_a_device_list_becomes_docker_device_syntax_quoted_for_its_csv_parser() -> None:
    cfg = stack(engine={"tensor_parallel_size": 2}, docker={"gpus": [1, 3]})

    assert container(cfg)["gpus"] == '"device=1,3"'


def test_a_device_list_reads_as_one_gpu_request_field_as_docker_parses_it() -> None:
    # docker/cli opts.GpuOpts.Set (which terraform-provider-docker calls) reads the value as one CSV record;
    # a second field would be taken as a GPU count, and Count plus DeviceIDs is refused by the NVIDIA runtime.
    cfg = stack(engine={"tensor_parallel_size": 4}, gpu={"product": "L40S", "count": 4}, docker={"gpus": [0, 1, 2, 3]})

    assert next(csv.reader([container(cfg)["gpus"]])) == ["device=0,1,2,3"]


def test_shared_memory_is_2_gib_per_tensor_parallel_gpu() -> None:
    assert shm_size_mib(server(stack(engine={"tensor_parallel_size": 4})).resources.shm_gib) == 8192


def test_server_shm_size_gib_overrides_the_shared_memory_default() -> None:
    assert container(stack(server={"shm_size_gib": 1.5}))["shm_size"] == 1536


def test_port_is_published_on_loopback_by_default() -> None:
    assert container()["ports"] == [{"internal": 8000, "external": 8000, "ip": "127.0.0.1", "protocol": "tcp"}]


def test_published_host_port_and_container_port_are_separate_keys() -> None:
    cfg = stack(server={"port": 9000}, docker={"port": 18000, "publish_address": "10.0.0.5"})

    assert container(cfg)["ports"] == [{"internal": 9000, "external": 18000, "ip": "10.0.0.5", "protocol": "tcp"}]


def test_cache_is_a_named_volume_at_hf_home_by_default() -> None:
    assert container()["volumes"] == [{"container_path": HF_HOME, "volume_name": "huggingface-cache"}]


def test_cache_host_path_is_bind_mounted_at_hf_home() -> None:
    cfg = stack(docker={"cache": {"host_path": "/data/hf"}})

    assert container(cfg)["volumes"] == [{"container_path": CACHE_PATH, "host_path": "/data/hf"}]


def test_env_points_hf_token_path_at_the_uploaded_file_when_a_token_is_set() -> None:
    assert container(with_hf_token=True)["envs"] == stub_envs(f"HF_TOKEN_PATH={HF_TOKEN_FILE}")


def test_env_has_no_token_path_without_a_token() -> None:
    assert container()["envs"] == stub_envs()


def test_env_is_the_kubernetes_env_but_online_for_the_first_download() -> None:
    planned = server(stack())

    assert render_env(planned) == {**planned.env, **compile_cache_env(), "HF_HUB_OFFLINE": "0"}


def test_restart_policy_is_unless_stopped() -> None:
    assert container()["restart"] == "unless-stopped"


def test_health_check_gets_health_on_the_server_port_with_python() -> None:
    check = container(stack(server={"port": 9000}))["healthcheck"]

    assert check["tests"] == [
        "CMD",
        "python3",
        "-c",
        "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9000/health', timeout=5)",
    ]


def test_health_check_start_period_is_the_startup_budget() -> None:
    assert container(start_period_s=1234)["healthcheck"]["start_period"] == "1234s"


def test_health_check_cadence_after_the_start_period() -> None:
    check = container()["healthcheck"]

    assert (check["interval"], check["timeout"], check["retries"]) == ("30s", "5s", 3)


def test_logs_rotate_with_json_file_max_size_and_max_file() -> None:
    spec = container(stack(docker={"log_opts": {"max_size": "50m", "max_file": 3}}))

    assert (spec["log_driver"], spec["log_opts"]) == ("json-file", {"max-size": "50m", "max-file": "3"})


def test_pulumi_waits_for_healthy_past_the_start_period() -> None:
    spec = container(start_period_s=600)

    assert (spec["wait"], spec["wait_timeout"]) == (True, 600 + 3 * 30 + 5)


def test_wait_timeout_adds_the_checks_that_turn_a_container_unhealthy() -> None:
    assert wait_timeout_s(100) == 195


def test_no_secret_is_rendered_into_the_plain_spec() -> None:
    assert not [key for key in container(with_hf_token=True) if key in ("uploads", "image")]


def test_startup_seconds_add_the_first_download_times_the_safety_factor() -> None:
    slow, fast = plan_of(stack()), plan_of(stack(docker={"cache": {"download_throughput_gib_per_s": 1000}}))
    weights = slow.delivery.weights_on_disk_gib

    difference = slow.server.startup_seconds - fast.server.startup_seconds

    assert difference == math.ceil(weights / 0.1 * 1.5) - math.ceil(weights / 1000 * 1.5)


def test_startup_seconds_override_is_used_as_is() -> None:
    cfg = stack(probes={"startup_seconds": 900})

    assert server(cfg).startup_seconds == 900


def test_metrics_url_is_the_published_address_and_port() -> None:
    assert metrics_url(docker_settings(stack(docker={"port": 18000}).docker)) == "http://127.0.0.1:18000/metrics"


def test_an_ipv6_publish_address_is_bracketed_in_the_url() -> None:
    assert base_url(docker_settings(stack(docker={"publish_address": "::1"}).docker)) == "http://[::1]:8000"
