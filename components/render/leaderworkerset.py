"""A replica across several nodes: the LeaderWorkerSet (leaderworkerset.x-k8s.io/v1) with vLLM's native `mp` executor.

Built from the single-node Deployment's pod template, so GPU selection, cache, security, shm and env stay one
rendering (docs/multinode.md). The leader (worker index 0) runs the HTTP server, the probes and the Service's
endpoints; each worker runs the same `vllm serve` with its rank and `--headless` (no HTTP server, no probes).
Names and labels: kubernetes-sigs/lws api/leaderworkerset/v1/leaderworkerset_types.go@024af084:29-75.
"""

from __future__ import annotations

import copy
from typing import Any

from plan.multinode import RANK_ROOT, MultinodePlan
from plan.names import Names

API_VERSION = "leaderworkerset.x-k8s.io/v1"
KIND = "LeaderWorkerSet"
GROUP_KEY_LABEL = "leaderworkerset.sigs.k8s.io/group-key"  # one hash per group
EXCLUSIVE_TOPOLOGY_ANNOTATION = "leaderworkerset.sigs.k8s.io/exclusive-topology"
# pulumi-kubernetes >= 4.18 awaits a custom resource on this annotation (kubectl-wait syntax).
WAIT_FOR_ANNOTATION = "pulumi.com/waitFor"


def _network(container: dict[str, Any], multinode: MultinodePlan) -> None:
    """RDMA resources, IPC_LOCK (as UID 0, so that it takes effect: plan/multinode.py) and NCCL settings,
    identical on every rank."""
    resources = container["resources"]
    for name, count in sorted(multinode.rdma_resources.items()):
        resources["requests"][name] = resources["limits"][name] = str(count)
    if multinode.ipc_lock:
        container["securityContext"] |= RANK_ROOT
        container["securityContext"]["capabilities"]["add"] = ["IPC_LOCK"]
    container["env"] += [{"name": key, "value": value} for key, value in sorted(multinode.nccl_env.items())]


def _leader_container(base: dict[str, Any], multinode: MultinodePlan) -> dict[str, Any]:
    container = copy.deepcopy(base)
    # After kubelet_literal: the rank flags' $(LWS_*) must expand.
    container["args"] = [*container["args"], *multinode.leader_flags]
    _network(container, multinode)
    return container


def _worker_container(base: dict[str, Any], multinode: MultinodePlan) -> dict[str, Any]:
    container = copy.deepcopy(base)
    container["args"] = [*container["args"], *multinode.worker_flags]
    for key in ("ports", "startupProbe", "readinessProbe", "livenessProbe"):
        container.pop(key, None)  # no API server on a headless rank; the group restarts as one instead
    container["lifecycle"] = {"preStop": {"exec": {"command": ["sleep", str(multinode.worker_pre_stop_seconds)]}}}
    _network(container, multinode)
    return container


def _template(deployment_template: dict[str, Any], container: dict[str, Any]) -> dict[str, Any]:
    template = copy.deepcopy(deployment_template)
    spec = template["spec"]
    spec["containers"] = [container, *spec["containers"][1:]]
    # A group's pods on distinct nodes: ranks of one group never share a node's GPUs with each other.
    anti = {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {
                "labelSelector": {"matchLabels": dict(template["metadata"]["labels"])},
                "matchLabelKeys": [GROUP_KEY_LABEL],
                "topologyKey": "kubernetes.io/hostname",
            }
        ]
    }
    spec.setdefault("affinity", {})["podAntiAffinity"] = anti
    return template


def render_leaderworkerset(multinode: MultinodePlan, deployment: dict[str, Any], instance: str) -> dict[str, Any]:
    """The LWS for a stack with engine.nnodes > 1, from the Deployment the single-node path would render."""
    template = deployment["spec"]["template"]
    vllm = template["spec"]["containers"][0]
    metadata: dict[str, Any] = {
        "name": Names(instance).group,
        "namespace": deployment["metadata"]["namespace"],
        "labels": dict(deployment["metadata"]["labels"]),
    }
    metadata["annotations"] = {WAIT_FOR_ANNOTATION: multinode.ready_when}
    if multinode.exclusive_topology:
        metadata["annotations"][EXCLUSIVE_TOPOLOGY_ANNOTATION] = multinode.exclusive_topology
    spec: dict[str, Any] = {
        # LeaderCreated: the leader's /health answers only after every worker joined; LeaderReady would deadlock.
        "startupPolicy": "LeaderCreated",
        "rolloutStrategy": {"type": "RollingUpdate", "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 0}},
        "leaderWorkerTemplate": {
            "size": multinode.nnodes,
            # A restarted rank cannot rejoin a torch.distributed group: restart the whole group.
            "restartPolicy": "RecreateGroupOnPodRestart",
            "leaderTemplate": _template(template, _leader_container(vllm, multinode)),
            "workerTemplate": _template(template, _worker_container(vllm, multinode)),
        },
    }
    spec = {"replicas": deployment["spec"]["replicas"], **spec}
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata, "spec": spec}
