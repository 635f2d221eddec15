"""The cold start: a volume's read throughput from its StorageClass, the probe that must cover the load, the class
the stack can create, and the image pull from the release's image size."""

from __future__ import annotations

import math
from typing import Any

import pytest

from catalog.storage import WELL_KNOWN_CLASSES, ClassSpec, volume_throughput
from catalog.vllm_images import image_size
from cluster.checks import DeliveryTerms, check_read_throughput
from cluster.facts import facts_from_items
from config.errors import ConfigError
from tests.kubernetes_fixtures import checked, configured, manifests, of_kind, one, plan_of, workload
from validation import check_stack

LLAMA_70B = {"id": "meta-llama/Llama-3.1-70B-Instruct"}
TP4 = {"max_model_len": 8192, "tensor_parallel_size": 4}
EKS = {"profile": "eks-karpenter"}


def seventy_b(**changes: Any) -> dict[str, Any]:
    """Llama-3.1-70B on 4 A100-80GB, two replicas (per-replica claims), on the EKS profile."""
    return {"model": LLAMA_70B, "engine": TP4, "replicas": 2, "cluster": EKS, **changes}


@pytest.mark.parametrize(
    ("spec", "size_gib", "mib_per_s"),
    [
        (ClassSpec("ebs.csi.aws.com", {"type": "gp3"}), 165, 125.0),
        (ClassSpec("ebs.csi.aws.com", {"type": "gp3", "throughput": "500"}), 165, 500.0),
        (ClassSpec("kubernetes.io/aws-ebs", {"type": "gp2"}), 165, 128.0),
        (ClassSpec("kubernetes.io/aws-ebs", {"type": "gp2"}), 200, 250.0),
        (ClassSpec("ebs.csi.aws.com", {"type": "io2", "iops": "8000"}), 165, 1000.0),
        (ClassSpec("pd.csi.storage.gke.io", {"type": "pd-balanced"}), 200, 196.0),
        (
            ClassSpec("pd.csi.storage.gke.io", {"type": "hyperdisk-balanced", "provisioned-throughput-on-create": "600Mi"}),
            200,
            600.0,
        ),
        (ClassSpec("disk.csi.azure.com", {"skuname": "StandardSSD_LRS"}), 200, 57.2),
        (ClassSpec("disk.csi.azure.com", {"skuName": "Premium_LRS"}), 200, 119.2),
        (ClassSpec("filestore.csi.storage.gke.io", {"tier": "premium"}), 2560, 1200.0),
    ],
    ids=[
        "gp3",
        "gp3 provisioned",
        "gp2 small",
        "gp2 large",
        "io2",
        "pd-balanced",
        "hyperdisk",
        "standard ssd",
        "premium",
        "filestore",
    ],
)
def test_a_volume_reads_at_its_provisioner_s_documented_rate(spec: ClassSpec, size_gib: int, mib_per_s: float) -> None:
    assert volume_throughput(spec, size_gib).mib_per_s == mib_per_s


def test_a_ceph_class_gets_the_conservative_figure_marked_unknown() -> None:
    found = volume_throughput(ClassSpec("rook-ceph.cephfs.csi.ceph.com", {}), 200)
    assert (found.mib_per_s, found.known) == (100.0, False)


def test_the_profile_s_default_gp2_class_sets_a_70b_stack_s_read_throughput() -> None:
    delivery = plan_of(configured(**seventy_b())[0]).delivery
    assert (delivery.mode, delivery.throughput.mib_per_s) == ("per_replica_volume", 128.0)


def test_the_startup_probe_follows_a_default_gp3_class_and_covers_the_load() -> None:
    probe = plan_of(configured(**seventy_b(cache={"storage_class_name": "gp3"}))[0]).delivery.budget.probe
    covered = probe.total_seconds >= probe.load_seconds + probe.engine_start_seconds + probe.cuda_graph_seconds
    assert (covered, round(probe.load_seconds)) == (True, 1077)  # 131.4 GiB at gp3's default 125 MiB/s


def test_a_fixed_startup_probe_shorter_than_the_load_blocks_naming_the_fix() -> None:
    changes = seventy_b(cache={"storage_class_name": "gp3"}, probes={"startup_seconds": 1020})
    issues = [issue for issue in check_stack(*checked(**changes)) if issue.key == "probes.startup_seconds"]
    assert len(issues) == 1 and "throughput" in issues[0].fix and "object_storage" in issues[0].fix


def test_an_unknown_class_warns_that_the_budget_assumes_a_conservative_figure() -> None:
    delivery = plan_of(configured(replicas=2, cache={"storage_class_name": "local-nvme"})[0]).delivery
    assert any("StorageClass local-nvme" in w and "probes.load_throughput_gib_per_s" in w for w in delivery.warnings)


