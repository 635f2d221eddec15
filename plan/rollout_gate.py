"""The rollout gate of the server: a Job that ends when the workload has rolled out (smoke/rolled_out.py), so what
depends on the server (its Service, the router, the smoke test) moves only after the pods did, and that fails in
minutes when the rollout's pods crash. Pulumi's own await runs to the resource's timeout however early a
Deployment's or a StatefulSet's pods fail (docs/kubernetes.md, "The rollout gate"), and a LeaderWorkerSet's
`pulumi.com/waitFor` is satisfied by the old groups' status right after an update (docs/multinode.md, "Readiness
during `pulumi up`"). Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from plan.delivery import POD_START_SECONDS, DeliveryPlan
from plan.flows import ROLLOUT_GATE
from plan.identity import Identity
from plan.security import PodSecurity
from preflight.delivery import DeliveryBudget

SCRIPT_PATH = Path(__file__).resolve().parents[1] / "smoke" / "rolled_out.py"
POLL_SECONDS = 10
# Pulumi awaits the Job this long past its activeDeadlineSeconds, so the Job controller's DeadlineExceeded (with the
# gate's last line) reaches `pulumi up` rather than Pulumi's own timeout.
AWAIT_MARGIN_SECONDS = 60


@dataclass(frozen=True)
class RolloutGatePlan:
    name: str  # its ConfigMap, ServiceAccount, Role and RoleBinding; the Job's name starts with it
    namespace: str
    labels: dict[str, str]
    kind: str  # the workload's: Deployment, StatefulSet or LeaderWorkerSet
    workload: str  # the one object its Role may `get` (and whose pods it lists)
    image: str  # smoke_test.image: any image with python3 runs the stdlib script
    poll_seconds: int
    deadline_seconds: int  # activeDeadlineSeconds: every replica in turn (gate_deadline_seconds)
    security: PodSecurity

    @property
    def pulumi_timeout_seconds(self) -> int:
        """How long Pulumi awaits the Job: the longest `pulumi up` waits for the rollout."""
        return self.deadline_seconds + AWAIT_MARGIN_SECONDS


@cache
def gate_script() -> str:
    return SCRIPT_PATH.read_text(encoding="utf-8")


def group_start_seconds(budget: DeliveryBudget) -> int:
    """One group replaced in a rolling update: its image pull, its startup probe's budget and a pod's scheduling.
    The weights are on their volume or in the bucket by then (a new model's download runs before the update)."""
    return budget.image_pull_seconds + budget.probe.total_seconds + POD_START_SECONDS


def gate_deadline_seconds(delivery: DeliveryPlan, termination_grace_seconds: int) -> int:
    """As long as Pulumi would have awaited the workload itself (DeliveryPlan.pulumi_timeout_seconds: a new pod's
    first start per replica). A LeaderWorkerSet replaces one group at a time (maxUnavailable 1, maxSurge 0:
    docs/multinode.md): each old group drains for up to its grace period, then the new one starts."""
    if delivery.workload_kind != "LeaderWorkerSet":
        return delivery.pulumi_timeout_seconds
    return max(delivery.most_replicas, 1) * (group_start_seconds(delivery.budget) + termination_grace_seconds)


def resolve_rollout_gate(
    target: str,
    delivery: DeliveryPlan,
    identity: Identity,
    image: str,
    deadline_seconds: int,
) -> RolloutGatePlan | None:
    """None for the Docker target: a container has no rollout to await."""
    if target != "kubernetes":
        return None
    multinode = delivery.workload_kind == "LeaderWorkerSet"
    return RolloutGatePlan(
        name=identity.names.rollout_gate,
        namespace=identity.namespace,
        labels=identity.labels(ROLLOUT_GATE),
        kind=delivery.workload_kind,
        workload=identity.names.group if multinode else identity.names.server,
        image=image,
        poll_seconds=POLL_SECONDS,
        deadline_seconds=deadline_seconds,
        security=delivery.security,
    )
