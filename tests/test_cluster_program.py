"""The Pulumi program under mocks reads the cluster (live reader replaced by a fixture) and blocks the same way."""

from __future__ import annotations

import pulumi
import pytest

from cluster import live
from cluster.snapshot import read_snapshots
from tests.cluster_facts import fixture
from tests.factories import STACKS
from tests.program import run_stack_file

PROD_EXTRA = {"api_key": "sk-test"}


def live_cluster(monkeypatch: pytest.MonkeyPatch, name: str, *more: str) -> list[tuple[object, ...]]:
    calls: list[tuple[object, ...]] = []

    def read(
        kubeconfig: object,
        context: object,
        keda_namespace: object,
        declared: object = (),
        namespace: object = None,
        store_namespace: object = None,
        daemonset_namespace: object = None,
        webhooks: object = False,
    ) -> object:
        calls.append((kubeconfig, context, keda_namespace, store_namespace, daemonset_namespace, webhooks))
        return read_snapshots([fixture(n) for n in (name, *more)], declared)  # type: ignore[arg-type]

    monkeypatch.setattr(live, "read_live", read)
    return calls


def test_prod_on_a_cluster_where_everything_is_right_registers_and_exports_the_cluster_verdict(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    live_cluster(monkeypatch, "all-right")
    registered, error = run_stack_file(STACKS / "examples" / "Pulumi.prod-on-efs.yaml", extra=PROD_EXTRA)
    assert error is None
    assert registered.exports["cluster"]["verdict"] == "passed"
    assert "kubernetes:apps/v1:Deployment" in registered.types


def test_prod_on_the_on_prem_cluster_stops_naming_each_cause_and_registers_nothing(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    live_cluster(monkeypatch, "onprem-gpu-operator-ceph")
    registered, error = run_stack_file(STACKS / "examples" / "Pulumi.prod-on-efs.yaml", extra=PROD_EXTRA)
    assert isinstance(error, pulumi.RunError)
    text = str(error)
    assert text.startswith("The cluster cannot run this stack (snapshot onprem-gpu-operator-ceph.json); nothing was created.")
    for cause in (
        "driver: vllm/vllm-openai:v0.33.0 is a CUDA 13 build",
        "storage: StorageClass efs-sc does not exist",
        "Fix: set cache.storage_class_name to ceph-filesystem",
        "Fix: set monitoring.release: kps.",
    ):
        assert cause in text
    assert registered.resources == []


def test_the_program_adapts_to_the_profile_karpenter_can_create_the_gpu_node(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    live_cluster(monkeypatch, "eks-karpenter-scale-from-zero")
    extra = {
        **PROD_EXTRA,
        "cluster": {"profile": "eks-karpenter"},
        "cache": {"storage_class_name": "efs-sc"},
        "autoscaling": {"enabled": True, "min_replica_count": 2, "max_replica_count": 4, "triggers": ["queue", "running"]},
    }
    registered, error = run_stack_file(STACKS / "examples" / "Pulumi.prod-on-efs.yaml", extra=extra)
    assert error is None, error
    assert registered.exports["cluster"]["verdict"] == "warnings"  # the driver of nodes not yet created is unknown
    affinity = registered.one("kubernetes:apps/v1:Deployment")["spec"]["template"]["spec"]["affinity"]
    assert affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == [
        {
            "matchExpressions": [
                {"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["a100"]},
                {"key": "karpenter.k8s.aws/instance-gpu-memory", "operator": "In", "values": ["81920"]},
            ]
        }
    ]


def test_the_program_reads_the_cluster_with_the_kubernetes_providers_context(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls = live_cluster(monkeypatch, "all-right")
    run_stack_file(STACKS / "examples" / "Pulumi.prod-on-efs.yaml", extra=PROD_EXTRA)
    assert calls == [(None, None, "keda", None, None, False)]


def test_an_unreadable_cluster_reports_not_checked_and_goes_on(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    registered, error = run_stack_file(
        STACKS / "examples" / "Pulumi.prod-on-efs.yaml", extra=PROD_EXTRA
    )  # conftest: unreachable
    assert error is None
    assert registered.exports["cluster"] == {
        "checked": False,
        "verdict": "not checked",
        "findings": [],
        "source": "the live cluster could not be read: no cluster in tests",
    }


def test_an_unreadable_cluster_stops_the_program_when_told_to(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    registered, error = run_stack_file(
        STACKS / "examples" / "Pulumi.prod-on-efs.yaml", extra={**PROD_EXTRA, "cluster": {"block_on_read_failure": True}}
    )
    assert isinstance(error, pulumi.RunError)
    assert "vllm-serving:cluster.block_on_read_failure: is true, and the cluster cannot be read: no cluster in tests." in str(
        error
    )
    assert registered.resources == []


def test_snapshot_files_in_the_stack_config_replace_the_live_read(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls = live_cluster(monkeypatch, "all-right")
    registered, error = run_stack_file(
        STACKS / "examples" / "Pulumi.prod-on-efs.yaml",
        extra={**PROD_EXTRA, "cluster": {"snapshot_files": [str(fixture("aks-azure-disk"))]}},
    )
    assert calls == []
    assert isinstance(error, pulumi.RunError)
    assert "(snapshot aks-azure-disk.json)" in str(error)
    assert registered.resources == []


def test_a_bad_snapshot_file_in_the_stack_config_is_a_config_error_naming_the_key(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "c.json"
    bad.write_text("{")
    _, error = run_stack_file(
        STACKS / "examples" / "Pulumi.prod-on-efs.yaml", extra={**PROD_EXTRA, "cluster": {"snapshot_files": [str(bad)]}}
    )
    assert isinstance(error, pulumi.RunError)
    assert f"vllm-serving:cluster.snapshot_files: {bad}: not JSON" in str(error)


def test_an_in_cluster_store_whose_service_forwards_to_another_port_stops_the_program(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    calls = live_cluster(monkeypatch, "all-right", "minio-tenant-services")
    example = STACKS / "examples" / "Pulumi.onprem-minio.yaml"
    stack = tmp_path / example.name
    stack.write_text(example.read_text().split("  vllm-serving:network_policy:")[0])
    registered, error = run_stack_file(stack)
    assert error is not None and "object_storage_ports" in str(error) and not registered.types
    assert calls[0][3] == "models"


def test_an_eks_pod_identity_stack_reads_kube_systems_daemonsets_for_its_agent(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls = live_cluster(monkeypatch, "all-right")
    bucket = {
        "mode": "object_storage",
        "object_storage": {"uri": "s3://my-models/llama/", "workload_identity": "eks-pod-identity"},
    }
    run_stack_file(STACKS / "Pulumi.prod.yaml", extra={**PROD_EXTRA, "delivery": bucket})
    assert calls[0][4] == "kube-system"
