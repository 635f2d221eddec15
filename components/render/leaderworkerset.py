"""A replica across several nodes: the LeaderWorkerSet (leaderworkerset.x-k8s.io/v1) with vLLM's native `mp` executor.

Built from the single-node Deployment's pod template, so GPU selection, cache, security, shm and env stay one
rendering (docs/multinode.md). The leader (worker index 0) runs the HTTP server, the probes and the Service's
endpoints; each worker runs the same `vllm serve` with its rank and `--headless` (no HTTP server, no probes).
Names and labels: kubernetes-sigs/lws api/leaderworkerset/v1/leaderworkerset_types.go@024af084:29-75.
"""

from __future__ import annotations

import copy
from typing import Any

from config.stack import StackConfig

API_VERSION = "leaderworkerset.x-k8s.io/v1"
KIND = "LeaderWorkerSet"
WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"  # "0" on the leader
GROUP_KEY_LABEL = "leaderworkerset.sigs.k8s.io/group-key"  # one hash per group
EXCLUSIVE_TOPOLOGY_ANNOTATION = "leaderworkerset.sigs.k8s.io/exclusive-topology"
# pulumi-kubernetes >= 4.18 awaits a custom resource on this annotation (kubectl-wait syntax).
WAIT_FOR_ANNOTATION = "pulumi.com/waitFor"
# LWS sets these in every container, so $(VAR) expands in args (the kubelet expands defined env vars).
LEADER_ADDRESS, WORKER_INDEX = "$(LWS_LEADER_ADDRESS)", "$(LWS_WORKER_INDEX)"


def group_name(instance: str) -> str:
    """The LWS, its leader StatefulSet and the headless Service LWS creates all take this name; it must differ
    from the server Service's (`<instance>-server`)."""
    return f"{instance}-group"


def leader_selector(selector: dict[str, str]) -> dict[str, str]:
    """Leader pods only: they serve HTTP and metrics; workers are headless."""
    return {**selector, WORKER_INDEX_LABEL: "0"}


def multinode_flags(cfg: StackConfig, rank: str) -> list[str]:
    """Native multi-node flags (vllm 0.33.0 arg_utils.py:1162-1300): mp backend, group size, rank, rendezvous."""
    return [
        "--distributed-executor-backend",
        "mp",
        "--nnodes",
        str(cfg.engine.nnodes),
        "--node-rank",
        rank,
        "--master-addr",
        LEADER_ADDRESS,
        "--master-port",
        str(cfg.multinode.master_port),
    ]


def _network(container: dict[str, Any], cfg: StackConfig) -> None:
    """RDMA resources, IPC_LOCK and NCCL settings, identical on every rank."""
    resources = container["resources"]
    for name, count in sorted(cfg.multinode.rdma_resources.items()):
        resources["requests"][name] = resources["limits"][name] = str(count)
    if cfg.multinode.adds_ipc_lock:
        container["securityContext"]["capabilities"]["add"] = ["IPC_LOCK"]
    container["env"] += [{"name": key, "value": value} for key, value in sorted(cfg.multinode.nccl_env.items())]


def _leader_container(base: dict[str, Any], cfg: StackConfig) -> dict[str, Any]:
    container = copy.deepcopy(base)
    container["args"] = [*container["args"], *multinode_flags(cfg, "0")]
    _network(container, cfg)
    return container


def _worker_container(base: dict[str, Any], cfg: StackConfig) -> dict[str, Any]:
    container = copy.deepcopy(base)
    container["args"] = [*container["args"], *multinode_flags(cfg, WORKER_INDEX), "--headless"]
    for key in ("ports", "startupProbe", "readinessProbe", "livenessProbe"):
        container.pop(key, None)  # no API server on a headless rank; the group restarts as one instead
    _network(container, cfg)
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


def _wait_for(cfg: StackConfig) -> str:
    """Pulumi has no built-in await for a custom resource: wait until every group is ready (its leader's /health
    answers only once all ranks joined), or, when KEDA owns the count, until the LWS reports Available."""
    if cfg.autoscaling.enabled:
        return "condition=Available"
    return f"jsonpath={{.status.readyReplicas}}={cfg.replicas}"


def render_leaderworkerset(cfg: StackConfig, deployment: dict[str, Any], instance: str) -> dict[str, Any]:
    """The LWS for a stack with engine.nnodes > 1, from the Deployment the single-node path would render."""
    template = deployment["spec"]["template"]
    vllm = template["spec"]["containers"][0]
    metadata: dict[str, Any] = {
        "name": group_name(instance),
        "namespace": deployment["metadata"]["namespace"],
        "labels": dict(deployment["metadata"]["labels"]),
    }
    metadata["annotations"] = {WAIT_FOR_ANNOTATION: _wait_for(cfg)}
    if cfg.multinode.exclusive_topology:
        metadata["annotations"][EXCLUSIVE_TOPOLOGY_ANNOTATION] = cfg.multinode.exclusive_topology
    spec: dict[str, Any] = {
        # LeaderCreated: the leader's /health answers only after every worker joined; LeaderReady would deadlock.
        "startupPolicy": "LeaderCreated",
        "rolloutStrategy": {"type": "RollingUpdate", "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 0}},
        "leaderWorkerTemplate": {
            "size": cfg.engine.nnodes,
            # A restarted rank cannot rejoin a torch.distributed group: restart the whole group.
            "restartPolicy": "RecreateGroupOnPodRestart",
            "leaderTemplate": _template(template, _leader_container(vllm, cfg)),
            "workerTemplate": _template(template, _worker_container(vllm, cfg)),
        },
    }
    if "replicas" in deployment["spec"]:
        spec = {"replicas": deployment["spec"]["replicas"], **spec}
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata, "spec": spec}
