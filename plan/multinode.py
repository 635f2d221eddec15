"""A replica across several nodes (engine.nnodes > 1), decided once: the ranks' extra `vllm serve` flags, the
inter-node network resources and settings, and the LeaderWorkerSet's group facts. Pure.

LWS sets LWS_LEADER_ADDRESS and LWS_WORKER_INDEX in every container and the kubelet expands `$(VAR)` in args
(kubernetes-sigs/lws api/leaderworkerset/v1/leaderworkerset_types.go@024af084:29-75; docs/multinode.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from config.stack import StackConfig

LEADER_ADDRESS, WORKER_INDEX = "$(LWS_LEADER_ADDRESS)", "$(LWS_WORKER_INDEX)"
WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"  # LWS sets it on every pod of a group, "0" on the leader
# A capability in `capabilities.add` reaches a non-root process's bounding set only: execve clears the permitted
# and effective sets of a non-root UID without file capabilities or ambient ones (capabilities(7),
# "Transformation of capabilities during execve()"), and Kubernetes sets no ambient capabilities
# (kubernetes/kubernetes#56374, open; KEP kubernetes/enhancements#2757, not merged). So a rank that adds
# IPC_LOCK runs as UID 0, with every other capability still dropped and no privilege escalation.
RANK_ROOT = {"runAsUser": 0, "runAsNonRoot": False}


@dataclass(frozen=True)
class MultinodePlan:
    nnodes: int  # the LeaderWorkerSet's group size
    leader_flags: tuple[str, ...]  # after the single-node args on the leader (rank 0, the HTTP server)
    worker_flags: tuple[str, ...]  # after them on every worker: its rank and --headless
    rdma_resources: dict[str, int]  # requested and limited on every rank
    # RDMA pins memory: the rank containers add IPC_LOCK and run as UID 0, the only way the capability takes
    # effect (RANK_ROOT); the namespace must admit them (PSA privileged; on OpenShift the SCC below).
    ipc_lock: bool
    scc: str | None  # multinode.openshift_scc: the SCC the server ServiceAccount may `use` (Role, RoleBinding)
    nccl_env: dict[str, str]
    exclusive_topology: str | None  # the node label key one group owns alone
    ready_when: str  # Pulumi's await on the LWS (pulumi.com/waitFor)
    # A headless rank exits at SIGTERM and takes the group's engine with it (vllm/entrypoints/cli/serve.py
    # run_headless raises SystemExit): its preStop outlasts the leader's, sleep and drain, inside the same grace period.
    worker_pre_stop_seconds: int


def multinode_flags(nnodes: int, master_port: int, rank: str) -> list[str]:
    """Native multi-node flags (vllm 0.33.0 arg_utils.py:1162-1300): mp backend, group size, rank, rendezvous."""
    return [
        "--distributed-executor-backend",
        "mp",
        "--nnodes",
        str(nnodes),
        "--node-rank",
        rank,
        "--master-addr",
        LEADER_ADDRESS,
        "--master-port",
        str(master_port),
    ]


def ready_when(autoscaled: bool, replicas: int) -> str:
    """Pulumi has no built-in await for a custom resource: wait until every group is ready (its leader's /health
    answers only once all ranks joined), or, when KEDA owns the count, until the LWS reports Available."""
    if autoscaled:
        return "condition=Available"
    return f"jsonpath={{.status.readyReplicas}}={replicas}"


def api_selector(selector: dict[str, str], nnodes: int) -> dict[str, str]:
    """The server pods that serve the API port: the Service's and the InferencePool's selector. With several nodes
    per replica the leaders only: a headless worker has no listener and no readiness probe, so it is Ready once
    started, and whatever selects Ready pods by label (the endpoints controller, GIE's endpoint picker) would
    send it requests (docs/multinode.md)."""
    return {**selector, WORKER_INDEX_LABEL: "0"} if nnodes > 1 else dict(selector)


def resolve_multinode(cfg: StackConfig, drain: int) -> MultinodePlan | None:
    """None with one node per replica. `drain`: the leader's drain after SIGTERM (plan/vllm_args.py
    drain_seconds), which a worker's preStop outwaits: a headless rank that exits ends its group's engine."""
    nnodes, port = cfg.engine.nnodes, cfg.multinode.master_port
    if nnodes == 1:
        return None
    return MultinodePlan(
        nnodes=nnodes,
        leader_flags=tuple(multinode_flags(nnodes, port, "0")),
        worker_flags=(*multinode_flags(nnodes, port, WORKER_INDEX), "--headless"),
        rdma_resources=dict(cfg.multinode.rdma_resources),
        ipc_lock=cfg.multinode.adds_ipc_lock,
        scc=cfg.multinode.openshift_scc if cfg.multinode.adds_ipc_lock else None,
        nccl_env=dict(cfg.multinode.nccl_env),
        exclusive_topology=cfg.multinode.exclusive_topology,
        ready_when=ready_when(cfg.autoscaling.enabled, cfg.replicas),
        worker_pre_stop_seconds=cfg.server.pre_stop_sleep_seconds + drain,
    )
