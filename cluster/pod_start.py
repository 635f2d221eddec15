"""The newest ready server pod's start-up, read from the live cluster (get/list only): its log and its events,
for the phase report after a rollout (components/startup_report.py). The same kubeconfig and context as the
Pulumi Kubernetes provider (cluster/live.py api_client)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cluster.live import LiveReadError, api_client

MAX_LOG_BYTES = 16 * 1024 * 1024  # as preflight/startup_log.py reads a --log file


@dataclass(frozen=True)
class PodStart:
    pod: str
    log: str  # the container's log from its start
    events: str  # the pod's events, one `reason: message` line each (the image pull among them)


def _ready(pod: Any) -> bool:
    conditions = (pod.status.conditions or []) if pod.status else []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)


def newest_ready(pods: list[Any]) -> Any | None:
    """The ready pod that started last: the one a rollout or a scale-up just added."""
    ready = [pod for pod in pods if _ready(pod) and pod.status.start_time is not None]
    return max(ready, key=lambda pod: pod.status.start_time, default=None)


def read_pod_start(
    kubeconfig: str | None,
    context: str | None,
    namespace: str,
    selector: Mapping[str, str],
    container: str,
    core: Any = None,
) -> PodStart:
    """The newest ready pod matching `selector`: its `container` log and its events. Raises LiveReadError.
    `core`: a CoreV1Api (tests pass a fake one)."""
    from kubernetes import client as k8s
    from kubernetes.client.exceptions import ApiException

    core = core or k8s.CoreV1Api(api_client(kubeconfig, context))
    labels = ",".join(f"{key}={value}" for key, value in selector.items())
    try:
        pod = newest_ready(core.list_namespaced_pod(namespace, label_selector=labels).items)
        if pod is None:
            raise LiveReadError(f"no ready pod in namespace {namespace} matches {labels}")
        name = pod.metadata.name
        log = core.read_namespaced_pod_log(name, namespace, container=container, limit_bytes=MAX_LOG_BYTES)
        events = core.list_namespaced_event(namespace, field_selector=f"involvedObject.name={name}").items
    except ApiException as error:
        raise LiveReadError(f"reading the server pod: HTTP {error.status} {error.reason}") from None
    lines = [f"{event.reason}: {event.message}" for event in events]
    return PodStart(name, log, "\n".join(lines))
