"""The image pre-pull DaemonSet (server.prepull_image): one pod per GPU node of the server, whose container is the
vLLM image running `sleep infinity`, so the image is on the node before a replica lands there and stays (the
kubelet garbage-collects unused images only: kubernetes.io/docs/concepts/architecture/garbage-collection).
No GPU, no network flow, no API token, a few MiB of memory; Pulumi does not await it (a pull on every node may
take longer than a deploy). Pure."""

from __future__ import annotations

from typing import Any

from components.render.cache import SKIP_AWAIT
from components.render.scheduling import render_gpu_node_placement
from components.render.security import container_security_context, pod_security_context
from plan.placement import Placement
from plan.server import PrepullPlan

RESOURCES = {"requests": {"cpu": "1m", "memory": "8Mi"}, "limits": {"cpu": "10m", "memory": "16Mi"}}


def render_prepull_daemonset(prepull: PrepullPlan, placement: Placement) -> dict[str, Any]:
    pod: dict[str, Any] = {
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": 1,
        "securityContext": pod_security_context(prepull.security),
        **render_gpu_node_placement(placement),
        "containers": [
            {
                "name": "image",
                "image": prepull.image,
                "imagePullPolicy": prepull.image_pull_policy,
                "command": ["sleep", "infinity"],
                "resources": RESOURCES,
                "securityContext": container_security_context(),
            }
        ],
    }
    if placement.pull_secrets:
        pod["imagePullSecrets"] = [{"name": name} for name in placement.pull_secrets]
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": prepull.name,
            "namespace": prepull.namespace,
            "labels": dict(prepull.labels),
            "annotations": dict(SKIP_AWAIT),
        },
        "spec": {
            "selector": {"matchLabels": dict(prepull.selector)},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%"}},
            "template": {"metadata": {"labels": dict(prepull.labels)}, "spec": pod},
        },
    }
