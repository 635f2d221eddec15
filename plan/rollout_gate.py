"""The rollout gate of a multi-node server: a Job that ends when every LeaderWorkerSet group runs the current
template and is ready (smoke/groups_rolled.py), so what depends on the server (the router, the smoke test) moves
only after the groups did. Pulumi awaits a Deployment's or a StatefulSet's rollout itself; a LeaderWorkerSet is a
custom resource, and its `pulumi.com/waitFor` is satisfied by the old groups' status right after an update
(docs/multinode.md, "Readiness during `pulumi up`"). Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from plan.delivery import POD_START_SECONDS
from plan.flows import ROLLOUT_GATE
from plan.identity import Identity
from plan.multinode import MultinodePlan
from plan.security import PodSecurity
from preflight.delivery import DeliveryBudget

SCRIPT_PATH = Path(__file__).resolve().parents[1] / "smoke" / "groups_rolled.py"
POLL_SECONDS = 10
LWS_GROUP = "leaderworkerset.x-k8s.io"


@dataclass(frozen=True)
class RolloutGatePlan:
    name: str  # the Job, its ConfigMap, ServiceAccount, Role and RoleBinding
    namespace: str
    labels: dict[str, str]
    leaderworkerset: str  # the one object its Role may `get` (and whose pods it lists)
    image: str  # smoke_test.image: any image with python3 runs the stdlib script
    poll_seconds: int
    deadline_seconds: int  # activeDeadlineSeconds: every group in turn (gate_deadline_seconds)
    security: PodSecurity


@cache
def gate_script() -> str:
    return SCRIPT_PATH.read_text(encoding="utf-8")


def group_start_seconds(budget: DeliveryBudget) -> int:
    """One group replaced in a rolling update: its image pull, its startup probe's budget and a pod's scheduling.
    The weights are on their volume or in the bucket by then (a new model's download runs before the update)."""
    return budget.image_pull_seconds + budget.probe.total_seconds + POD_START_SECONDS


def gate_deadline_seconds(most_groups: int, budget: DeliveryBudget, termination_grace_seconds: int) -> int:
    """The LeaderWorkerSet replaces one group at a time (maxUnavailable 1, maxSurge 0: docs/multinode.md): each old
    group drains for up to its grace period, then the new one starts."""
    return max(most_groups, 1) * (group_start_seconds(budget) + termination_grace_seconds)


def resolve_rollout_gate(
    multinode: MultinodePlan | None,
    identity: Identity,
    image: str,
    security: PodSecurity,
    deadline_seconds: int,
) -> RolloutGatePlan | None:
    """None with one node per replica: Pulumi awaits the Deployment or StatefulSet itself."""
    if multinode is None:
        return None
    return RolloutGatePlan(
        name=identity.names.rollout_gate,
        namespace=identity.namespace,
        labels=identity.labels(ROLLOUT_GATE),
        leaderworkerset=identity.names.group,
        image=image,
        poll_seconds=POLL_SECONDS,
        deadline_seconds=deadline_seconds,
        security=security,
    )
