"""Large snapshots: a real cluster's `kubectl get nodes -o json` is parsed item by item, in bounded memory."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from cluster import snapshot
from cluster.json_stream import JsonStreamError, stream_list
from cluster.snapshot import SnapshotError, read_snapshots
from tests.large_snapshot import write_nodes_list


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def streamed(text: str, size: int = 7, cap: int = 10_000) -> tuple[list[object], dict[str, object]]:
    stream = stream_list(pieces(text, size), "items", cap)
    items = [item for _index, item in stream]
    return items, stream.value


def test_a_4000_node_cluster_of_107_mb_without_managed_fields_is_accepted(tmp_path: Path) -> None:
    path = write_nodes_list(tmp_path / "nodes.json", 4000)
    assert path.stat().st_size > 100 * 10**6
    facts = read_snapshots([path])
    assert (len(facts.nodes), facts.nodes[-1].name, facts.nodes[-1].allocatable["nvidia.com/gpu"]) == (
        4000,
        "gpu-node-03999",
        "8",
    )


def test_memory_grows_by_a_fraction_of_each_node_not_with_the_file(tmp_path: Path) -> None:
    def peak(nodes: int) -> tuple[int, int]:
        path = write_nodes_list(tmp_path / f"n{nodes}.json", nodes)
        tracemalloc.start()
        try:
            read_snapshots([path])
            return tracemalloc.get_traced_memory()[1], path.stat().st_size
        finally:
            tracemalloc.stop()

    (small, small_size), (large, large_size) = peak(100), peak(500)
    assert large - small < (large_size - small_size) / 4  # json.loads of the whole file takes ~10x its size


def test_a_node_keeps_only_the_fields_the_checks_read(tmp_path: Path) -> None:
    path = write_nodes_list(tmp_path / "nodes.json", 1)
    (item,) = snapshot.read_items(path)
    assert (sorted(item), sorted(item["status"])) == (
        ["apiVersion", "kind", "metadata", "spec", "status"],
        ["allocatable", "capacity"],
    )


def test_a_file_over_the_cap_names_a_command_that_makes_a_smaller_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot, "MAX_BYTES", 1000)
    path = write_nodes_list(tmp_path / "nodes.json", 1)
    with pytest.raises(SnapshotError) as error:
        read_snapshots([path])
    assert "Fix: kubectl get nodes,storageclasses" in str(error.value)
    assert "--show-managed-fields" not in str(error.value)


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 10_000])
def test_items_split_across_any_chunk_boundary_parse_as_json_loads_does(size: int) -> None:
    document = {"apiVersion": "v1", "items": [{"kind": "Node", "n": 12345, "f": -1.5e3, "s": 'a"\\u00e9'}] * 3, "kind": "List"}
    items, value = streamed(json.dumps(document, indent=2), size)
    assert (items, value) == (document["items"], {"apiVersion": "v1", "items": [], "kind": "List"})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"kind": "List", "items": [{"a": 1}', "not JSON"),
        ('{"kind": "List", "items": []} {}', "not JSON (extra data"),
        ('{"kind": "List" "items": []}', "not JSON (expected '}'"),
        ('{"items": [1e400]}', "items[0]: the number '1e400' is out of range"),
        ('{"items": [NaN]}', "items[0]: NaN is not a JSON number"),
        ('{"items": [' + "9" * 5000 + "]}", "items[0]: an integer of 5,000 digits"),
    ],
    ids=["truncated", "extra-data", "missing-comma", "1e400", "nan", "5000-digits"],
)
def test_bad_json_is_refused_with_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(JsonStreamError, match="^" + message.replace("(", r"\(").replace("[", r"\[")):
        streamed(text, cap=100_000)


def test_an_item_over_the_item_cap_is_named_with_the_cap() -> None:
    with pytest.raises(JsonStreamError, match=r"items\[1\] is larger than 1 KiB"):
        streamed('{"items": [1, "' + "x" * 5000 + '"]}', size=100, cap=1024)


def test_objects_of_kinds_no_check_reads_are_counted_not_kept(tmp_path: Path) -> None:
    pods = [{"kind": "Pod", "metadata": {"name": f"p{i}"}, "spec": {"containers": [{"image": "x" * 1000}]}} for i in range(50)]
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps({"kind": "List", "items": [*pods, {"kind": "Node", "metadata": {"name": "g1"}}]}))
    assert [item["kind"] for item in snapshot.read_items(path)] == ["Node"]


def test_a_deployment_keeps_only_its_containers(tmp_path: Path) -> None:
    deployment = {
        "kind": "Deployment",
        "metadata": {"name": "keda-operator", "namespace": "keda"},
        "spec": {
            "replicas": 1,
            "template": {"spec": {"containers": [{"image": "ghcr.io/kedacore/keda:2.16.1"}], "volumes": []}},
        },
        "status": {"replicas": 1},
    }
    path = tmp_path / "keda.json"
    path.write_text(json.dumps({"kind": "List", "items": [deployment]}))
    (item,) = snapshot.read_items(path)
    assert (sorted(item), read_snapshots([path]).keda_version) == (["apiVersion", "kind", "metadata", "spec"], "2.16.1")
