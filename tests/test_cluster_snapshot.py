"""Snapshot files: exactly `kubectl get ... -o json`; hostile or wrong files are clear errors (exit 2)."""

from __future__ import annotations

from typing import Any

import pytest

from cli.preflight import main
from cluster import snapshot
from cluster.snapshot import SnapshotError, read_snapshots
from tests.cluster_facts import fixture, keda_operator, list_file, node, storage_class
from tests.factories import STACKS


def test_a_kubectl_list_is_read_into_facts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = list_file(tmp_path / "c.json", node("g1", gpus=8), storage_class("gp3", "ebs.csi.aws.com", default=True))
    facts = read_snapshots([path])
    assert [n.name for n in facts.nodes] == ["g1"]
    assert facts.storage_classes[0].is_default
    assert facts.source == "snapshot c.json"


def test_several_files_are_merged(tmp_path) -> None:  # type: ignore[no-untyped-def]
    first = list_file(tmp_path / "a.json", node("g1"))
    second = list_file(tmp_path / "keda.json", keda_operator("ghcr.io/kedacore/keda:2.18.0"))
    facts = read_snapshots([first, second])
    assert (len(facts.nodes), facts.keda_version) == (1, "2.18.0")


def test_kinds_absent_from_the_snapshot_are_unknown_not_empty(tmp_path) -> None:  # type: ignore[no-untyped-def]
    facts = read_snapshots([list_file(tmp_path / "a.json", node("g1"))])
    assert (facts.namespaces, facts.prometheuses, facts.node_pools) == (None, None, None)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("not json", "not JSON"),
        ('{"kind": "Node", "metadata": {}}', "not a Kubernetes List (kind 'Node')"),
        ("[1, 2]", "not a Kubernetes List"),
        ('{"kind": "List", "items": [1]}', "items[0] is not a Kubernetes object with a kind"),
        ('{"kind": "List", "items": {}}', "not a Kubernetes List"),
        ("[" * 100000 + "]" * 100000, "nested too deeply"),
    ],
    ids=["not-json", "one-object", "a-json-list", "item-not-an-object", "items-not-a-list", "deep-nesting"],
)
def test_a_file_that_is_not_a_kubectl_list_is_refused_naming_the_file(tmp_path, content, expected) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(SnapshotError) as error:
        read_snapshots([path])
    assert str(error.value).startswith(f"{path}: ")
    assert expected in str(error.value)


def test_a_file_larger_than_the_cap_is_refused_before_parsing(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(snapshot, "MAX_BYTES", 100)
    path = tmp_path / "big.json"
    path.write_text('{"kind": "List", "items": []}' + " " * 200)
    with pytest.raises(SnapshotError, match="larger than"):
        read_snapshots([path])


def test_a_missing_file_and_a_directory_are_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SnapshotError, match="no such file"):
        read_snapshots([tmp_path / "nope.json"])
    with pytest.raises(SnapshotError, match="is a directory"):
        read_snapshots([tmp_path])


def test_the_cli_exits_two_for_a_bad_snapshot_and_names_it(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "bad.json"
    path.write_text("kind: List")
    assert main([str(STACKS / "Pulumi.prod.yaml"), "--cluster", str(path)]) == 2
    assert f"--cluster {path}: not JSON" in capsys.readouterr().err


def test_the_shipped_fixtures_are_kubectl_lists() -> None:
    facts = read_snapshots([fixture("all-right")])
    assert facts.kinds_read >= {"Node", "StorageClass", "CustomResourceDefinition", "Namespace", "Prometheus", "Deployment"}


def test_the_cli_with_a_cluster_file_imports_neither_pulumi_nor_the_kubernetes_client() -> None:
    import subprocess
    import sys

    from tests.factories import REPO

    code = (
        "import sys, runpy; sys.argv = ['preflight', 'stacks/Pulumi.prod.yaml', '--cluster', "
        "'tests/data/clusters/all-right.json']\n"
        "try:\n    runpy.run_module('preflight', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('pulumi', 'kubernetes') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert result.stdout.strip().splitlines()[-1] == "[]"


ODD_ITEMS: list[dict[str, Any]] = [
    {"kind": "Node", "metadata": [], "spec": "x", "status": {"allocatable": {"nvidia.com/gpu": "500m"}}},
    {"kind": "Node", "metadata": {"labels": {"nvidia.com/cuda.driver-version.major": "x"}}, "spec": {"taints": [1, {}]}},
    {"kind": "StorageClass", "metadata": {"annotations": []}, "provisioner": None},
    {"kind": "CustomResourceDefinition", "metadata": {"name": "scaledobjects.keda.sh"}, "spec": {"versions": "v1"}},
    {"kind": "Namespace", "metadata": {"name": "vllm", "labels": ["a"]}},
    {
        "kind": "Prometheus",
        "metadata": {"name": "p", "namespace": "m"},
        "spec": {
            "serviceMonitorSelector": {"matchLabels": ["release"], "matchExpressions": [{"operator": "In"}]},
            "ruleSelector": {"matchExpressions": "x"},
            "serviceMonitorNamespaceSelector": {},
        },
    },
    {
        "kind": "NodePool",
        "apiVersion": "karpenter.sh/v1",
        "spec": {
            "template": {
                "spec": {
                    "requirements": [
                        {"key": "karpenter.k8s.aws/instance-gpu-memory", "operator": "Gt", "values": ["lots"]},
                        "junk",
                    ]
                }
            },
            "limits": {"nvidia.com/gpu": "many"},
        },
    },
    {
        "kind": "Deployment",
        "metadata": {"name": "keda-operator"},
        "spec": {
            "template": {
                "spec": {"containers": [{"image": "ghcr.io/kedacore/keda"}, "junk", {"image": "registry:5000/keda:latest"}]}
            }
        },
    },
]


@pytest.mark.parametrize("item", ODD_ITEMS, ids=[f"{i['kind']}-{n}" for n, i in enumerate(ODD_ITEMS)])
def test_odd_but_well_formed_objects_never_crash_the_cli(tmp_path, capsys, item) -> None:  # type: ignore[no-untyped-def]
    path = list_file(tmp_path / "odd.json", item)
    assert main([str(STACKS / "Pulumi.prod.yaml"), "--cluster", str(path)]) in (0, 1)
    assert "cluster: blocked (snapshot odd.json)" in capsys.readouterr().out
