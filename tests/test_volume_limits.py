"""What a model volume's provider enforces: one file system's rate shared by the replicas loading from it at once,
the IOPS a gp3 volume may carry for its size, a class that cannot be shared, and a claim that keeps its own class."""

from __future__ import annotations

from typing import Any

from tests.factories import make_config
from tests.kubernetes_fixtures import manifests, one, plan_of, stack_with, workload
from tests.test_deployable import refusal
from tests.test_landing import refusals, refused_key

LLAMA_70B = {"id": "meta-llama/Llama-3.1-70B-Instruct"}
TP4 = {"max_model_len": 8192, "tensor_parallel_size": 4}
EKS = {"profile": "eks-karpenter"}
QWEN_SMALL = {"id": "Qwen/Qwen3-0.6B"}
FAST_GP3 = {"provisioned_throughput_mib_per_s": 1000}


def seventy_b(**changes: Any) -> dict[str, Any]:
    """Llama-3.1-70B on 4 A100-80GB, two replicas, on the EKS profile."""
    return {"model": LLAMA_70B, "engine": TP4, "replicas": 2, "cluster": EKS, **changes}


def test_replicas_sharing_one_file_system_split_its_rate_between_them() -> None:
    delivery = plan_of(stack_with("prod-on-efs")[0]).delivery
    assert (delivery.volume and delivery.volume.access_mode, delivery.throughput.mib_per_s) == ("ReadWriteMany", 25.0)


def test_the_split_rate_names_how_many_replicas_share_the_file_system() -> None:
    source = plan_of(stack_with("prod-on-efs")[0]).delivery.throughput.source
    assert "shared by the 4 replicas that can load at once" in source and "100 MiB/s" in source


def test_the_startup_probe_of_a_shared_file_system_covers_the_load_at_the_split_rate() -> None:
    delivery = plan_of(stack_with("prod-on-efs")[0]).delivery
    load = delivery.weights_on_disk_gib * 1024 / 25.0
    assert round(delivery.budget.probe.load_seconds) == round(load) and delivery.budget.probe.total_seconds > load


def test_a_single_replica_reads_its_file_system_at_the_whole_rate() -> None:
    cfg = make_config(replicas=1, cache={"storage_class_name": "efs-sc", "access_mode": "ReadWriteMany"})
    assert plan_of(cfg).delivery.throughput.mib_per_s == 100.0


def test_replicas_on_claims_of_their_own_each_read_at_the_whole_rate() -> None:
    cfg = make_config(**seventy_b(delivery={"mode": "per_replica_volume"}))
    assert plan_of(cfg).delivery.throughput.mib_per_s == 128.0  # the EKS profile's default gp2 class


def test_a_named_block_class_under_several_replicas_gives_each_replica_its_own_claim() -> None:
    delivery = plan_of(make_config(**seventy_b(cache={"storage_class_name": "gp3"}))).delivery
    assert (delivery.mode, delivery.volume and delivery.volume.access_mode) == ("per_replica_volume", "ReadWriteOnce")


def test_a_named_block_class_renders_a_claim_template_of_that_class() -> None:
    objects = manifests(*stack_with("prod-on-efs", cache={"storage_class_name": "gp3"}, delivery={"mode": None}))
    template = workload(objects)["spec"]["volumeClaimTemplates"][0]["spec"]
    assert (template["storageClassName"], template["accessModes"]) == ("gp3", ["ReadWriteOnce"])


def test_a_named_class_the_catalog_does_not_know_stays_one_shared_claim() -> None:
    delivery = plan_of(make_config(**seventy_b(cache={"storage_class_name": "cephfs-fast"}))).delivery
    assert (delivery.mode, delivery.volume and delivery.volume.access_mode) == ("shared_volume", "ReadWriteMany")


def test_a_shared_claim_of_a_block_class_is_refused_naming_the_class() -> None:
    issue = refused_key(
        "cache.storage_class_name", delivery={"mode": "shared_volume"}, replicas=2, cache={"storage_class_name": "gp3"}
    )
    assert "'gp3'" in issue.message and "ReadWriteOnce only" in issue.message and "per_replica_volume" in issue.fix


def test_a_multi_node_group_on_a_block_class_is_refused_naming_the_class() -> None:
    engine = {"nnodes": 2, "tensor_parallel_size": 8, "max_model_len": 8192}
    issue = refused_key("cache.storage_class_name", engine=engine, cache={"storage_class_name": "standard-rwo"})
    assert "pd.csi.storage.gke.io" in issue.message


def test_the_program_registers_nothing_for_a_shared_claim_of_a_block_class() -> None:
    error, registered = refusal({"delivery": {"mode": "shared_volume"}, "replicas": 2, "cache": {"storage_class_name": "gp3"}})
    assert "cache.storage_class_name" in error and registered == 0


def test_a_provisioned_class_grows_a_small_models_claim_to_what_its_iops_need() -> None:
    cfg = make_config(model=QWEN_SMALL, replicas=2, cluster=EKS, cache=FAST_GP3)
    assert plan_of(cfg).delivery.cache_size_gib == 8  # 4,000 IOPS at 500 per GiB


def test_the_grown_claim_is_what_the_claim_template_asks_for() -> None:
    objects = manifests(*stack_with("dev", model=QWEN_SMALL, replicas=2, cluster=EKS, cache=FAST_GP3))
    claim = workload(objects)["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"]
    assert (claim, one(objects, "StorageClass")["parameters"]["iops"]) == ("8Gi", "4000")


def test_a_stated_size_too_small_for_the_iops_is_refused_naming_the_size() -> None:
    issue = refused_key("cache.size_gib", model=QWEN_SMALL, replicas=2, cluster=EKS, cache={**FAST_GP3, "size_gib": 3})
    assert "4000 IOPS" in issue.message and "at least 8" in issue.fix


def test_a_stated_size_that_carries_the_iops_is_accepted() -> None:
    assert refusals(model=QWEN_SMALL, replicas=2, cluster=EKS, cache={**FAST_GP3, "size_gib": 8}) == []


def test_a_provisioned_class_beside_an_existing_claim_is_refused() -> None:
    changes = {"cluster": EKS, "cache": {**FAST_GP3, "existing_claim": "my-models"}}
    issue = refused_key("cache.provisioned_throughput_mib_per_s", **changes)
    assert "cache.existing_claim is 'my-models'" in issue.message


def test_the_program_registers_nothing_for_a_provisioned_class_beside_an_existing_claim() -> None:
    error, registered = refusal({"cluster": EKS, "cache": {**FAST_GP3, "existing_claim": "my-models"}})
    assert "cache.provisioned_throughput_mib_per_s" in error and registered == 0
