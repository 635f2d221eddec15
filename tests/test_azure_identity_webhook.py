"""Azure Workload Identity against the cluster (cluster/identity.py, docs/sources.md §S12): its webhook gives a
labelled pod the federated token; a stack reading its bucket with it blocks where the webhook is not installed,
and says so when the webhook configurations were not read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cluster.identity import AZURE_WEBHOOK, WEBHOOKS_COMMAND, check_azure_identity_webhook
from cluster.snapshot import read_snapshots
from tests.cluster_facts import facts, fixture, list_file
from tests.factories import make_config
from tests.kubernetes_fixtures import plan_of
from validation.cluster import check_snapshots

AZURE_WI = {
    "mode": "object_storage",
    "object_storage": {
        "uri": "az://models/llama/",
        "azure_storage_account": "mymodels",
        "service_account_annotations": {"azure.workload.identity/client-id": "00000000-0000-0000-0000-000000000000"},
    },
}


def webhook(name: str) -> dict[str, Any]:
    return {"kind": "MutatingWebhookConfiguration", "apiVersion": "admissionregistration.k8s.io/v1", "metadata": {"name": name}}


OTHER = webhook("aks-webhook-admission-controller")


def findings(*items: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f.level, f.message + " " + f.fix) for f in check_azure_identity_webhook(facts(*items), "azure-workload-identity")]


def test_a_cluster_without_the_webhook_blocks_naming_it_and_the_aks_setting() -> None:
    ((level, text),) = findings(OTHER)
    assert level == "block" and AZURE_WEBHOOK in text and "--enable-workload-identity" in text


def test_a_cluster_with_the_webhook_passes() -> None:
    assert [level for level, _ in findings(OTHER, webhook(AZURE_WEBHOOK))] == ["ok"]


def test_webhooks_not_in_the_snapshot_warn_naming_the_command_to_add() -> None:
    ((level, text),) = findings()
    assert level == "warn" and WEBHOOKS_COMMAND in text


def test_another_identity_is_not_checked_for_the_webhook() -> None:
    assert check_azure_identity_webhook(facts(OTHER), "irsa") == []


def test_a_webhook_snapshot_keeps_the_names_the_check_reads(tmp_path: Path) -> None:
    snapshot = list_file(tmp_path / "webhooks.json", OTHER, webhook(AZURE_WEBHOOK))
    assert read_snapshots([fixture("aks-azure-disk"), snapshot]).mutating_webhooks == {OTHER["metadata"]["name"], AZURE_WEBHOOK}


def test_the_stacks_cluster_check_blocks_without_the_webhook(tmp_path: Path) -> None:
    plan = plan_of(make_config(cluster={"profile": "aks"}, delivery=AZURE_WI))
    result = check_snapshots(plan, [fixture("aks-azure-disk"), list_file(tmp_path / "wh.json", OTHER)])
    assert result.blocked and [f.level for f in result.findings if f.check == "identity"] == ["block"]
