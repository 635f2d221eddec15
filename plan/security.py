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
