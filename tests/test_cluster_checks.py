"""The cluster checks alone: pure functions over facts and the values the program renders."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.gpus import NVIDIA
from catalog.selectors import gpu_selector_terms
from cluster.capacity import Requirements, check_capacity, check_multinode, groups_that_fit
from cluster.checks import (
    NamespaceNeeds,
    check_driver,
    check_gpu,
    check_keda,
    check_namespace,
    check_prometheus,
    check_storage,
)
from cluster.facts import NodePool
from cluster.karpenter import candidate_nodes
from cluster.versions import keda_minimum
from tests.cluster_facts import crd, facts, keda_operator, namespace, node, nodepool, prometheus, storage_class
from tests.keda_spec import keda_features_of

GPU_TOLERATIONS = (NVIDIA.toleration,)
A100_80 = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
GFD_80 = gpu_selector_terms("gfd", ["A100-SXM4-80GB"])
KARPENTER_80 = gpu_selector_terms("karpenter", ["A100-SXM4-80GB"])
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def gpu(cluster, terms=GFD_80, need=4):  # type: ignore[no-untyped-def]
    return check_gpu(cluster, terms, need, [NVIDIA.toleration], "change the label", NVIDIA)[0]


def test_a_labelled_node_with_enough_gpus_and_the_gpu_taint_passes() -> None:
    finding = gpu(facts(node("g1", A100_80, gpus=8, taints=[GPU_TAINT])))
    assert (finding.level, finding.message) == (
        "ok",
        "1 node(s) match nvidia.com/gpu.product In [NVIDIA-A100-SXM4-80GB] with >= 4 allocatable nvidia.com/gpu (e.g. g1: 8).",
    )


def test_a_node_with_fewer_gpus_than_one_replica_blocks_naming_both_counts() -> None:
    finding = gpu(facts(node("g1", A100_80, gpus=2)))
    assert finding.level == "block"
    assert "offer at most 2 allocatable nvidia.com/gpu (g1); one replica needs 4." in finding.message


def test_a_taint_the_pods_do_not_tolerate_blocks_naming_the_taint() -> None:
    finding = gpu(facts(node("g1", A100_80, gpus=8, taints=[{"key": "sku", "value": "gpu", "effect": "NoSchedule"}])))
    assert finding.level == "block"
    assert "tainted sku=gpu:NoSchedule" in finding.message


def test_a_prefer_no_schedule_taint_does_not_keep_the_pods_off() -> None:
    taint = {"key": "sku", "value": "gpu", "effect": "PreferNoSchedule"}
    assert gpu(facts(node("g1", A100_80, gpus=8, taints=[taint]))).level == "ok"


def test_gpu_nodes_without_the_selected_label_block_and_show_the_labels_they_carry() -> None:
    finding = gpu(facts(node("g1", {"cloud.google.com/gke-accelerator": "nvidia-a100-80gb"}, gpus=8)))
    assert finding.level == "block"
    assert "(GPU nodes seen: g1: cloud.google.com/gke-accelerator=nvidia-a100-80gb, 8 x nvidia.com/gpu)" in finding.message
    assert finding.fix == "change the label"


def test_a_karpenter_nodepool_that_can_create_p4de_passes_from_zero_nodes() -> None:
    pool = nodepool(
        "gpu",
        [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p4de"]}],
        taints=[{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
    )
    finding = gpu(facts(pool), KARPENTER_80)
    assert finding.level == "ok"
    assert "node pool gpu (p4de.24xlarge) can create one" in finding.message


def test_a_karpenter_nodepool_of_40_gb_a100s_cannot_serve_an_80_gb_stack() -> None:
    pool = nodepool("gpu", [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p4d"]}])
    assert gpu(facts(pool), KARPENTER_80).level == "block"


def test_a_karpenter_nodepool_cannot_create_a_gpu_feature_discovery_label() -> None:
    pool = nodepool("gpu", [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p4de"]}])
    assert gpu(facts(pool), GFD_80).level == "block"


def test_a_nodepool_gpu_limit_below_one_replica_cannot_create_it() -> None:
    pool = nodepool("gpu", [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p4de"]}], gpu_limit="2")
    assert gpu(facts(pool), KARPENTER_80).level == "block"


def test_a_declared_autoscaled_pool_at_zero_nodes_passes() -> None:
    declared = NodePool("a100-pool", (), {"cloud.google.com/gke-accelerator": "nvidia-a100-80gb"}, gpus_per_node=8)
    from cluster.facts import facts_from_items

    cluster = facts_from_items([], "test", (declared,))
    assert gpu(cluster, gpu_selector_terms("gke-accelerator", ["A100-SXM4-80GB"])).level == "ok"


def test_a_driver_older_than_the_images_cuda_needs_blocks() -> None:
    labels = A100_80 | {"nvidia.com/cuda.driver-version.major": "550"}
    finding = check_driver(facts(node("g1", labels, gpus=8)), GFD_80, 13, "vllm/vllm-openai:v0.33.0", NVIDIA)[0]
    assert finding.level == "block"
    assert "needs NVIDIA driver >= 580, but g1 run(s) driver 550" in finding.message


def test_the_deprecated_gfd_driver_label_is_read_too() -> None:
    labels = A100_80 | {"nvidia.com/cuda.driver.major": "580"}
    assert check_driver(facts(node("g1", labels, gpus=8)), GFD_80, 13, "img", NVIDIA)[0].level == "ok"


def test_an_unknown_driver_warns_and_an_unknown_cuda_is_not_checked() -> None:
    cluster = facts(node("g1", A100_80, gpus=8))
    assert check_driver(cluster, GFD_80, 13, "img", NVIDIA)[0].level == "warn"
    assert check_driver(cluster, GFD_80, None, "img", NVIDIA) == []


def test_a_read_write_many_claim_on_the_default_ebs_class_blocks_and_names_the_efs_class() -> None:
    cluster = facts(
        storage_class("gp2", "kubernetes.io/aws-ebs", default=True), storage_class("efs-sc", "efs.csi.aws.com", "Immediate")
    )
    finding = check_storage(cluster, None, "ReadWriteMany")[0]
    assert finding.level == "block"
    assert finding.message.startswith("the default class gp2 (kubernetes.io/aws-ebs) supports ReadWriteOnce only")
    assert finding.fix.startswith("set cache.storage_class_name to efs-sc")


def test_a_storage_class_that_does_not_exist_blocks_listing_the_classes() -> None:
    finding = check_storage(facts(storage_class("gp3", "ebs.csi.aws.com")), "fast", "ReadWriteOnce")[0]
    assert (finding.level, finding.message) == ("block", "StorageClass fast does not exist (classes: gp3).")


def test_no_default_class_blocks_a_claim_without_a_class() -> None:
    assert check_storage(facts(storage_class("gp3", "ebs.csi.aws.com")), None, "ReadWriteOnce")[0].level == "block"


def test_rook_prefixed_cephfs_supports_read_write_many_and_rbd_does_not() -> None:
    cluster = facts(storage_class("fs", "rook-ceph.cephfs.csi.ceph.com"), storage_class("rbd", "rook-ceph.rbd.csi.ceph.com"))
    assert check_storage(cluster, "fs", "ReadWriteMany")[0].level == "ok"
    assert check_storage(cluster, "rbd", "ReadWriteMany")[0].level == "block"


def test_an_unknown_provisioner_warns_instead_of_guessing() -> None:
    assert check_storage(facts(storage_class("x", "example.com/csi")), "x", "ReadWriteMany")[0].level == "warn"


def test_an_immediately_bound_zonal_disk_warns() -> None:
    found = check_storage(facts(storage_class("pd", "pd.csi.storage.gke.io", "Immediate")), "pd", "ReadWriteOnce")
    assert [f.level for f in found] == ["ok", "warn"]


def test_keda_older_than_a_rendered_feature_blocks_naming_the_feature() -> None:
    cluster = facts(crd("scaledobjects.keda.sh"), keda_operator("ghcr.io/kedacore/keda:2.16.1"))
    finding = check_keda(cluster, {"fallback.behavior", "fallback with a metricType Value trigger"})[0]
    assert finding.level == "block"
    assert (
        finding.message
        == "KEDA 2.16.1 rejects this ScaledObject; it needs >= 2.18.0 for fallback with a metricType Value trigger."
    )


def test_keda_2_17_accepts_a_rendering_that_needs_only_fallback_behavior() -> None:
    cluster = facts(crd("scaledobjects.keda.sh"), keda_operator("ghcr.io/kedacore/keda:2.17.0@sha256:" + "0" * 64))
    assert check_keda(cluster, {"fallback.behavior"})[0].level == "ok"


def test_keda_without_its_crd_blocks_and_an_unread_version_warns() -> None:
    assert check_keda(facts(), {"scaledobject"})[0].level == "block"
    assert check_keda(facts(crd("scaledobjects.keda.sh")), {"scaledobject"})[0].level == "warn"


def test_the_keda_features_come_from_the_rendered_scaled_object_spec() -> None:
    spec = {"fallback": {"behavior": "static"}, "triggers": [{"metricType": "Value"}, {"metricType": "AverageValue"}]}
    assert keda_features_of(spec) == {"scaledobject", "fallback.behavior", "fallback with a metricType Value trigger"}
    assert keda_features_of({"triggers": [{"metricType": "Value"}]}) == {"scaledobject"}


def test_an_unknown_keda_feature_is_a_programming_error() -> None:
    with pytest.raises(KeyError):
        keda_minimum({"fallback.teleport"})


PROM_CRDS = (crd("servicemonitors.monitoring.coreos.com"), crd("prometheusrules.monitoring.coreos.com"))
LABELS = {"app.kubernetes.io/name": "vllm", "release": "monitoring"}
NS_LABELS = {"kubernetes.io/metadata.name": "vllm"}


def kps(release: str, namespace_selector: dict | None = None) -> dict:  # type: ignore[type-arg]
    selector = {"matchLabels": {"release": release}}
    return prometheus(
        f"{release}-kube-prometheus-prometheus",
        "monitoring",
        {
            "serviceMonitorSelector": selector,
            "ruleSelector": selector,
            "serviceMonitorNamespaceSelector": namespace_selector,
            "ruleNamespaceSelector": namespace_selector,
        },
    )


def prom(cluster, address=None):  # type: ignore[no-untyped-def]
    return check_prometheus(cluster, "ServiceMonitor", LABELS, LABELS, "vllm", NS_LABELS, address)


def test_a_prometheus_selecting_another_release_blocks_and_names_that_release() -> None:
    finding = prom(facts(*PROM_CRDS, kps("kps", {})))[0]
    assert finding.level == "block"
    assert finding.fix == "set monitoring.release: kps."


def test_a_null_namespace_selector_only_watches_the_prometheus_namespace() -> None:
    assert prom(facts(*PROM_CRDS, kps("monitoring", None)))[0].level == "block"
    assert prom(facts(*PROM_CRDS, kps("monitoring", {})))[0].level == "ok"


def test_keda_querying_another_prometheus_warns_with_the_right_address() -> None:
    found = prom(facts(*PROM_CRDS, kps("monitoring", {})), "http://prometheus.other.svc:9090")
    assert found[1].level == "warn"
    assert found[1].fix == "set autoscaling.server_address: http://monitoring-kube-prometheus-prometheus.monitoring.svc:9090."


def test_missing_prometheus_operator_crds_block() -> None:
    assert prom(facts())[0].level == "block"


def test_prometheus_objects_not_read_warn() -> None:
    assert prom(facts(*PROM_CRDS))[0].level == "warn"


def test_a_namespace_owned_by_another_stack_blocks() -> None:
    cluster = facts(namespace("vllm", {"app.kubernetes.io/instance": "vllm-dev"}))
    finding = check_namespace(cluster, NamespaceNeeds("vllm", True, "vllm-prod", "restricted", ""))[0]
    assert (finding.level, finding.message.split(";")[0]) == ("block", "vllm is owned by vllm-dev (app.kubernetes.io/instance)")


def test_a_namespace_owned_by_this_stack_or_left_alone_passes() -> None:
    cluster = facts(namespace("vllm", {"app.kubernetes.io/instance": "vllm-prod"}))
    assert check_namespace(cluster, NamespaceNeeds("vllm", True, "vllm-prod", "restricted", ""))[0].level == "ok"
    assert check_namespace(cluster, NamespaceNeeds("vllm", False, "vllm-dev", "restricted", ""))[0].level == "ok"


def test_an_existing_namespace_that_must_not_be_created_blocks_when_absent() -> None:
    assert (
        check_namespace(facts(namespace("default")), NamespaceNeeds("vllm", False, "vllm-prod", "restricted", ""))[0].level
        == "block"
    )


def test_a_pod_monitor_is_matched_against_the_pod_monitor_selector() -> None:
    spec = {
        "serviceMonitorSelector": {"matchLabels": {"release": "other"}},
        "serviceMonitorNamespaceSelector": {},
        "podMonitorSelector": {"matchLabels": {"release": "monitoring"}},
        "podMonitorNamespaceSelector": {},
        "ruleSelector": {},
        "ruleNamespaceSelector": {},
    }
    cluster = facts(crd("podmonitors.monitoring.coreos.com"), *PROM_CRDS, prometheus("p", "monitoring", spec))
    assert check_prometheus(cluster, "PodMonitor", LABELS, LABELS, "vllm", NS_LABELS)[0].level == "ok"
    assert check_prometheus(cluster, "ServiceMonitor", LABELS, LABELS, "vllm", NS_LABELS)[0].level == "block"


# --- capacity (cluster/capacity.py) ----------------------------------------------------------------------

PROD = Requirements(gpus_per_pod=4, min_replicas=2, max_replicas=4, spread_min_domains=4)
CPU_POOL = nodepool("default", [{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]}])
P4DE_POOL = [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p4de"]}]


def capacity(cluster, needs=PROD, terms=GFD_80):  # type: ignore[no-untyped-def]
    return check_capacity(cluster, terms, GPU_TOLERATIONS, needs)


def gpu_nodes(count: int, allocatable: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """`count` nodes of 8 A100 80 GB, with more allocatable resources."""
    nodes = [node(f"g{i}", A100_80, gpus=8) for i in range(1, count + 1)]
    for n in nodes:
        n["status"]["allocatable"].update(allocatable or {})
    return nodes


def test_below_min_domains_each_of_three_nodes_holds_one_replica_so_three_of_four_fit() -> None:
    (finding,) = capacity(facts(*gpu_nodes(3)))
    assert finding.level == "warn"
    assert finding.message.startswith("only 3 of the 4 replicas fit")
    assert "minDomains is 4 but only 3 node(s) can be domains" in finding.message


def test_at_min_domains_a_node_with_room_for_two_pods_holds_two() -> None:
    needs = Requirements(gpus_per_pod=4, min_replicas=2, max_replicas=8, spread_min_domains=4)
    assert capacity(facts(*gpu_nodes(4)), needs)[0].message.startswith("all 8 replicas fit")


def test_fewer_replicas_fit_than_the_stack_starts_with_blocks() -> None:
    (finding,) = capacity(facts(*gpu_nodes(1)))
    assert (finding.level, finding.message.split(" (")[0]) == ("block", "only 1 of the 4 replicas fit")


def test_tainted_and_cordoned_nodes_hold_no_replica_but_still_count_as_domains() -> None:
    tainted = node("t", A100_80, gpus=8, taints=[{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}])
    cordoned = node("c", A100_80, gpus=8) | {"spec": {"unschedulable": True}}
    (finding,) = capacity(facts(*gpu_nodes(2), tainted, cordoned))
    assert finding.message.startswith("only 2 of the 4 replicas fit (2 node(s)")
    assert "2 node(s) matching the affinity can hold only 0 pod(s)" in finding.message  # empty domains: minimum 0


def test_each_pod_of_a_group_needs_its_own_node() -> None:
    assert groups_that_fit([1, 1, 1], group_size=2, most=2) == 1
    assert groups_that_fit([2, 2], group_size=2, most=2) == 2
    assert groups_that_fit([4], group_size=2, most=2) == 0


def test_a_group_requesting_rdma_blocks_when_no_node_advertises_it() -> None:
    needs = Requirements(8, 1, 2, nodes_per_replica=2, rdma_resources={"rdma/ib": 1}, needs_leaderworkerset=True)
    rdma, fit = capacity(facts(*gpu_nodes(3)), needs)
    assert (rdma.check, rdma.level, fit.level) == ("rdma", "block", "block")
    assert "has allocatable rdma/ib, which every pod of a group requests (1" in rdma.message


def test_three_rdma_nodes_hold_one_of_two_groups_of_two() -> None:
    needs = Requirements(8, 1, 2, nodes_per_replica=2, rdma_resources={"rdma/ib": 1}, needs_leaderworkerset=True)
    (finding,) = capacity(facts(*gpu_nodes(3, {"rdma/ib": "1"})), needs)
    assert (finding.level, finding.message.split(" (")[0]) == ("warn", "only 1 of the 2 replicas fit")


def test_a_multi_node_replica_without_the_leaderworkerset_crd_blocks() -> None:
    needs = Requirements(8, 1, 2, nodes_per_replica=2, needs_leaderworkerset=True)
    assert check_multinode(facts(), needs)[0].level == "block"
    assert check_multinode(facts(crd("leaderworkersets.leaderworkerset.x-k8s.io")), needs)[0].level == "ok"


def test_a_nodepool_gpu_limit_bounds_the_nodes_it_can_add() -> None:
    pool = nodepool("gpu", P4DE_POOL, gpu_limit="16")  # two p4de.24xlarge: 2 domains < minDomains 4
    (finding,) = capacity(facts(pool), terms=KARPENTER_80)
    assert finding.message.startswith("only 2 of the 4 replicas fit (0 node(s) matching")
    assert "the node pools can add 2" in finding.message


def test_a_nodepool_cpu_limit_is_read_and_bounds_the_nodes_it_can_add() -> None:
    pool = nodepool("gpu", P4DE_POOL) | {"spec": {**nodepool("gpu", P4DE_POOL)["spec"], "limits": {"cpu": "200"}}}
    cluster = facts(pool)
    assert cluster.node_pools is not None and cluster.node_pools[0].cpu_limit == 200
    assert "the node pools can add 2" in capacity(cluster, terms=KARPENTER_80)[0].message  # 96 vCPUs each


def test_the_nodes_a_pool_already_created_count_against_its_limit() -> None:
    existing = node("p4de-1", {"karpenter.sh/nodepool": "gpu"}, gpus=8)
    pool = nodepool("gpu", P4DE_POOL, gpu_limit="16")
    assert "the node pools can add 1" in capacity(facts(pool, existing), terms=KARPENTER_80)[0].message


def test_an_unlimited_gpu_nodepool_holds_every_replica() -> None:
    assert capacity(facts(nodepool("gpu", P4DE_POOL)), terms=KARPENTER_80)[0].level == "ok"


def test_a_cpu_nodepool_is_not_credited_with_gpu_instance_types() -> None:
    assert [c.name for c in candidate_nodes(facts(CPU_POOL).node_pools[0])] == []  # type: ignore[index]
    assert gpu(facts(CPU_POOL), KARPENTER_80).level == "block"


def test_karpenter_requirements_are_decided_by_the_instance_table() -> None:
    def created(requirement: dict[str, Any]) -> list[str]:
        pool = facts(nodepool("p", [requirement])).node_pools[0]  # type: ignore[index]
        # g6's GPU count is not in the table; each instance type is a candidate per capacity type its pool allows
        return list(dict.fromkeys(c.name for c in candidate_nodes(pool) if not c.unknown))

    assert created({"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Lt", "values": ["2"]}) == ["p5.4xlarge"]
    assert created({"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["h200"]}) == [
        "p5e.48xlarge",
        "p5en.48xlarge",
    ]
    assert created({"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}) == []


def test_a_capacity_type_requirement_is_met_by_an_offering_not_by_the_instance() -> None:
    spot = {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}
    assert gpu(facts(nodepool("gpu", [*P4DE_POOL, spot])), KARPENTER_80).level == "ok"


def test_a_requirement_on_a_key_the_table_does_not_model_warns_and_names_it() -> None:
    zone = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-west-2a"]}
    finding = gpu(facts(nodepool("gpu", [*P4DE_POOL, zone])), KARPENTER_80)
    assert finding.level == "warn"
    assert "only if its requirements on topology.kubernetes.io/zone allow it" in finding.message


def test_a_nodepool_taint_the_pods_do_not_tolerate_keeps_it_from_creating_the_replicas() -> None:
    pool = nodepool("gpu", P4DE_POOL, taints=[{"key": "dedicated", "value": "training", "effect": "NoSchedule"}])
    assert gpu(facts(pool), KARPENTER_80).level == "block"
    assert capacity(facts(pool), terms=KARPENTER_80) == []


def test_the_aks_instance_type_values_hold_no_aws_instance_type() -> None:
    from catalog.gpu_labels import PROVIDER_LABELS
    from catalog.instances import INSTANCE_TYPES

    aws = {t.name for t in INSTANCE_TYPES}
    assert [v for labels in PROVIDER_LABELS.values() for v in labels.instance_types if v in aws] == []


def test_a_pool_that_fits_only_with_an_unmodelled_requirement_is_credited_with_a_warning() -> None:
    zone = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-west-2a"]}
    (finding,) = capacity(facts(nodepool("gpu", [*P4DE_POOL, zone])), terms=KARPENTER_80)
    assert finding.level == "warn"
    assert "Not known: whether gpu's requirements on topology.kubernetes.io/zone allow p4de.24xlarge." in finding.message


def test_a_declared_pool_adds_nodes_up_to_its_max_nodes_counting_the_ones_it_has() -> None:
    from cluster.facts import facts_from_items

    labels = {"cloud.google.com/gke-accelerator": "nvidia-a100-80gb"}
    declared = NodePool("a100-pool", (), labels, gpus_per_node=8, max_nodes=3)
    cluster = facts_from_items([node("n1", labels, gpus=8)], "test", (declared,))
    (finding,) = capacity(cluster, terms=gpu_selector_terms("gke-accelerator", ["A100-SXM4-80GB"]))
    assert finding.message.startswith("only 3 of the 4 replicas fit (1 node(s)")
    assert "the node pools can add 2" in finding.message


def test_a_keda_version_that_already_renders_fallback_behavior_gets_no_release_finding() -> None:
    from cluster.checks import check_keda_release

    assert check_keda_release("2.20.1", "2.17") == []


def test_an_older_installed_keda_than_fallback_behavior_gets_no_release_finding() -> None:
    from cluster.checks import check_keda_release

    assert check_keda_release("2.16.1", "2.16") == []
