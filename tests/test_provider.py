"""Explicit providers: GitOps rendering for Kubernetes, and the Docker host."""

from __future__ import annotations

import json
from typing import Any

from components.provider import docker_provider, kubernetes_provider
from components.stack import build_docker_stack
from config.docker import docker_settings
from config.secrets import StackSecrets
from config.stack import StackConfig
from tests.harness import run_program
from tests.kubernetes_fixtures import plan_of
from validation.keys import validate_config

K8S_PROVIDER = "pulumi:providers:kubernetes"
DOCKER_PROVIDER = "pulumi:providers:docker"


def stack(**overrides: Any) -> StackConfig:
    raw = {"model": {"id": "meta-llama/Llama-3.1-8B-Instruct"}, "gpu": {"product": "L40S"}}
    return validate_config({**raw, **overrides})


def test_no_kubernetes_provider_without_render_yaml_to_directory() -> None:
    found: list[Any] = []

    registered = run_program(lambda: found.append(kubernetes_provider(stack().render_yaml_to_directory)))

    assert (found, registered.resources) == ([None], [])


def test_render_yaml_to_directory_registers_a_rendering_provider() -> None:
    cfg = stack(render_yaml_to_directory="rendered/prod")

    registered = run_program(lambda: kubernetes_provider(cfg.render_yaml_to_directory))

    assert registered.one(K8S_PROVIDER) == {"renderYamlToDirectory": "rendered/prod"}


def test_the_rendering_provider_is_named_render_yaml() -> None:
    registered = run_program(lambda: kubernetes_provider(stack(render_yaml_to_directory="out").render_yaml_to_directory))

    assert registered.named("render-yaml").typ == K8S_PROVIDER


def test_a_docker_stack_has_no_kubernetes_provider() -> None:
    plan = plan_of(stack(target="docker"))

    registered = run_program(lambda: build_docker_stack(plan, StackSecrets()))

    assert [r for r in registered.resources if r.typ == K8S_PROVIDER] == []


def test_the_docker_provider_defaults_to_the_local_socket() -> None:
    registered = run_program(lambda: docker_provider(docker_settings(stack(target="docker").docker)))

    assert registered.one(DOCKER_PROVIDER) == {"host": "unix:///var/run/docker.sock"}


def test_the_docker_provider_passes_ssh_options() -> None:
    cfg = stack(target="docker", docker={"host": "ssh://deploy@gpu-host", "ssh_opts": ["-p", "2222"]})

    registered = run_program(lambda: docker_provider(docker_settings(cfg.docker)))

    # Provider inputs travel as JSON text (Pulumi serializes non-string provider config that way).
    assert json.loads(registered.one(DOCKER_PROVIDER)["sshOpts"]) == ["-p", "2222"]
