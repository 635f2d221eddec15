"""Cluster facts from files: exactly what `kubectl get ... -o json` prints (a v1 List of items).

    kubectl get nodes,storageclasses,customresourcedefinitions,namespaces -o json > cluster.json
    kubectl get prometheuses.monitoring.coreos.com -A -o json > prometheus.json      # when installed
    kubectl get nodepools.karpenter.sh -o json > nodepools.json                      # Karpenter only
    kubectl get deployments -n keda -o json > keda.json                              # KEDA's namespace
    kubectl get services -n minio -o json > store.json           # an in-cluster bucket store's namespace

Files come from users and CI: each must be a regular file, JSON, and a List (or any `*List`) whose items
are objects with a kind; anything else is a SnapshotError naming the file and the fix. A real cluster's
file is large (4,000 nodes: ~108 MB, most of it `status.images`), so the List is parsed one item at a time
(cluster/json_stream.py) and each item is slimmed to what the checks read before the next is parsed:
memory stays at one item plus the slim facts, whatever the file's size.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from cluster.facts import ClusterFacts, NodePool, facts_from_items, item_problem, slim_item
from cluster.json_stream import JsonStreamError, stream_list
from reading.files import FileReadError, iter_text_chunks

MAX_BYTES = 2 * 1024**3  # a 20,000-node cluster without managed fields is ~540 MB; beyond, it is not a snapshot
MAX_ITEM_BYTES = 16 * 1024 * 1024  # one object: a Node is ~30 KB, a large CRD's schema ~1.5 MB
MAX_ITEMS = 200_000
READ_KINDS = frozenset(
    {
        "Node",
        "StorageClass",
        "CustomResourceDefinition",
        "Namespace",
        "Prometheus",
        "NodePool",
        "Deployment",
        "StatefulSet",
        "Service",
        "DaemonSet",
        "MutatingWebhookConfiguration",
    }
)
SNAPSHOT_COMMAND = "kubectl get nodes,storageclasses,customresourcedefinitions,namespaces -o json > cluster.json"


class SnapshotError(ValueError):
    """A snapshot file that cannot be used; the message names the file and the fix."""


def read_snapshots(paths: Sequence[str | Path], declared_pools: tuple[NodePool, ...] = ()) -> ClusterFacts:
    """Facts from one or more snapshot files, merged. Raises SnapshotError."""
    if not paths:
        raise SnapshotError(f"no snapshot file given. Fix: {SNAPSHOT_COMMAND}")
    items: list[Mapping[str, Any]] = []
    for path in paths:
        items += read_items(Path(path), MAX_ITEMS - len(items))
    return facts_from_items(items, "snapshot " + ", ".join(Path(p).name for p in paths), declared_pools)


def read_items(path: Path, room: int = MAX_ITEMS) -> list[Mapping[str, Any]]:
    """The items of one `kubectl get -o json` file, each slimmed to what the checks read."""
    items: list[Mapping[str, Any]] = []
    kinds: dict[str, int] = {}
    try:
        top = stream_list(_chunks(path), "items", MAX_ITEM_BYTES)
        for index, item in top:
            if len(items) >= room:
                raise SnapshotError(
                    f"{path}: more than {MAX_ITEMS:,} objects in the snapshots. Fix: snapshot only "
                    "nodes, storageclasses, customresourcedefinitions, namespaces (and the optional kinds)."
                )
            checked = _checked(path, index, item)
            kinds[str(item["kind"])] = kinds.get(str(item["kind"]), 0) + 1
            if checked["kind"] in READ_KINDS:  # others (Pods, Events, ...) would only take memory
                items.append(checked)
        kind = top.value.get("kind")
    except JsonStreamError as error:
        raise SnapshotError(f"{path}: {error}. Fix: write it with `{SNAPSHOT_COMMAND}`.") from None
    if not isinstance(kind, str) or not kind.endswith("List") or not isinstance(top.value.get("items"), list):
        raise SnapshotError(
            f"{path}: not a Kubernetes List (kind {str(kind)[:40]!r}). Fix: write it with `{SNAPSHOT_COMMAND}`."
        )
    if kinds and not READ_KINDS & set(kinds):
        raise SnapshotError(f"{path}: no Node objects in this file (it holds {_count(kinds)}). Fix: {SNAPSHOT_COMMAND}")
    return items


def _chunks(path: Path) -> Iterator[str]:
    try:
        yield from iter_text_chunks(path, MAX_BYTES, f"no cluster's snapshot is. Fix: {SNAPSHOT_COMMAND}")
    except FileReadError as error:
        fix = SNAPSHOT_COMMAND if "no such file" in str(error) else "pass the JSON file kubectl wrote"
        raise SnapshotError(f"{error}. Fix: {fix}." if "Fix:" not in str(error) else f"{error}.") from None


def _checked(path: Path, index: int, item: Any) -> Mapping[str, Any]:
    if not isinstance(item, dict) or not isinstance(item.get("kind"), str):
        raise SnapshotError(
            f"{path}: items[{index}] is not a Kubernetes object with a kind. "
            f"Fix: write the file with `{SNAPSHOT_COMMAND}`, unedited."
        )
    problem = item_problem(item)
    if problem:
        raise SnapshotError(
            f"{path}: items[{index}] ({item['kind']} {_name(item)}): {problem}. "
            f"Fix: write the file with `{SNAPSHOT_COMMAND}`, unedited."
        )
    return slim_item(item)


def _name(item: Mapping[str, Any]) -> str:
    meta = item.get("metadata")
    return repr(str(meta.get("name", ""))[:63]) if isinstance(meta, Mapping) else "without metadata"


def _count(kinds: dict[str, int]) -> str:
    shown = sorted(kinds.items(), key=lambda kv: -kv[1])[:4]
    return ", ".join(f"{n:,} {k[:40]}" for k, n in shown) + (", ..." if len(kinds) > 4 else "")
