"""`docker`: a single GPU host through the Docker API (target: docker).

Field names follow pulumi-docker's `Container`/`Provider` arguments (pulumi_docker 5.2.0 `container.py`,
`provider.py`), in snake_case. A docker stack shares the model, gpu, engine, vllm and preflight groups with
Kubernetes stacks, and a few keys of probes, server and security; validation/docker.py rejects every other
key the user sets, naming it and what to do instead.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Literal

from pydantic import Field, PositiveFloat, field_validator, model_validator

from config.base import ConfigGroup
from config.errors import show
from config.syntax import NonNegativeInt, PositiveInt

# Docker's rule for container and volume names (daemon/names.go: RestrictedNameChars).
DOCKER_NAME = r"^[a-zA-Z0-9][a-zA-Z0-9_.-]+$"
# Hosts the docker.Provider can reach without extra TLS material: the local socket or SSH.
HOST_SCHEMES = ("unix://", "ssh://")
# The host is handed to ssh (docker/cli cli/connhelper/ssh) and written into compose.yaml's comment: an
# absolute socket path, or ssh://[user@]host[:port] with a DNS name or an IP; nothing ssh reads as a flag.
_UNIX_HOST = re.compile(r"unix:///[A-Za-z0-9._/-]+")
_SSH_HOST = re.compile(
    r"ssh://(?:[A-Za-z0-9_][A-Za-z0-9._-]{0,31}@)?"
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])"
    r"(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?"
)
# ssh options that run a local command (ssh_config(5): ProxyCommand, LocalCommand with PermitLocalCommand,
# KnownHostsCommand) or load a config file that may (-F): a stack file in a pull request would run it on
# the machine that previews it.
_SSH_COMMAND_OPTIONS = ("proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand")
# A host path is one bind-mount source: `:` would split Docker's host:container:mode bind spec.
_HOST_PATH = re.compile(r"/(?:[A-Za-z0-9._@+-]+/?)*")


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
        if value is not None and (not _HOST_PATH.fullmatch(value) or ".." in value.split("/")):
            raise ValueError(
                f"host_path {show(value)} is not one plain absolute folder: a `:` splits Docker's bind spec, and "
                "spaces, control characters and `..` have no place in it. Fix: use letters, digits and ._@+- "
                "between slashes, e.g. /data/hf-cache."
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
        if not (_UNIX_HOST.fullmatch(value) or _SSH_HOST.fullmatch(value)) or ".." in value.split("/"):
            raise ValueError(
                f"host {show(value)} is not a plain socket path or ssh://[user@]host[:port] (no spaces, options, "
                "paths or control characters). Fix: e.g. ssh://ubuntu@gpu-host.example.com:22; put ssh flags "
                "in docker.ssh_opts."
            )
        return value

    @field_validator("ssh_opts")
    @classmethod
    def _no_local_commands(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        flat = " ".join(value).casefold()
        runs = [option for option in _SSH_COMMAND_OPTIONS if option in flat]
        loads = [item for item in value if item.startswith("-F")]
        if runs or loads or any(char in flat for char in "\n\r\0"):
            found = ", ".join(runs + loads) or "a control character"
            raise ValueError(
                f"ssh_opts {show(list(value))} holds {found}: an option that runs a local command, or loads an ssh "
                "config that may, on every machine that previews the stack. Fix: keep connection settings only "
                "(e.g. -o StrictHostKeyChecking=yes, -i ~/.ssh/gpu, -J bastion), or set the rest in your own "
                "~/.ssh/config."
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


def docker_settings(docker: DockerConfig | None) -> DockerConfig:
    """The docker group of a docker stack, with every default when the stack file leaves it out."""
    return docker or DockerConfig()
