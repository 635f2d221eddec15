"""Explicit providers: a Kubernetes provider that renders YAML for GitOps, and the Docker host's provider.

Components never build providers (Pulumi design guidelines, composition.md: "DO let children inherit the
consumer's provider"); `build_stack` passes these through `ResourceOptions(provider=...)`.
"""

from __future__ import annotations

import pulumi_docker as docker
import pulumi_kubernetes as k8s

from config.docker import DockerConfig


def kubernetes_provider(render_yaml_to_directory: str | None) -> k8s.Provider | None:
    """A provider that writes manifests to `render_yaml_to_directory` instead of applying them, or None.

    None means "use the ambient kubeconfig provider". Rendering is BETA in pulumi-kubernetes 4.34
    (`provider.py` `render_yaml_to_directory`): nothing is created, computed outputs stay unknown, and
    Secrets are written to the folder in plain text (docs/sources.md §H.7), so keep that folder out of git
    or encrypt it (e.g. SOPS) before committing.
    """
    if render_yaml_to_directory is None:
        return None
    return k8s.Provider("render-yaml", render_yaml_to_directory=render_yaml_to_directory)


def docker_provider(settings: DockerConfig) -> docker.Provider:
    """The Docker host from the stack file (local socket or ssh://), never the ambient DOCKER_HOST."""
    return docker.Provider(
        "docker-host",
        host=settings.host,
        ssh_opts=list(settings.ssh_opts) or None,
    )
