"""The docker target under Pulumi mocks: the image, the cache volume, the container and its provider."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pulumi
import pytest

from components.docker_host import TYPE_TOKEN
from components.render.docker import HF_TOKEN_FILE
from components.stack import build_docker_stack
from config.secrets import StackSecrets
from config.stack import StackConfig
from plan.names import HF_HOME
from plan.sizing import resolve_sizing
from tests import harness
from tests.factories import load_stack_file
from tests.harness import Registered, resolve
from tests.kubernetes_fixtures import plan_of
from validation.keys import validate_config

CONTAINER = "docker:index/container:Container"
IMAGE = "docker:index/remoteImage:RemoteImage"
VOLUME = "docker:index/volume:Volume"
PROVIDER = "pulumi:providers:docker"
SECRET_SIG = "4dabf18193072939515e22adb298388d"  # how mocks see a secret input (pulumi rpc.py _special_sig_key)
ROOT = Path(__file__).resolve().parent.parent


class DockerMocks(harness.RecordingMocks):
    """Adds the one computed output the container needs: the pulled image's id."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        resource_id, state = super().new_resource(args)
        if args.typ == IMAGE:
            state["imageId"] = "sha256:feedface"
        return resource_id, state


@pytest.fixture(autouse=True)
def docker_mocks(monkeypatch: pytest.MonkeyPatch) -> list[DockerMocks]:
    made: list[DockerMocks] = []

    def make() -> DockerMocks:
        made.append(DockerMocks())
        return made[-1]

    monkeypatch.setattr(harness, "RecordingMocks", make)
    return made


def docker_stack(**overrides: Any) -> StackConfig:
    # The smoke-test container is off here (tests/test_smoke_docker.py covers it), so `one(CONTAINER)` is vLLM's.
    raw = {
        "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
        "gpu": {"product": "L40S"},
        "target": "docker",
        "smoke_test": {"enabled": False},
    }
    return validate_config({**raw, **overrides})


def deploy(cfg: StackConfig, secrets: StackSecrets | None = None) -> tuple[Registered, dict[str, Any]]:
    outputs: dict[str, Any] = {}

    def build() -> None:
        outputs.update(build_docker_stack(plan_of(cfg, "vllm"), secrets or StackSecrets()))

    registered = harness.run_program(build)
    return registered, {name: resolve(value) for name, value in outputs.items()}


def container_of(cfg: StackConfig, secrets: StackSecrets | None = None) -> dict[str, Any]:
    return deploy(cfg, secrets)[0].one(CONTAINER)


def unwrap_secret(value: dict[str, Any]) -> Any:
    assert value.get(SECRET_SIG) is not None, f"expected a secret, got {value!r}"
    return value["value"]


def token_secrets() -> StackSecrets:
    return StackSecrets(hf_token=pulumi.Output.secret("hf_example"))


def test_the_pinned_vllm_image_is_pulled_and_kept_on_the_host() -> None:
    image = deploy(docker_stack(vllm={"version": "0.33.0"}))[0].one(IMAGE)

    assert image == {"name": "vllm/vllm-openai:v0.33.0", "keepLocally": True}


def test_the_container_runs_the_pulled_image_id() -> None:
    assert container_of(docker_stack())["image"] == "sha256:feedface"


def test_the_container_command_is_the_plans_vllm_args_for_the_stack() -> None:
    cfg = docker_stack(engine={"max_model_len": 8192})

    assert container_of(cfg)["command"] == list(plan_of(cfg).server.args)


def test_the_container_entrypoint_is_vllm_serve() -> None:
    assert container_of(docker_stack())["entrypoints"] == ["vllm", "serve"]


def test_the_container_requests_the_listed_gpus() -> None:
    cfg = docker_stack(gpu={"product": "L40S", "count": 2}, engine={"tensor_parallel_size": 2}, docker={"gpus": [0, 1]})

    assert container_of(cfg)["gpus"] == '"device=0,1"'


def test_the_container_shared_memory_is_sized_for_tensor_parallel() -> None:
    cfg = docker_stack(gpu={"product": "L40S", "count": 2}, engine={"tensor_parallel_size": 2})

    assert container_of(cfg)["shmSize"] == 4096


def test_the_container_port_is_published_on_loopback() -> None:
    assert container_of(docker_stack())["ports"] == [
        {"internal": 8000.0, "external": 8000.0, "ip": "127.0.0.1", "protocol": "tcp"}
    ]


def test_the_container_mounts_the_named_cache_volume_at_hf_home() -> None:
    assert container_of(docker_stack())["volumes"] == [{"containerPath": HF_HOME, "volumeName": "huggingface-cache"}]


def test_the_named_cache_volume_is_created() -> None:
    assert deploy(docker_stack())[0].one(VOLUME) == {"name": "huggingface-cache"}


def test_no_volume_is_created_for_a_host_path_cache() -> None:
    registered = deploy(docker_stack(docker={"cache": {"host_path": "/data/hf"}}))[0]

    assert registered.of_type(VOLUME) == []


