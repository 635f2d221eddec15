"""The pods' user and groups, decided once per profile. Pure.

On OpenShift the default `restricted-v2` SCC assigns runAsUser and fsGroup from the project's
`openshift.io/sa.scc.uid-range` (MustRunAsRange) and rejects a pod that fixes one outside it, so the pods
set none and run as an arbitrary UID in group 0 (docs/sources.md §S8; docs/security.md lists the paths that
must then be writable). A value the stack sets explicitly is kept: the operator knows the project's range.
"""

from __future__ import annotations

import hashlib
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


def resolve_server_security(security: SecurityConfig, profile: Profile, ipc_lock: bool) -> PodSecurity:
    """The server pods' user: every pod's (resolve_pod_security), except the ranks of a group that adds IPC_LOCK on
    a platform that assigns UIDs. Those are admitted by the SCC multinode.openshift_scc names, whose runAsUser is
    RunAsAny (the rank runs as UID 0), and RunAsAny assigns no UID (openshift/apiserver-library-go
    pkg/securitycontextconstraints/user/runasany.go@395b1ce99edee877d8cf263d32f9ac45df055e57:21-24): the containers
    that stay non-root (the wait for the cache, the adapters' fetch) would run as the image's root user, which the
    kubelet refuses under runAsNonRoot. So they run as security.run_as_user and run_as_group; no fsGroup, which
    RunAsAny does not assign either: the ranks only read the shared volume the download Job filled."""
    if not (ipc_lock and profile.assigns_uids):
        return resolve_pod_security(security, profile)
    return PodSecurity(security.run_as_user, security.run_as_group, None)


# PBKDF2 rounds of the API key's fingerprint: each guess at a weak key costs this many HMAC-SHA256.
API_KEY_REVISION_ROUNDS = 100_000
API_KEY_REVISION_HEX = 16  # 64 bits: two keys of one stack never share a fingerprint in practice


def api_key_revision(key: str, namespace: str, secret_name: str, previous: str | None = None) -> str:
    """The fingerprint of the API key on the pod templates that read it: a rotated key changes the templates, so
    `pulumi up` rolls the pods (they read VLLM_API_KEY at start only). Anyone who may read the workload reads it,
    so it is a stretched hash, salted with the Secret's namespace and name (one key in two stacks gives two
    fingerprints), truncated: never the key, and nothing a strong key can be recovered from. `previous`: the
    api_key_previous secret the pods accept too, so that setting, changing or dropping it rolls them as well."""
    salt = f"{namespace}/{secret_name}".encode()
    keys = key if previous is None else f"{key}\0{previous}"
    digest = hashlib.pbkdf2_hmac("sha256", keys.encode(), salt, API_KEY_REVISION_ROUNDS)
    return digest.hex()[:API_KEY_REVISION_HEX]
