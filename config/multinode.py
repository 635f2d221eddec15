"""`multinode`: one replica across several GPU nodes, on a LeaderWorkerSet with vLLM's native `mp` executor.

Set `engine.nnodes` above 1 to use it; this group holds what only a multi-node group needs. vLLM's own
defaults and rules (docs/multinode.md): `--master-port` 29501, `--nnodes` must divide TP x PP, the
backend must be `mp` (vllm-project/vllm vllm/engine/arg_utils.py@v0.33.0, quoted in docs/multinode.md).
"""

from __future__ import annotations

import re

from pydantic import Field, PositiveInt, field_validator

from catalog.vllm_flags import FLAG_TABLES
from catalog.vllm_versions import MULTINODE_BROKEN_RELEASES
from config.base import ConfigGroup

# Environment for the collective libraries only: NCCL, UCX, NVSHMEM and Gloo read these (e.g. NCCL_IB_HCA).
COLLECTIVE_ENV = re.compile(r"^(NCCL|UCX|NVSHMEM|GLOO)_[A-Z0-9_]{1,100}$")
# An extended resource name: an optional DNS prefix, a slash, a name (rdma/ib, vpc.amazonaws.com/efa).
RESOURCE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")


class MultinodeConfig(ConfigGroup):
    """Settings of a multi-node replica (engine.nnodes > 1). Ignored with one node per replica."""

    master_port: PositiveInt = Field(
        29501, le=65535, description="--master-port: the leader's torch.distributed port (vLLM's default 29501)."
    )
    rdma_resources: dict[str, PositiveInt] = Field(
        default_factory=dict,
        description="Extended resources per pod for the inter-node network, e.g. {rdma/ib: 1} or "
        "{vpc.amazonaws.com/efa: 32}; requested and limited on the leader and every worker.",
    )
    ipc_lock: bool | None = Field(
        None, description="Add the IPC_LOCK capability (RDMA pins memory); defaults to true when rdma_resources is set."
    )
    openshift_scc: str | None = Field(
        None,
        pattern=r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$",
        description="On cluster.profile openshift with ipc_lock: an SCC admitting IPC_LOCK and UID 0 (e.g. "
        "privileged, or your own); the stack grants the server ServiceAccount `use` on it (Role, RoleBinding).",
    )
    nccl_env: dict[str, str] = Field(
        default_factory=dict,
        description="NCCL_*, UCX_*, NVSHMEM_* or GLOO_* variables for every rank, e.g. {NCCL_IB_HCA: mlx5}.",
    )
    exclusive_topology: str | None = Field(
        None,
        description="Node label key whose value one group owns alone (LWS exclusive-topology annotation), "
        "e.g. cloud.google.com/gce-topology-block; unset places groups anywhere.",
    )
    group_init_seconds: PositiveInt = Field(
        120, le=3600, description="Added to the startup budget: workers join the leader and NCCL initialises."
    )

    @field_validator("rdma_resources")
    @classmethod
    def _resource_names(cls, resources: dict[str, int]) -> dict[str, int]:
        for name in resources:
            if not RESOURCE_NAME.match(name) or name.startswith(("nvidia.com/gpu", "cpu", "memory")):
                raise ValueError(
                    f"{name[:80]!r} is not an extended resource name for the network. Fix: use the "
                    "device plugin's name, e.g. rdma/ib or vpc.amazonaws.com/efa."
                )
        return resources

    @field_validator("nccl_env")
    @classmethod
    def _collective_env(cls, env: dict[str, str]) -> dict[str, str]:
        for name, value in env.items():
            if not COLLECTIVE_ENV.match(name):
                raise ValueError(
                    f"{name[:80]!r} is not an NCCL_, UCX_, NVSHMEM_ or GLOO_ variable. Fix: put other "
                    "variables in vllm.extra_env."
                )
            if "\n" in value or "$(" in value or len(value) > 1024:
                raise ValueError(f"{name} has a value with a newline, `$(` or over 1024 characters. Fix: give a plain value.")
        return env

    @field_validator("exclusive_topology")
    @classmethod
    def _label_key(cls, key: str | None) -> str | None:
        if key is not None and not LABEL_KEY.match(key):
            raise ValueError(
                f"{key[:80]!r} is not a node label key. Fix: use a key such as "
                "cloud.google.com/gce-topology-block or kubernetes.io/hostname."
            )
        return key

    @property
    def adds_ipc_lock(self) -> bool:
        return bool(self.rdma_resources) if self.ipc_lock is None else self.ipc_lock


def supports_native_multinode(version: str) -> bool:
    """The release's `vllm serve` takes --nnodes and --headless (the mp executor across nodes, vLLM PR #23691)."""
    table = FLAG_TABLES.get(version)
    return table is not None and {"--nnodes", "--headless"} <= table.flags


def starts_native_multinode(version: str) -> bool:
    """The release has native multi-node mode and its group starts: not one of catalog/vllm_versions.py
    MULTINODE_BROKEN_RELEASES (0.17.0, 0.17.1), whose ranks stop at start."""
    return supports_native_multinode(version) and version not in MULTINODE_BROKEN_RELEASES
