"""A model change on per-replica volumes that alters the StatefulSet's claim template replaces it, stopping every
replica at once: the cluster check sees the StatefulSet in place and blocks unless the outage is accepted."""

from __future__ import annotations

from typing import Any

from cluster.facts import facts_from_items
from cluster.findings import Finding
from tests.factories import make_config
from tests.kubernetes_fixtures import plan_of
from validation.cluster import check_cluster

PER_REPLICA = {"replicas": 3, "delivery": {"mode": "per_replica_volume"}}


def _statefulset(storage: str, storage_class: str | None = None, name: str = "vllm-test-server") -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}}
    if storage_class:
        spec["storageClassName"] = storage_class
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "vllm-test"},
        "spec": {"volumeClaimTemplates": [{"metadata": {"name": "model-cache"}, "spec": spec}]},
    }


def _storage_findings(items: list[dict[str, Any]], **changes: Any) -> list[Finding]:
    plan = plan_of(make_config(**{**PER_REPLICA, **changes}), instance="vllm-test")
    result = check_cluster(plan, facts_from_items(items, "snapshot"))
    return [finding for finding in result.findings if "claim template" in finding.message]


def _planned_storage() -> str:
    return f"{plan_of(make_config(**PER_REPLICA), instance='vllm-test').delivery.cache_size_gib}Gi"


def test_a_statefulset_with_a_smaller_claim_template_blocks_naming_both_sizes_and_the_outage() -> None:
    [finding] = _storage_findings([_statefulset("10Gi")])
    assert finding.level == "block"
    assert f"(10Gi -> {_planned_storage()})" in finding.message and "all 3 replica(s) stop at once" in finding.message


def test_the_fix_names_the_old_size_and_the_acknowledgement_key() -> None:
    [finding] = _storage_findings([_statefulset("10Gi")])
    assert "cache.size_gib to 10" in finding.fix and "delivery.accept_replacement_outage: true" in finding.fix


def test_an_accepted_replacement_outage_is_a_warning() -> None:
    [finding] = _storage_findings(
        [_statefulset("10Gi")], delivery={"mode": "per_replica_volume", "accept_replacement_outage": True}
    )
    assert finding.level == "warn" and "Accepted by delivery.accept_replacement_outage" in finding.message


def test_a_changed_storage_class_is_a_claim_template_change_too() -> None:
    [finding] = _storage_findings([_statefulset(_planned_storage(), storage_class="gp2")])
    assert "class gp2 -> default" in finding.message


def test_the_same_claim_template_is_a_rolling_update_without_a_finding() -> None:
    assert _storage_findings([_statefulset(_planned_storage())]) == []


def test_a_statefulset_of_another_stack_is_not_this_stacks() -> None:
    assert _storage_findings([_statefulset("10Gi", name="vllm-other-server")]) == []


def test_statefulsets_not_read_give_no_finding() -> None:
    assert _storage_findings([]) == []
