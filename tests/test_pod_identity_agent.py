"""EKS Pod Identity against the cluster (cluster/identity.py, docs/sources.md §S12): its credentials come from an
agent on each node, the add-on's kube-system/eks-pod-identity-agent DaemonSet or EKS Auto Mode's own; a stack
reading its bucket with it blocks where neither runs, and says so when the DaemonSets were not read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from catalog.gpus import NVIDIA
from cluster.identity import AUTO_MODE_CRD, AUTO_MODE_LABEL, DAEMONSETS_COMMAND, POD_IDENTITY_AGENT, check_pod_identity_agent
from cluster.snapshot import read_snapshots
from tests.cluster_facts import facts, fixture, list_file, node
from tests.factories import make_config
from tests.kubernetes_fixtures import plan_of
from validation.cluster import check_snapshots

POD_IDENTITY = {
    "mode": "object_storage",
    "object_storage": {"uri": "s3://models/llama/", "workload_identity": "eks-pod-identity"},
}
GPU_NODE = node("ip-10-0-3-9", {"node.kubernetes.io/instance-type": "p4d.24xlarge"}, gpus=8)


def daemonset(namespace: str, name: str) -> dict[str, Any]:
    return {"kind": "DaemonSet", "apiVersion": "apps/v1", "metadata": {"name": name, "namespace": namespace}}


KUBE_PROXY = daemonset("kube-system", "kube-proxy")
AGENT = daemonset(*POD_IDENTITY_AGENT.split("/"))


def findings(*items: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f.level, f.message + " " + f.fix) for f in check_pod_identity_agent(facts(*items), [], "eks-pod-identity", NVIDIA)]


def test_a_cluster_without_the_agent_blocks_naming_it_and_the_add_on() -> None:
    ((level, text),) = findings(GPU_NODE, KUBE_PROXY)
    assert level == "block" and POD_IDENTITY_AGENT in text and "--addon-name eks-pod-identity-agent" in text


def test_a_cluster_running_the_agent_passes() -> None:
    assert [level for level, _ in findings(GPU_NODE, KUBE_PROXY, AGENT)] == ["ok"]


def test_daemonsets_not_in_the_snapshot_warn_naming_the_command_to_add() -> None:
    ((level, text),) = findings(GPU_NODE)
    assert level == "warn" and DAEMONSETS_COMMAND in text


def test_eks_auto_mode_gpu_nodes_need_no_agent_daemonset() -> None:
    auto = node("i-0abc", {AUTO_MODE_LABEL[0]: AUTO_MODE_LABEL[1]}, gpus=8)
    ((level, text),) = findings(auto, KUBE_PROXY)
    assert level == "ok" and "Auto Mode" in text


def test_an_auto_mode_cluster_without_the_daemonset_warns_that_only_its_auto_mode_nodes_serve_it() -> None:
    auto_crd = {
        "kind": "CustomResourceDefinition",
        "apiVersion": "apiextensions.k8s.io/v1",
        "metadata": {"name": AUTO_MODE_CRD},
    }
    ((level, text),) = findings(GPU_NODE, KUBE_PROXY, auto_crd)
    assert level == "warn" and "only EKS Auto Mode nodes serve it" in text


def test_another_identity_is_not_checked_for_the_agent() -> None:
    assert check_pod_identity_agent(facts(GPU_NODE), [], "irsa", NVIDIA) == []


def test_a_daemonset_snapshot_keeps_the_names_the_check_reads(tmp_path: Path) -> None:
    snapshot = list_file(tmp_path / "daemonsets.json", KUBE_PROXY, AGENT)
    assert read_snapshots([fixture("eks-karpenter-scale-from-zero"), snapshot]).daemonsets == {
        "kube-system/kube-proxy",
        POD_IDENTITY_AGENT,
    }


def test_the_stacks_cluster_check_blocks_without_the_agent(tmp_path: Path) -> None:
    plan = plan_of(make_config(cluster={"profile": "eks-karpenter"}, delivery=POD_IDENTITY))
    result = check_snapshots(plan, [fixture("eks-karpenter-scale-from-zero"), list_file(tmp_path / "ds.json", KUBE_PROXY)])
    assert result.blocked and [f.level for f in result.findings if f.check == "identity"] == ["block"]
