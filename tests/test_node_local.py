"""The node-local cache tier: per-replica claims on a class whose volumes live on one node's disk
(delivery.node_local), its read rate, the new replica on its own node and on a fresh one, the refusals, the
cluster check against a local-path snapshot, and the figures docs/model-delivery.md states."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest

from catalog.storage import NODE_LOCAL_MEDIA, NODE_LOCAL_PROVISIONERS, ClassSpec, volume_throughput
from cluster.snapshot import read_snapshots
from config.errors import ConfigError
from plan import resolve
from plan.names import instance_name
from tests.cluster_facts import fixture
from tests.kubernetes_fixtures import configured, manifests, plan_of, workload
from tests.test_k8s_schema import strict_validate
from validation.cluster import check_cluster
from validation.sources import load_stack_file_with_secrets

REPO = Path(__file__).resolve().parent.parent
DOC = REPO / "docs" / "model-delivery.md"
EXAMPLE = "stacks/examples/Pulumi.llama-70b-node-local-nvme.yaml"
LLAMA_70B = {"id": "meta-llama/Llama-3.1-70B-Instruct"}
TP4 = {"max_model_len": 8192, "tensor_parallel_size": 4}


def node_local(medium: str = "nvme", storage_class: str | None = "local-nvme", **changes: Any) -> dict[str, Any]:
    """Llama-3.1-70B on 4 A100-80GB, two replicas on per-replica claims of a node-local class."""
    cache = {"storage_class_name": storage_class} if storage_class else {}
    base = {
        "model": LLAMA_70B,
        "engine": TP4,
        "replicas": 2,
        "cache": cache,
        "delivery": {"mode": "per_replica_volume", "node_local": medium},
    }
    return base | changes


def test_a_node_local_class_reads_at_the_stated_medium_s_rate() -> None:
    delivery = plan_of(configured(**node_local())[0]).delivery
    assert delivery.throughput.mib_per_s == NODE_LOCAL_MEDIA["nvme"].mib_per_s
    assert [w for w in delivery.warnings if "read throughput" in w] == []


def test_the_report_says_a_lost_node_means_a_download_on_another_naming_the_claim() -> None:
    plan = plan_of(configured(**node_local())[0])
    claim = f"model-cache-{workload(manifests(*configured(**node_local())))['metadata']['name']}-<ordinal>"
    assert [w for w in plan.delivery.warnings if "lost or replaced node" in w and claim in w and "downloads" in w] != []


def test_per_replica_claims_off_a_node_local_class_carry_no_node_loss_warning() -> None:
    changes = node_local(delivery={"mode": "per_replica_volume"}, cache={})
    assert [w for w in plan_of(configured(**changes)[0]).delivery.warnings if "lost or replaced node" in w] == []


def test_the_startup_budget_loads_a_70b_from_local_nvme_in_under_two_minutes() -> None:
    probe = plan_of(configured(**node_local())[0]).delivery.budget.probe
    assert probe.load_seconds == pytest.approx(131.4 * 1024 / 1430.5, abs=0.5) and probe.load_seconds < 120


def test_a_boot_disk_medium_warns_that_its_rate_is_not_known() -> None:
    delivery = plan_of(configured(**node_local("boot_disk"))[0]).delivery
    assert delivery.throughput.mib_per_s == 100.0
    assert any("delivery.node_local: boot_disk" in w and "probes.load_throughput_gib_per_s" in w for w in delivery.warnings)


def test_a_node_local_provisioner_alone_says_nothing_of_its_disk() -> None:
    for provisioner in NODE_LOCAL_PROVISIONERS:
        assert not volume_throughput(ClassSpec(provisioner, {}), 200).known


def test_a_new_replica_on_a_fresh_node_downloads_the_weights_again() -> None:
    budget = plan_of(configured(**node_local(server={"image_pull_seconds": 42}))[0]).delivery.budget
    download = round(budget.download_seconds)
    first = budget.expected_start_seconds
    assert budget.new_replica_sum().endswith(
        f"{first + 42 + download} s on a fresh node ({first} s start compiling in full + 42 s image pull + {download} s "
        "download)"
    )


def test_the_not_ready_alerts_wait_out_a_fresh_node_s_download() -> None:
    local = plan_of(configured(**node_local())[0]).delivery
    refetch = math.ceil(local.budget.first_time_download_seconds * local.budget.probe.safety_factor)
    assert refetch > 0
    assert local.new_replica_seconds == local.budget.image_pull_seconds + refetch + local.budget.probe.total_seconds + 120


def test_a_node_local_stack_renders_a_statefulset_whose_claims_use_the_class() -> None:
    objects = manifests(*configured(**node_local()))
    set_ = workload(objects)
    template = set_["spec"]["volumeClaimTemplates"][0]["spec"]
    assert (set_["kind"], template["storageClassName"], template["accessModes"]) == (
        "StatefulSet",
        "local-nvme",
        ["ReadWriteOnce"],
    )
    assert set_["spec"]["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}


def test_every_object_of_a_node_local_stack_validates_strictly() -> None:
    for obj in manifests(*configured(**node_local())):
        strict_validate(obj)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"delivery": {"mode": "shared_volume", "node_local": "nvme"}},
            r"delivery\.node_local: is nvme, but delivery\.mode is shared_volume",
        ),
        ({"cache": {}}, r"cache\.storage_class_name: is unset, but delivery\.node_local is nvme"),
        (
            {"scheduling": {"spread": "zone", "when_unsatisfiable": "DoNotSchedule"}},
            r"scheduling\.when_unsatisfiable: is DoNotSchedule with scheduling\.spread zone",
        ),
    ],
    ids=["shared volume", "no class", "zone spread that must hold"],
)
def test_a_node_local_stack_that_cannot_hold_is_refused_naming_the_key(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        configured(**node_local() | changes)


def test_a_zone_spread_that_may_be_broken_is_accepted() -> None:
    changes = node_local(scheduling={"spread": "zone", "when_unsatisfiable": "ScheduleAnyway"})
    assert plan_of(configured(**changes)[0]).delivery.node_local == "nvme"


# --- the cluster check against tests/data/clusters/onprem-local-path.json ---------------------------------


def storage_findings(**changes: Any) -> list[tuple[str, str]]:
    cfg = configured(**changes)[0]
    result = check_cluster(plan_of(cfg), read_snapshots([fixture("onprem-local-path")], ()))
    return [(f.level, f.message) for f in result.findings if f.check == "storage"]


def test_a_waiting_local_class_passes_with_an_honest_capacity_warning() -> None:
    found = storage_findings(**node_local(storage_class="local-path"))
    assert [level for level, _ in found] == ["ok", "ok", "warn"]
    assert "GiB claim per replica" in found[-1][1] and "not checked" in found[-1][1]


def test_an_immediately_binding_local_class_blocks_naming_the_binding_mode() -> None:
    found = storage_findings(**node_local(storage_class="local-path-immediate"))
    assert [message for level, message in found if level == "block"] == [
        next(m for _, m in found if "binds Immediately: the node-local volume" in m)
    ]


def test_a_node_local_default_class_without_the_key_warns_to_set_it() -> None:
    found = storage_findings(model=LLAMA_70B, engine=TP4, replicas=2)
    assert any(level == "warn" and "delivery.node_local is unset" in message for level, message in found)


# --- docs/model-delivery.md ----------------------------------------------------------------------------


def doc_rows(marker: str) -> list[list[str]]:
    text = DOC.read_text().split(f"<!-- docs-check: {marker} -->\n", 1)[1].split("\n\n", 1)[0]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in text.splitlines()[2:]]


def test_the_doc_s_media_table_is_the_catalog_s() -> None:
    rates = {row[0].strip("`"): row[1].split(" MiB/s")[0] for row in doc_rows("node-local media")}
    assert rates == {medium: f"{found.mib_per_s:g}" for medium, found in NODE_LOCAL_MEDIA.items()}


def test_the_doc_names_every_node_local_provisioner() -> None:
    text = DOC.read_text()
    assert [p for p in NODE_LOCAL_PROVISIONERS if f"`{p}`" not in text] == []


def test_the_doc_s_example_figures_are_the_example_s_report() -> None:
    cfg = load_stack_file_with_secrets(REPO / EXAMPLE)[0]
    budget = resolve(cfg, instance_name("llama-70b-node-local-nvme")).delivery.budget
    warm, pull, download = budget.expected_start_seconds, budget.image_pull_seconds, round(budget.download_seconds)
    stated = re.search(
        r"loads in (\d+) s at ([\d.]+) MiB/s: a\nreplica on the node that holds its claim is expected in (\d+) s \(the probe "
        r"allows (\d+) s\); on a fresh node it pulls\nthe image \((\d+) s\) and downloads the weights again \((\d+) s at "
        r"[\d.]+ GiB/s\), (\d+) s",
        DOC.read_text(),
    )
    assert stated is not None
    assert [float(n) for n in stated.groups()] == [
        round(budget.probe.load_seconds),
        budget.throughput.mib_per_s,
        warm,
        budget.probe.total_seconds,
        pull,
        download,
        warm + pull + download,
    ]
