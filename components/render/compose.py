"""The Docker target's container as a Compose file a user can run: `docker compose -f compose.yaml up -d`.

Built from the same arguments the program hands pulumi-docker (components/render/docker.py render_container),
so the command, environment, ports, cache volume, /dev/shm, health check and logs match what `pulumi up` starts.
Key names are the Compose Specification's (compose-spec/compose-spec spec.md: services, deploy.resources
.reservations.devices for GPUs, top-level secrets mounted at /run/secrets/<name>).
"""

from __future__ import annotations

from typing import Any

from components.render.docker import HF_TOKEN_FILE, docker_of, render_container
from plan import Plan

# Compose mounts a top-level secret at /run/secrets/<name>: the path the token file has under pulumi-docker.
HF_TOKEN_SECRET = HF_TOKEN_FILE.rsplit("/", 1)[-1]
COMPOSE_FILE = "compose.yaml"


def compose_header(plan: Plan) -> str:
    """The comment above the file: how to start it, and the secrets it reads from the user's side."""
    docker = docker_of(plan.server)
    lines = [f"# Start: docker compose -f {COMPOSE_FILE} up -d   (on {docker.host}: set DOCKER_HOST to it)"]
    if plan.server.api_key_secret is not None:
        lines.append("# The API key is read from VLLM_API_KEY in the shell that runs docker compose.")
    if plan.delivery.hf_token_secret is not None:
        lines.append(f"# The Hugging Face token is read from the file ./{HF_TOKEN_SECRET} beside this file.")
    return "\n".join(lines) + "\n"


def compose_document(plan: Plan) -> dict[str, Any]:
    with_hf_token = plan.delivery.hf_token_secret is not None
    container = render_container(plan.server, with_hf_token)
    service: dict[str, Any] = {
        "image": plan.server.image,
        "container_name": container["name"],
        "entrypoint": container["entrypoints"],
        "command": [_literal(arg) for arg in container["command"]],
        "environment": [_literal(env) for env in container["envs"]] + _api_key(plan),
        "ports": [_port(port) for port in container["ports"]],
        "volumes": [_volume(volume) for volume in container["volumes"]],
        "shm_size": f"{container['shm_size']}m",
        "restart": container["restart"],
        "healthcheck": _healthcheck(container["healthcheck"]),
        "logging": {"driver": container["log_driver"], "options": container["log_opts"]},
        "deploy": {"resources": {"reservations": {"devices": [_gpus(docker_of(plan.server).gpus)]}}},
    }
    document: dict[str, Any] = {"services": {plan.identity.instance: service}}
    named = [volume["volume_name"] for volume in container["volumes"] if "volume_name" in volume]
    if named:  # an external volume keeps its name: the same volume pulumi-docker mounts
        document["volumes"] = {name: {"name": name} for name in named}
    if with_hf_token:
        service["secrets"] = [HF_TOKEN_SECRET]
        document["secrets"] = {HF_TOKEN_SECRET: {"file": f"./{HF_TOKEN_SECRET}"}}
    return document


def _literal(text: str) -> str:
    """Compose interpolates `$NAME`; `$$` is a literal dollar sign."""
    return text.replace("$", "$$")


def _api_key(plan: Plan) -> list[str]:
    return ["VLLM_API_KEY"] if plan.server.api_key_secret is not None else []  # passed through from the shell


def _port(port: dict[str, Any]) -> dict[str, Any]:
    return {"target": port["internal"], "published": str(port["external"]), "host_ip": port["ip"], "protocol": port["protocol"]}


def _volume(volume: dict[str, Any]) -> dict[str, Any]:
    if "host_path" in volume:
        return {"type": "bind", "source": volume["host_path"], "target": volume["container_path"]}
    return {"type": "volume", "source": volume["volume_name"], "target": volume["container_path"]}


def _healthcheck(check: dict[str, Any]) -> dict[str, Any]:
    return {"test": check["tests"], **{key: check[key] for key in ("interval", "timeout", "retries", "start_period")}}


def _gpus(gpus: str | tuple[int | str, ...]) -> dict[str, Any]:
    device: dict[str, Any] = {"driver": "nvidia", "capabilities": ["gpu"]}
    if isinstance(gpus, str):
        return {**device, "count": gpus}  # "all"
    return {**device, "device_ids": [str(gpu) for gpu in gpus]}