def test_a_provisioned_throughput_renders_a_gp3_class_the_claims_use() -> None:
    objects = manifests(*configured(**seventy_b(cache={"provisioned_throughput_mib_per_s": 1000})))
    created = one(objects, "StorageClass")
    template = workload(objects)["spec"]["volumeClaimTemplates"][0]["spec"]
    assert (created["parameters"], template["storageClassName"]) == (
        {"type": "gp3", "throughput": "1000", "iops": "4000"},
        created["metadata"]["name"],
    )


def test_a_provisioned_throughput_is_the_budget_s_read_throughput() -> None:
    delivery = plan_of(configured(**seventy_b(cache={"provisioned_throughput_mib_per_s": 750}))[0]).delivery
    assert delivery.throughput.mib_per_s == 750.0


def test_no_storage_class_is_rendered_unless_asked() -> None:
    assert of_kind(manifests(*configured(**seventy_b())), "StorageClass") == []


def test_a_provisioned_throughput_off_eks_is_refused() -> None:
    changes = seventy_b(cluster={"profile": "gke"}, cache={"provisioned_throughput_mib_per_s": 500})
    with pytest.raises(ConfigError, match=r"provisioned_throughput_mib_per_s: is 500, but cluster\.profile is gke"):
        configured(**changes)


def test_the_cluster_s_class_slower_than_the_budget_blocks() -> None:
    item = {
        "kind": "StorageClass",
        "metadata": {"name": "slow"},
        "provisioner": "kubernetes.io/aws-ebs",
        "parameters": {"type": "gp2"},
    }
    facts = facts_from_items([item], "test")
    found = check_read_throughput(facts, "slow", 165, DeliveryTerms(1000.0, 131.4, 225.0, 700))
    assert [(f.level, "128 MiB/s" in f.message) for f in found] == [("block", True)]


def test_the_cluster_s_class_as_fast_as_the_budget_passes() -> None:
    item = {
        "kind": "StorageClass",
        "metadata": {"name": "fast"},
        "provisioner": "ebs.csi.aws.com",
        "parameters": {"type": "gp3", "throughput": "1000"},
    }
    facts = facts_from_items([item], "test")
    assert check_read_throughput(facts, "fast", 165, DeliveryTerms(1000.0, 131.4, 225.0, 700)) == []


def test_the_image_pull_is_the_release_s_image_over_the_registry_rate() -> None:
    pull = plan_of(configured(server={"registry_throughput_mib_per_s": 100})[0]).delivery.budget.terms[0]
    assert pull.seconds == pytest.approx(image_size("0.33.0").gib * 1024 / 100, abs=1)


def test_a_set_image_pull_time_wins() -> None:
    assert plan_of(configured(server={"image_pull_seconds": 42})[0]).delivery.budget.image_pull_seconds == 42


def test_the_report_separates_a_node_with_the_image_from_a_new_node() -> None:
    budget = plan_of(configured(server={"image_pull_seconds": 42})[0]).delivery.budget
    assert budget.new_replica_sum().endswith(f"{budget.restart_seconds + 42} s on a new node (+ 42 s image pull)")


def test_a_new_replica_is_expected_in_the_probes_terms_without_the_safety_factor() -> None:
    budget = plan_of(configured()[0]).delivery.budget
    probe = budget.probe
    terms = probe.load_seconds + probe.engine_start_seconds + probe.cuda_graph_seconds
    assert budget.expected_start_seconds == math.ceil(terms) < probe.total_seconds


def test_a_set_startup_budget_is_the_expected_start() -> None:
    budget = plan_of(configured(probes={"startup_seconds": 300})[0]).delivery.budget
    assert budget.expected_start_seconds == 300


def test_every_profile_s_default_class_is_in_the_storage_table() -> None:
    from catalog.profiles import PROFILES

    named = {p.storage_class for p in PROFILES.values()} | {p.rwx_storage_class for p in PROFILES.values()}
    assert named - {None} <= set(WELL_KNOWN_CLASSES)


def test_the_benchmark_prints_each_reference_stack_s_budget_beside_the_anchors() -> None:
    import importlib.util

    from tests.factories import REPO

    spec = importlib.util.spec_from_file_location("benchmark", REPO / "scripts" / "benchmark.py")
    assert spec is not None and spec.loader is not None
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)
    text = "\n".join(benchmark.cold_start_rows())
    names = [path.rsplit("/", 1)[1] for path in benchmark.COLD_START_STACKS]
    assert all(f"| {name} |" in text for name in names)
    assert all(source in text for *_, source in benchmark.COLD_START_ANCHORS)
