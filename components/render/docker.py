"""The vLLM container on a Docker host, as plain pulumi-docker `Container` arguments (no Pulumi engine).

Keys are pulumi-docker 5.2.0 `ContainerArgs` names (`container.py`); nested values are the `*ArgsDict`
shapes from `_inputs.py`. The vLLM arguments are the plan's (plan/server.py), so Docker and Kubernetes serve
with the same flags. Secrets are added by the component, as Outputs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from components.render.delivery import compile_cache_env
from config.docker import DockerCacheConfig, DockerConfig
from plan import Plan
from plan.names import HF_HOME
from plan.server import ServerPlan

# The cache mounts where plan/vllm_args.py points HF_HOME, the same path as on Kubernetes.
CACHE_PATH = HF_HOME
# The token is uploaded as a file, not an env var, so `docker inspect` does not show it. huggingface_hub
# reads the path from HF_TOKEN_PATH (huggingface_hub constants.py: os.environ.get("HF_TOKEN_PATH", ...)).
HF_TOKEN_FILE = "/run/secrets/hf_token"
# The image's ENTRYPOINT changed across releases (python3 -m ...api_server -> vllm serve), so it is
# always set explicitly; `vllm serve` works in 0.7.2 and 0.33.0 (docs/sources.md §A.1, §A.6).
ENTRYPOINT = ("vllm", "serve")
# Health check cadence once the start period is over: three misses 30 s apart mark the container unhealthy.
HEALTH_INTERVAL_S = 30
HEALTH_TIMEOUT_S = 5
HEALTH_RETRIES = 3
LOG_DRIVER = "json-file"


def docker_of(server: ServerPlan) -> DockerConfig:
    if server.docker is None:
        raise ValueError("the docker container is rendered for a stack with target: docker")
    return server.docker


def render_container(server: ServerPlan, with_hf_token: bool) -> dict[str, Any]:
    """Every `docker.Container` argument but `image`, `uploads` and the API key (the secret-bearing parts)."""
    docker, start_period = docker_of(server), server.startup_seconds
    return {
        "name": docker.container_name,
        "entrypoints": list(ENTRYPOINT),
        "command": list(server.args),
        "gpus": render_gpus(docker.gpus),
        "shm_size": shm_size_mib(server.resources.shm_gib),
        "ports": [render_port(docker, server.port)],
        "volumes": [render_cache_volume(docker.cache)],
        "envs": render_envs(render_env(server), with_hf_token),
        "restart": docker.restart,
        # docker stop's wait before SIGKILL (10 s by default): the grace period, so vLLM's drain can finish
        "stop_timeout": server.termination_grace_period_seconds,
        "healthcheck": render_healthcheck(server.port, start_period),
        "log_driver": LOG_DRIVER,
        "log_opts": {"max-size": docker.log_opts.max_size, "max-file": str(docker.log_opts.max_file)},
        "wait": docker.wait,
        "wait_timeout": wait_timeout_s(start_period),
    }


def render_env(server: ServerPlan) -> dict[str, str]:
    """The Kubernetes server environment, except that vLLM downloads the weights itself.

    On Kubernetes a Job fills the cache first and the server runs with HF_HUB_OFFLINE=1; a Docker host has
    no such Job, so the first start downloads (huggingface_hub reads "1"/"true" as on, anything else as off).
    One container writes the cache volume, so the compile caches live there too and survive a re-create.
    """
    env = server.env | compile_cache_env() | {"HF_HUB_OFFLINE": "0"}
    return env | server.extra_env  # the user's word stays last, as in plan/vllm_args.py


def shm_size_mib(shm_gib: float) -> int:
    """/dev/shm in MiB (pulumi-docker `shm_size`): the plan's size, the same as on Kubernetes.

    Docker's default is 64 MiB, which NCCL outgrows as soon as tensor parallel is above 1 (docs/sources.md §A.6: vLLM's
    docs require --ipc=host or --shm-size).
    """
    return math.ceil(shm_gib * 1024)


def render_gpus(gpus: str | Sequence[int | str]) -> str:
    """pulumi-docker `gpus`: "all", or a device list in the `docker run --gpus '"device=0,1"'` syntax.

    The provider hands the string to docker/cli's `opts.GpuOpts.Set`, which reads it as one CSV record:
    unquoted, `device=0,1` is the fields `device=0` and `1`, i.e. device 0 plus a count of 1, which the
    NVIDIA runtime refuses ("cannot set both Count and DeviceIDs"). Quoted, the list stays one field.
    """
    if isinstance(gpus, str):
        return gpus
    return '"device=' + ",".join(str(device) for device in gpus) + '"'


def render_port(docker: DockerConfig, container_port: int) -> dict[str, Any]:
    """Publish the server port on one host address only (Docker's default, 0.0.0.0, is every interface)."""
    return {"internal": container_port, "external": docker.port, "ip": docker.publish_address, "protocol": "tcp"}


def render_cache_volume(cache: DockerCacheConfig) -> dict[str, Any]:
    if cache.host_path is not None:
        return {"container_path": CACHE_PATH, "host_path": cache.host_path}
    return {"container_path": CACHE_PATH, "volume_name": cache.volume_name}


def render_envs(env: Mapping[str, str], with_hf_token: bool) -> list[str]:
    """`KEY=value` strings, sorted so a re-run does not show a diff."""
    values = dict(env)
    if with_hf_token:
        values["HF_TOKEN_PATH"] = HF_TOKEN_FILE
    return [f"{key}={value}" for key, value in sorted(values.items())]


def render_healthcheck(port: int, start_period_s: int) -> dict[str, Any]:
    """GET /health (200 once the engine is up; nothing listens while weights load, docs/sources.md §C).

    The check uses the image's python3 rather than curl: python3 is in every vllm-openai image (it is the
    0.7.x ENTRYPOINT), curl is not promised. urlopen raises on refused connections and non-2xx codes.
    """
    probe = f"import urllib.request; urllib.request.urlopen('http://127.0.0.1:{port}/health', timeout={HEALTH_TIMEOUT_S})"
    return {
        "tests": ["CMD", "python3", "-c", probe],
        "interval": f"{HEALTH_INTERVAL_S}s",
        "timeout": f"{HEALTH_TIMEOUT_S}s",
        "retries": HEALTH_RETRIES,
        "start_period": f"{start_period_s}s",
    }


def wait_timeout_s(start_period_s: int) -> int:
    """How long `pulumi up` waits for "healthy": the start period, then enough checks to turn unhealthy."""
    return start_period_s + HEALTH_RETRIES * HEALTH_INTERVAL_S + HEALTH_TIMEOUT_S


def metrics_url(docker: DockerConfig) -> str:
    """Where Prometheus scrapes vLLM on the host (/metrics is unauthenticated, docs/sources.md §C)."""
    return f"{base_url(docker)}/metrics"


def base_url(docker: DockerConfig) -> str:
    address = docker.publish_address
    host = f"[{address}]" if ":" in address else address
    return f"http://{host}:{docker.port}"


def docker_document(plan: Plan) -> dict[str, Any]:
    """The container as `python -m components.render` writes it: the image and every docker.Container argument
    components/stack.py build_docker_stack passes (the API key and token upload are left out: secrets)."""
    server, with_hf_token = plan.server, plan.delivery.hf_token_secret is not None
    container = render_container(server, with_hf_token)
    return {"kind": "DockerContainer", "metadata": {"name": plan.identity.instance}, "image": server.image, **container}
