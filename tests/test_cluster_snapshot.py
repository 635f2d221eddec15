"""Snapshot files: exactly `kubectl get ... -o json`; hostile or wrong files are clear errors (exit 2)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from cli.preflight import main
from cluster import snapshot
from cluster.snapshot import SnapshotError, read_snapshots
from tests.cluster_facts import fixture, keda_operator, list_file, node, storage_class
from tests.factories import STACKS
from tests.program import run_main, stack_file_config
from tests.test_preflight_cli import run_cli


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


def test_a_fifo_is_refused_as_a_named_pipe_without_being_opened(tmp_path) -> None:  # type: ignore[no-untyped-def]
    fifo = tmp_path / "cluster.json"
    os.mkfifo(fifo)
    with pytest.raises(SnapshotError, match=r"is a named pipe \(FIFO\), not a regular file"):
        read_snapshots([fifo])  # opening it would block until a writer came


def test_a_character_device_is_refused_as_a_device() -> None:
    with pytest.raises(SnapshotError, match="/dev/zero: is a character device, not a regular file"):
        read_snapshots(["/dev/zero"])


def test_a_fifo_given_to_the_cli_exits_two_naming_it_instead_of_hanging(tmp_path) -> None:  # type: ignore[no-untyped-def]
    fifo = tmp_path / "cluster.json"
    os.mkfifo(fifo)
    # the timeout only turns a hang (today's open() of a FIFO) into a failure; nothing asserts a duration
    result = run_cli(str(STACKS / "Pulumi.prod.yaml"), "--cluster", str(fifo))
    assert (result.returncode, "is a named pipe (FIFO)" in result.stderr) == (2, True), result.stderr


def test_a_stack_whose_snapshot_files_name_a_fifo_stops_the_program_naming_the_key(tmp_path) -> None:  # type: ignore[no-untyped-def]
    fifo = tmp_path / "cluster.json"
    os.mkfifo(fifo)
    config, secret_keys = stack_file_config(STACKS / "Pulumi.prod.yaml")
    config["cluster"] = {**config.get("cluster", {}), "snapshot_files": [str(fifo)]}
    config["api_key"] = "sk-test-key"
    registered, error = run_main(config, (*secret_keys, "api_key"))
    assert "vllm-serving:cluster.snapshot_files" in str(error) and "is a named pipe (FIFO)" in str(error)
    assert registered.resources == []


def test_a_snapshot_of_only_pods_says_it_holds_no_node_objects(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pods = [{"kind": "Pod", "apiVersion": "v1", "metadata": {"name": f"p{i}"}} for i in range(3)]
    with pytest.raises(SnapshotError) as error:
        read_snapshots([list_file(tmp_path / "pods.json", *pods)])
    assert "pods.json: no Node objects in this file (it holds 3 Pod)" in str(error.value)


def test_an_empty_list_is_a_cluster_with_none_of_the_kind(tmp_path) -> None:  # type: ignore[no-untyped-def]
    facts = read_snapshots([list_file(tmp_path / "nodepools.json")])
    assert facts.nodes == ()


def test_labels_written_as_a_list_are_reported_naming_the_object(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = list_file(tmp_path / "c.json", node("g1"), {"kind": "Namespace", "metadata": {"name": "vllm", "labels": ["a"]}})
    with pytest.raises(SnapshotError) as error:
        read_snapshots([path])
    assert "items[1] (Namespace 'vllm'): metadata.labels is a list, not a mapping of label: value" in str(error.value)


def test_a_name_written_as_a_list_is_reported_not_a_crash(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = list_file(tmp_path / "c.json", node("g1"), {"kind": "Namespace", "metadata": {"name": ["vllm"]}})
    with pytest.raises(SnapshotError) as error:
        read_snapshots([path])
    assert "items[1]" in str(error.value) and "metadata.name is a list, not a string" in str(error.value)


@pytest.mark.parametrize("gpus", ["1e400", "500m", "²", "9" * 5000, "-1"])
def test_a_gpu_count_that_is_not_whole_is_a_config_error_naming_the_node(tmp_path, capsys, gpus) -> None:  # type: ignore[no-untyped-def]
    item = node("g1")
    item["status"]["allocatable"]["nvidia.com/gpu"] = gpus
    path = list_file(tmp_path / "c.json", item)
    assert main([str(STACKS / "Pulumi.prod.yaml"), "--cluster", str(path)]) == 2
    err = capsys.readouterr().err
    assert "items[0] (Node 'g1'): status.allocatable['nvidia.com/gpu'] is" in err and len(err) < 1000, err


def test_a_json_integer_of_5000_digits_is_a_config_error_not_an_internal_one(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "c.json"
    path.write_text('{"kind": "List", "items": [{"kind": "Node", "spec": {"unschedulable": ' + "9" * 5000 + "}}]}")
    assert main([str(STACKS / "Pulumi.prod.yaml"), "--cluster", str(path), "--json"]) == 2
    printed = json.loads(capsys.readouterr().out)
    assert "items[0]: an integer of 5,000 digits" in printed["config_errors"][0]


def test_a_superscript_driver_label_is_an_unknown_driver_not_an_internal_error(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    labels = {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/cuda.driver-version.major": "5²"}
    path = list_file(tmp_path / "c.json", node("g1", labels=labels, gpus=8))
    assert main([str(STACKS / "Pulumi.prod.yaml"), "--cluster", str(path)]) in (0, 1)
    assert "internal error" not in capsys.readouterr().err


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
    {"kind": "Node", "metadata": [], "spec": "x", "status": {"allocatable": "x"}},
    {"kind": "Node", "metadata": {"labels": {"nvidia.com/cuda.driver-version.major": "x"}}, "spec": {"taints": [1, {}]}},
    {"kind": "StorageClass", "metadata": {"annotations": []}, "provisioner": None},
    {"kind": "CustomResourceDefinition", "metadata": {"name": "scaledobjects.keda.sh"}, "spec": {"versions": "v1"}},
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
