"""DockerHost: vLLM on one GPU server through the Docker API (target: docker).

The pinned image (RemoteImage), the Hugging Face cache volume and the container, under one component.
The Docker host comes from the provider passed in `opts` (components/provider.py), which the children
inherit, so nothing depends on the ambient DOCKER_HOST.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import pulumi
import pulumi_docker as docker

from components.render.docker import HF_TOKEN_FILE, base_url, docker_of, metrics_url, render_container
from components.render.smoke import DOCKER_KEY_FILE, DOCKER_SCRIPT, docker_smoke_spec, docker_smoke_verdict, smoke_script
from plan import Plan
from plan.server import ServerPlan

TYPE_TOKEN = "vllm-serving:index:DockerHost"


@dataclass(frozen=True)
class DockerHostArgs:
    """Inputs of a DockerHost."""

    server: ServerPlan  # the plan's server of a stack with target: docker: the same `vllm serve` arguments as on Kubernetes
    hf_token: pulumi.Output[str] | None = None  # uploaded as a file, never an env var
    api_key: pulumi.Output[str] | None = None  # VLLM_API_KEY: vLLM reads the key from env or argv only (docs/sources.md §A.2)


class DockerHost(pulumi.ComponentResource):
    """The vLLM server as one container on one Docker host.

    Attributes:
        image: the pulled vLLM image (kept on the host on destroy: it is tens of GB).
        cache_volume: the named Hugging Face cache volume, or None with a host_path bind mount.
        container: the vLLM container.
        url: the OpenAI-compatible base URL on the host. metrics_url: where Prometheus scrapes.
    """

    def __init__(self, name: str, args: DockerHostArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        settings = docker_of(args.server)
        self.image = docker.RemoteImage(
            f"{name}-image", name=args.server.image, keep_locally=True, opts=pulumi.ResourceOptions(parent=self)
        )
        cache = settings.cache
        self.cache_volume = None if cache.host_path is not None else self._cache_volume(name, cache.volume_name)
        spec = render_container(args.server, with_hf_token=args.hf_token is not None)
        spec["envs"] = _with_api_key(spec["envs"], args.api_key)
        self.container = docker.Container(
            f"{name}-server",
            image=self.image.image_id,
            uploads=_token_upload(args.hf_token),
            **spec,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.cache_volume] if self.cache_volume else None),
        )
        self.url = pulumi.Output.from_input(base_url(settings))
        self.metrics_url = pulumi.Output.from_input(metrics_url(settings))
        self.register_outputs({"url": self.url, "metricsUrl": self.metrics_url, "containerName": self.container.name})

    def _cache_volume(self, name: str, volume_name: str) -> docker.Volume:
        # retain_on_delete: `pulumi destroy` leaves the downloaded weights, so the next `up` starts warm;
        # creating a volume whose name exists returns the existing one (docker volume create is idempotent).
        return docker.Volume(f"{name}-cache", name=volume_name, opts=pulumi.ResourceOptions(parent=self, retain_on_delete=True))


def _with_api_key(envs: list[str], api_key: pulumi.Output[str] | None) -> list[Any]:
    if api_key is None:
        return list(envs)
    # Secret in Pulumi state (the Output carries secretness); still visible to `docker inspect` on the host.
    return [*envs, pulumi.Output.secret(cast(Any, api_key)).apply(lambda key: f"VLLM_API_KEY={key}")]


def _token_upload(hf_token: pulumi.Output[str] | None) -> list[docker.ContainerUploadArgs] | None:
    if hf_token is None:
        return None
    # Permissions as octal text, as terraform-provider-docker's own upload tests write them ("0600").
    content = pulumi.Output.secret(cast(Any, hf_token))
    return [docker.ContainerUploadArgs(file=HF_TOKEN_FILE, content=content, permissions="0400")]


def docker_smoke_test(name: str, plan: Plan, host: DockerHost, api_key: pulumi.Output[str] | None) -> Any:
    """The smoke script in a one-shot container on the vLLM container's network, after it is healthy.
    Its verdict is a stack output: a failed check raises there, which fails `pulumi up` with the script's line."""
    settings, smoke = docker_of(plan.server), plan.traffic.smoke
    assert smoke is not None  # build_docker_stack calls this only with smoke_test.enabled
    if not settings.wait:
        pulumi.log.warn(
            "smoke test skipped: docker.wait is false, so the server may not be up yet; run "
            "python smoke/check.py --base-url <url output> --model <served name> by hand (docs/exposure.md)"
        )
        return None
    child = pulumi.ResourceOptions(parent=host)
    image = docker.RemoteImage(f"{name}-smoke-image", name=smoke.image, keep_locally=True, opts=child)
    uploads = [docker.ContainerUploadArgs(file=DOCKER_SCRIPT, content=smoke_script(), permissions="0444")]
    if api_key is not None:
        key = pulumi.Output.secret(cast(Any, api_key))
        uploads.append(docker.ContainerUploadArgs(file=DOCKER_KEY_FILE, content=key, permissions="0400"))
    spec = docker_smoke_spec(smoke, plan.traffic.port, settings.container_name)
    smoke = docker.Container(
        f"{name}-smoke-test",
        image=image.image_id,
        network_mode=host.container.id.apply(lambda cid: f"container:{cid}"),
        uploads=uploads,
        **spec,
        opts=pulumi.ResourceOptions(parent=host, depends_on=[host.container]),
    )
    return pulumi.Output.all(smoke.exit_code, smoke.container_logs).apply(
        lambda result: docker_smoke_verdict(result[0], result[1])
    )
