"""Managed node upgrades against what the stack renders: the PodDisruptionBudget's hold on the next eviction and the
grace period, compared with the provider's drain (catalog/profiles.py UpgradeDrain, plan/upgrades.py)."""

from __future__ import annotations

import pytest

from catalog.profiles import AKS_UPGRADE, GKE_UPGRADE
from config.cluster import ClusterConfig
from config.errors import ConfigError
from plan.upgrades import BudgetHold, budget_hold, upgrade_warnings
from tests.factories import make_config, shipped_stack
from tests.kubernetes_fixtures import plan_of


def upgrade_warnings_of(**changes: object) -> list[str]:
    """The report's upgrade warnings for the factories' base stack with changes."""
    return [w for w in plan_of(make_config(**changes)).sizing.verdict.warnings if w.startswith("upgrades:")]


def test_a_grace_period_past_gkes_hour_is_reported_as_cut_short_naming_the_key_and_the_cap() -> None:
    warnings = upgrade_warnings_of(cluster={"profile": "gke"}, server={"termination_grace_period_seconds": 3601})
    assert len(warnings) == 1
    assert "server.termination_grace_period_seconds (3601)" in warnings[0]
    assert "Fix: set server.termination_grace_period_seconds to at most 3600." in warnings[0]


def test_a_grace_period_of_gkes_hour_gets_no_upgrade_warning() -> None:
    assert upgrade_warnings_of(cluster={"profile": "gke"}, server={"termination_grace_period_seconds": 3600}) == []


def test_several_replicas_whose_new_node_start_passes_gkes_hour_are_told_gke_drains_anyway() -> None:
    warnings = upgrade_warnings_of(cluster={"profile": "gke"}, replicas=2, server={"image_pull_seconds": 3600})
    assert len(warnings) == 1
    assert "a GKE node upgrade waits 3600 s on a PodDisruptionBudget" in warnings[0]
    assert "drains the node anyway" in warnings[0]


def test_one_replica_with_the_same_slow_start_is_not_held_by_its_budget() -> None:
    assert upgrade_warnings_of(cluster={"profile": "gke"}, replicas=1, server={"image_pull_seconds": 3600}) == []


def test_a_replicas_own_claim_follows_it_so_the_budget_holds_for_the_image_pull_and_its_restart() -> None:
    budget = plan_of(make_config(replicas=2)).delivery.budget  # per-replica claims
    hold = budget_hold(budget, several_replicas=True)
    assert hold.seconds == budget.image_pull_seconds + budget.restart_seconds < budget.new_node_seconds
    assert hold.how == f"{budget.image_pull_seconds} s image pull + {budget.restart_seconds} s start"


def test_a_node_local_claim_stays_behind_so_the_budget_holds_for_a_fresh_node_start() -> None:
    budget = plan_of(shipped_stack("llama-70b-node-local-nvme")).delivery.budget
    assert budget_hold(budget, several_replicas=True).seconds == budget.new_node_seconds


def test_one_replicas_eviction_is_not_held() -> None:
    budget = plan_of(make_config(replicas=1)).delivery.budget
    assert budget_hold(budget, several_replicas=False).seconds == 0


def hold(seconds: int) -> BudgetHold:
    return BudgetHold(seconds, "test")


def test_aks_counts_the_budgets_hold_and_the_grace_period_against_one_drain_timeout() -> None:
    assert upgrade_warnings(AKS_UPGRADE, hold(1620), grace_seconds=180) == ()
    (warning,) = upgrade_warnings(AKS_UPGRADE, hold(1621), grace_seconds=180)
    assert "needs about 1801 s: 1621 s while the PodDisruptionBudget (maxUnavailable 1) holds" in warning
    assert "Ready on a new node (test)" in warning
    assert "+ 180 s server.termination_grace_period_seconds" in warning
    assert "--drain-timeout <minutes>" in warning and "(at least 31 minutes)" in warning


def test_gke_does_not_add_the_grace_period_to_its_wait_on_the_budget() -> None:
    assert upgrade_warnings(GKE_UPGRADE, hold(3600), grace_seconds=3600) == ()


def test_a_raised_aks_drain_timeout_silences_the_warning_it_covers() -> None:
    drain = ClusterConfig(profile="aks", upgrade_drain_timeout_minutes=31).upgrade_drain
    assert upgrade_warnings(drain, hold(1621), grace_seconds=180) == ()
    assert upgrade_warnings(drain, hold(1681), grace_seconds=180) != ()


def test_a_single_aks_replica_whose_grace_period_passes_the_drain_timeout_is_told_the_upgrade_fails() -> None:
    warnings = upgrade_warnings_of(cluster={"profile": "aks"}, server={"termination_grace_period_seconds": 1801})
    assert len(warnings) == 1
    assert "needs about 1801 s: 1801 s server.termination_grace_period_seconds." in warnings[0]
    assert "The upgrade then fails once the node pool's drain timeout" in warnings[0]


def test_a_profile_without_a_known_managed_upgrade_gets_no_upgrade_warning() -> None:
    changes = {"replicas": 2, "server": {"image_pull_seconds": 7200, "termination_grace_period_seconds": 7200}}
    assert upgrade_warnings_of(cluster={"profile": "generic"}, **changes) == []


def test_the_drain_timeout_is_refused_on_a_profile_whose_upgrade_wait_cannot_be_set() -> None:
    with pytest.raises(ConfigError, match=r"cluster.upgrade_drain_timeout_minutes: is set, but profile gke"):
        make_config(cluster={"profile": "gke", "upgrade_drain_timeout_minutes": 90})


def test_a_drain_timeout_below_akss_five_minute_minimum_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"cluster.upgrade_drain_timeout_minutes: 4 is out of range: must be ≥ 5"):
        make_config(cluster={"profile": "aks", "upgrade_drain_timeout_minutes": 4})
