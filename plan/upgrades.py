"""What a managed node upgrade does to the serving pods hours or days after `pulumi up`: the provider drains each GPU
node, and the stack's PodDisruptionBudget and grace period decide whether that drain waits, is cut short or makes
the upgrade fail (catalog/profiles.py UpgradeDrain; docs/cluster.md "Managed node upgrades"). Pure."""

from __future__ import annotations

import math

from catalog.profiles import UpgradeDrain
from preflight.delivery import DeliveryBudget


def budget_hold_seconds(budget: DeliveryBudget, several_replicas: bool) -> int:
    """How long the PodDisruptionBudget (maxUnavailable 1: components/render/scheduling.py render_pdb_spec) refuses
    an upgrade's next eviction: until the replica evicted before it is Ready again, on a new node that pulls the
    image first (the report's New replica time). One replica: not at all, its eviction is allowed at once."""
    return budget.new_node_seconds if several_replicas else 0


def drain_needs_seconds(drain: UpgradeDrain, hold_seconds: int, grace_seconds: int) -> int:
    """What one node's drain needs of the provider's wait: the budget's hold, and the pod's graceful termination
    too where one timeout covers both (AKS)."""
    return hold_seconds + grace_seconds if drain.one_timeout else hold_seconds


def upgrade_warnings(drain: UpgradeDrain | None, hold_seconds: int, grace_seconds: int) -> tuple[str, ...]:
    """The preflight's warnings where the provider's upgrade cuts the server's drain short or gives up on the node.
    `drain`: the cluster's (config/cluster.py ClusterConfig.upgrade_drain), None where no managed upgrade is known;
    `hold_seconds`: budget_hold_seconds; `grace_seconds`: server.termination_grace_period_seconds."""
    if drain is None:
        return ()
    return _grace_cut(drain, grace_seconds) + _wait_exceeded(drain, hold_seconds, grace_seconds)


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


def _wait_exceeded(drain: UpgradeDrain, hold_seconds: int, grace_seconds: int) -> tuple[str, ...]:
    need = drain_needs_seconds(drain, hold_seconds, grace_seconds)
    if need <= drain.budget_wait_seconds:
        return ()
    what = (
        "for each GPU node's drain (the evictions its PodDisruptionBudgets allow, then the pods' graceful termination)"
        if drain.one_timeout
        else "on a PodDisruptionBudget that refuses an eviction"
    )
    parts = []
    if hold_seconds:
        parts.append(
            f"{hold_seconds} s while the PodDisruptionBudget (maxUnavailable 1) refuses the next eviction until the "
            "replica evicted before it is Ready on a new node: the report's New replica time"
        )
    if drain.one_timeout:
        parts.append(f"{grace_seconds} s server.termination_grace_period_seconds")
    at_least = f" (at least {math.ceil(need / 60)} minutes)" if drain.timeout_setting else ""
    return (
        f"upgrades: {drain.upgrade} waits {drain.budget_wait_seconds} s {what}, but this stack's drain needs about "
        f"{need} s ({' + '.join(parts)}); the upgrade then {drain.on_timeout}. Fix: {drain.fix}{at_least}.",
    )