def test_the_container_restarts_unless_stopped() -> None:
    assert container_of(docker_stack())["restart"] == "unless-stopped"


def test_the_health_check_start_period_is_the_computed_startup_budget() -> None:
    cfg = docker_stack()

    assert container_of(cfg)["healthcheck"]["startPeriod"] == f"{plan_of(cfg).server.startup_seconds}s"


def test_the_container_logs_rotate() -> None:
    spec = container_of(docker_stack())

    assert (spec["logDriver"], spec["logOpts"]) == ("json-file", {"max-size": "100m", "max-file": "5"})


def test_the_hf_token_is_uploaded_as_a_secret_file() -> None:
    uploads = unwrap_secret(container_of(docker_stack(), token_secrets())["uploads"])

    assert uploads == [{"file": HF_TOKEN_FILE, "content": "hf_example", "permissions": "0400"}]


def test_the_hf_token_never_appears_in_the_environment() -> None:
    envs = container_of(docker_stack(), token_secrets())["envs"]

    assert [env for env in envs if "hf_example" in env or env.startswith("HF_TOKEN=")] == []


def test_without_an_hf_token_nothing_is_uploaded() -> None:
    assert "uploads" not in container_of(docker_stack())


def test_the_api_key_reaches_vllm_as_a_secret_env() -> None:
    cfg = docker_stack(security={"require_api_key": True})
    envs = unwrap_secret(container_of(cfg, StackSecrets(api_key=pulumi.Output.secret("sk-1")))["envs"])

    assert "VLLM_API_KEY=sk-1" in envs


def test_the_docker_provider_connects_to_the_configured_host() -> None:
    registered = deploy(docker_stack(docker={"host": "ssh://deploy@gpu-host"}))[0]

    assert registered.one(PROVIDER) == {"host": "ssh://deploy@gpu-host"}


@pytest.mark.parametrize("typ", [IMAGE, VOLUME, CONTAINER])
def test_every_docker_resource_uses_the_explicit_provider(typ: str) -> None:
    registered = deploy(docker_stack())[0]

    assert str(registered.of_type(typ)[0].provider).split("::")[-2:] == ["docker-host", "docker-host-id"]


def test_the_container_is_a_child_of_the_docker_host_component() -> None:
    registered = deploy(docker_stack())[0]

    assert registered.of_type(TYPE_TOKEN)[0].name == "vllm"
    assert registered.named("vllm-server").typ == CONTAINER


def test_a_docker_stack_registers_no_kubernetes_resources() -> None:
    registered = deploy(docker_stack())[0]

    assert [typ for typ in registered.types if "kubernetes" in typ] == []


def test_the_stack_outputs_say_where_metrics_are() -> None:
    outputs = deploy(docker_stack(docker={"port": 18000}))[1]

    assert (outputs["url"], outputs["metricsUrl"]) == ("http://127.0.0.1:18000", "http://127.0.0.1:18000/metrics")


def kubernetes_twin(cfg: StackConfig) -> StackConfig:
    """The same model, GPUs and engine on Kubernetes."""
    raw = cfg.model_dump(exclude={"docker", "target"}, exclude_unset=True)
    return validate_config(raw)


@pytest.mark.parametrize("stack", ["docker-70b", "docker-8b"])
def test_docker_stacks_get_the_same_preflight_verdict_as_kubernetes(stack: str) -> None:
    cfg = load_stack_file(ROOT / f"stacks/Pulumi.{stack}.yaml")
    docker, kubernetes = resolve_sizing(cfg), resolve_sizing(kubernetes_twin(cfg))

    assert (docker.verdict.fits, docker.verdict.reasons, docker.capacity.kv_cache_tokens) == (
        kubernetes.verdict.fits,
        kubernetes.verdict.reasons,
        kubernetes.capacity.kv_cache_tokens,
    )


BLOCKED_70B = {
    "target": "docker",
    "model": {"id": "meta-llama/Llama-3.1-70B-Instruct"},
    "gpu": {"product": "A100-SXM4-40GB", "count": 2},
    "engine": {"tensor_parallel_size": 2},
    "docker": {"gpus": [0, 1]},
}


def test_a_blocked_docker_stack_is_blocked_on_kubernetes_too() -> None:
    cfg = validate_config(BLOCKED_70B)

    assert (resolve_sizing(cfg).verdict.fits, resolve_sizing(kubernetes_twin(cfg)).verdict.fits) == (False, False)


def test_a_blocked_docker_stack_creates_nothing(docker_mocks: list[DockerMocks], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)

    with pytest.raises(pulumi.RunError, match="nothing was created"):
        harness.run_program(
            lambda: runpy.run_path(str(ROOT / "__main__.py")), {**BLOCKED_70B, "hf_token": "hf_x"}, ("hf_token",)
        )

    assert docker_mocks[-1].resources == []
