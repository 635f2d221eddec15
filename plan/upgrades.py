"""What a managed node upgrade does to the serving pods hours or days after `pulumi up`: the provider drains each GPU
node, and the stack's PodDisruptionBudget and grace period decide whether that drain waits, is cut short or makes
the upgrade fail (catalog/profiles.py UpgradeDrain; docs/cluster.md "Managed node upgrades"). Pure."""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog.profiles import UpgradeDrain
from preflight.delivery import DeliveryBudget


@dataclass(frozen=True)
class BudgetHold:
    """How long the PodDisruptionBudget refuses an upgrade's next eviction, and the arithmetic behind it."""

    seconds: int
    how: str


NO_HOLD = BudgetHold(0, "one replica: its eviction is allowed at once")


def budget_hold(budget: DeliveryBudget, several_replicas: bool) -> BudgetHold:
    """The PodDisruptionBudget (maxUnavailable 1: components/render/scheduling.py render_pdb_spec) refuses an
    upgrade's next eviction until the replica evicted before it is Ready again, on a new node that pulls the image
    first. A replica's own claim follows it with the weights and the compile cache (its restart); a node-local one
    stays on the old node, so the replica downloads and compiles again (the report's fresh-node time). One replica:
    no hold, its eviction is allowed at once and the server is down until it is Ready again."""
    if not several_replicas:
        return NO_HOLD
    if budget.node_local:
        return BudgetHold(budget.new_node_seconds, "the report's New replica time on a fresh node")
    pull, start = budget.image_pull_seconds, budget.restart_seconds
    return BudgetHold(pull + start, f"{pull} s image pull + {start} s start")


def drain_needs_seconds(drain: UpgradeDrain, hold_seconds: int, grace_seconds: int) -> int:
    """What one node's drain needs of the provider's wait: the budget's hold, and the pod's graceful termination
    too where one timeout covers both (AKS)."""
    return hold_seconds + grace_seconds if drain.one_timeout else hold_seconds


def upgrade_warnings(drain: UpgradeDrain | None, hold: BudgetHold, grace_seconds: int) -> tuple[str, ...]:
    """The preflight's warnings where the provider's upgrade cuts the server's drain short or gives up on the node.
    `drain`: the cluster's (config/cluster.py ClusterConfig.upgrade_drain), None where no managed upgrade is known;
    `hold`: budget_hold; `grace_seconds`: server.termination_grace_period_seconds."""
    if drain is None:
        return ()
    return _grace_cut(drain, grace_seconds) + _wait_exceeded(drain, hold, grace_seconds)


def _grace_cut(drain: UpgradeDrain, grace_seconds: int) -> tuple[str, ...]:
    """A grace period longer than the drain grants: the server is stopped before its drain of the answers in flight
    (--shutdown-timeout) ends. Where one timeout covers the drain, _wait_exceeded says it instead."""
    if drain.one_timeout or grace_seconds <= drain.grace_cap_seconds:
        return ()
    return (
        f"upgrades: server.termination_grace_period_seconds ({grace_seconds}) exceeds the {drain.grace_cap_seconds} s "
        f"{drain.upgrade} grants a pod's graceful termination: the server is stopped before its drain "
        "(--shutdown-timeout) ends, and the answers still in flight are aborted. Fix: set "
        f"server.termination_grace_period_seconds to at most {drain.grace_cap_seconds}.",
    )


def _wait_exceeded(drain: UpgradeDrain, hold: BudgetHold, grace_seconds: int) -> tuple[str, ...]:
    need = drain_needs_seconds(drain, hold.seconds, grace_seconds)
    if need <= drain.budget_wait_seconds:
        return ()
    what = (
        "for each GPU node's drain (the evictions its PodDisruptionBudgets allow, then the pods' graceful termination)"
        if drain.one_timeout
        else "on a PodDisruptionBudget that refuses an eviction"
    )
    parts = []
    if hold.seconds:
        parts.append(
            f"{hold.seconds} s while the PodDisruptionBudget (maxUnavailable 1) holds the next eviction until the "
            f"replica evicted before it is Ready on a new node ({hold.how})"
        )
    if drain.one_timeout:
        parts.append(f"{grace_seconds} s server.termination_grace_period_seconds")
    at_least = f" (at least {math.ceil(need / 60)} minutes)" if drain.timeout_setting else ""
    return (
        f"upgrades: {drain.upgrade} waits {drain.budget_wait_seconds} s {what}, but this stack's drain needs about "
        f"{need} s: {' + '.join(parts)}. The upgrade then {drain.on_timeout}. Fix: {drain.fix}{at_least}.",
    )
