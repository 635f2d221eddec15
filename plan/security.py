"""The pods' user and groups, decided once per profile. Pure.

On OpenShift the default `restricted-v2` SCC assigns runAsUser and fsGroup from the project's
`openshift.io/sa.scc.uid-range` (MustRunAsRange) and rejects a pod that fixes one outside it, so the pods
set none and run as an arbitrary UID in group 0 (docs/sources.md §S8; docs/security.md lists the paths that
must then be writable). A value the stack sets explicitly is kept: the operator knows the project's range.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.profiles import Profile
from config.kubernetes import SecurityConfig


@dataclass(frozen=True)
class PodSecurityLevel:
    """The Pod Security Standards level every pod of the stack meets (kubernetes.io/docs/concepts/security/
    pod-security-standards): the created namespace enforces it, and an existing one must not enforce a stricter one
    (the cluster check reads its `pod-security.kubernetes.io/enforce` label)."""

    level: str  # privileged, baseline or restricted
    why: str  # what needs a level below restricted; "" at restricted


def pod_security_level(multinode_ipc_lock: bool) -> PodSecurityLevel:
    """ "restricted", except where multi-node RDMA needs IPC_LOCK as UID 0 (plan/multinode.py RANK_ROOT): the
    baseline level's capability list does not include it (pod-security-standards "Capabilities"), so only
    "privileged" admits those pods."""
    if not multinode_ipc_lock:
        return PodSecurityLevel("restricted", "")
    return PodSecurityLevel(
        "privileged", "the ranks of a multi-node group add IPC_LOCK and run as UID 0 (RDMA, multinode.ipc_lock)"
    )


@dataclass(frozen=True)
class PodSecurity:
    run_as_user: int | None  # None: the platform assigns it
    run_as_group: int | None
    fs_group: int | None


def resolve_pod_security(security: SecurityConfig, profile: Profile) -> PodSecurity:
    def kept(key: str, value: int) -> int | None:
        return value if not profile.assigns_uids or key in security.model_fields_set else None

    return PodSecurity(
        kept("run_as_user", security.run_as_user),
        kept("run_as_group", security.run_as_group),
        kept("fs_group", security.fs_group),
    )
