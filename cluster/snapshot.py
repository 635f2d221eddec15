"""Cluster facts from files: exactly what `kubectl get ... -o json` prints (a v1 List of items).

    kubectl get nodes,storageclasses,customresourcedefinitions,namespaces -o json > cluster.json
    kubectl get prometheuses.monitoring.coreos.com -A -o json > prometheus.json      # when installed
    kubectl get nodepools.karpenter.sh -o json > nodepools.json                      # Karpenter only
    kubectl get deployments -n keda -o json > keda.json                              # KEDA's namespace

Files come from users and CI: each is size-capped, must be JSON, and must be a List (or any `*List`)
whose items are objects with a kind; anything else is a SnapshotError naming the file and the fix.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cluster.facts import ClusterFacts, NodePool, facts_from_items

MAX_BYTES = 64 * 1024 * 1024  # a 5,000-node cluster's nodes list is ~100 MB only with managedFields; -o json
MAX_ITEMS = 200_000
SNAPSHOT_COMMAND = "kubectl get nodes,storageclasses,customresourcedefinitions,namespaces -o json > cluster.json"


class SnapshotError(ValueError):
    """A snapshot file that cannot be used; the message names the file and the fix."""


def read_snapshots(paths: Sequence[str | Path], declared_pools: tuple[NodePool, ...] = ()) -> ClusterFacts:
    """Facts from one or more snapshot files, merged. Raises SnapshotError."""
    if not paths:
        raise SnapshotError(f"no snapshot file given. Fix: {SNAPSHOT_COMMAND}")
    items: list[Mapping[str, Any]] = []
    for path in paths:
        items += read_items(Path(path))
        if len(items) > MAX_ITEMS:
            raise SnapshotError(
                f"{path}: more than {MAX_ITEMS:,} objects in the snapshots. Fix: snapshot only "
                "nodes, storageclasses, customresourcedefinitions, namespaces (and the optional kinds)."
            )
    return facts_from_items(items, "snapshot " + ", ".join(Path(p).name for p in paths), declared_pools)


def read_items(path: Path) -> list[Mapping[str, Any]]:
    """The items of one `kubectl get -o json` file."""
    document = _load(path)
    kind = document.get("kind") if isinstance(document, dict) else None
    if not isinstance(kind, str) or not kind.endswith("List") or not isinstance(document.get("items"), list):
        raise SnapshotError(
            f"{path}: not a Kubernetes List (kind {str(kind)[:40]!r}). Fix: write it with `{SNAPSHOT_COMMAND}`."
        )
    items = document["items"]
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("kind"), str):
            raise SnapshotError(
                f"{path}: items[{index}] is not a Kubernetes object with a kind. "
                f"Fix: write the file with `{SNAPSHOT_COMMAND}`, unedited."
            )
    return items


def _load(path: Path) -> Any:
    try:
        with path.open("rb") as file:
            data = file.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise SnapshotError(f"{path}: no such file. Fix: {SNAPSHOT_COMMAND}") from None
    except IsADirectoryError:
        raise SnapshotError(f"{path}: is a directory. Fix: pass the JSON file kubectl wrote.") from None
    except OSError as error:
        raise SnapshotError(f"{path}: cannot be read ({error.strerror or type(error).__name__}).") from None
    if len(data) > MAX_BYTES:
        raise SnapshotError(
            f"{path}: larger than {MAX_BYTES // 2**20} MiB. Fix: snapshot only the kinds the check "
            "reads, without --show-managed-fields."
        )
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        first = str(error).splitlines()[0][:120] if str(error) else type(error).__name__
        raise SnapshotError(f"{path}: not JSON ({first}). Fix: use `-o json`, not `-o yaml` or a table.") from None
    except RecursionError:
        raise SnapshotError(f"{path}: JSON nested too deeply. Fix: {SNAPSHOT_COMMAND}") from None
