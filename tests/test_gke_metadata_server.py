"""GKE Workload Identity against the nodes (cluster/identity.py, docs/sources.md §S12): the GPU nodes a stack
reading its bucket with it lands on must run the GKE metadata server, which GKE marks with
iam.gke.io/gke-metadata-server-enabled=true; elsewhere the pods' token requests get the node's service account."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli.preflight import main
from cluster.identity import GKE_METADATA_SERVER_LABEL
from tests.cluster_facts import fixture
from tests.factories import REPO

GCS_STACK = REPO / "stacks" / "examples" / "Pulumi.gcs-workload-identity.yaml"
PROD = REPO / "stacks" / "Pulumi.prod.yaml"  # s3:// with IRSA


def identity_lines(stack: Path, snapshot: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main([str(stack), "--cluster", str(snapshot)])
    return code, [line.strip() for line in capsys.readouterr().out.splitlines() if "identity:" in line]


def with_one_more_gpu_node_without_the_label(tmp_path: Path) -> Path:
    """gke-workload-identity.json plus a copy of its GPU node from a pool that does not run the metadata server."""
    snapshot: dict[str, Any] = json.loads(fixture("gke-workload-identity").read_text())
    gpu = next(
        i for i in snapshot["items"] if i["kind"] == "Node" and "cloud.google.com/gke-accelerator" in i["metadata"]["labels"]
    )
    other = json.loads(json.dumps(gpu))
    other["metadata"]["name"] = "gke-prod-a100-legacy-9f8e7d6c-m1n2"
    del other["metadata"]["labels"][GKE_METADATA_SERVER_LABEL]
    snapshot["items"].append(other)
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(snapshot))
    return path


def test_gpu_nodes_without_the_metadata_server_block_a_workload_identity_stack(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = identity_lines(GCS_STACK, fixture("gke-a100-no-gfd"), capsys)
    assert code == 1 and lines[0].startswith("[block] identity:") and "gke-prod-a100-pool-5e6f7a8b-k9l0" in lines[0]


def test_the_block_names_the_node_pool_setting_that_fixes_it(capsys: pytest.CaptureFixture[str]) -> None:
    _, lines = identity_lines(GCS_STACK, fixture("gke-a100-no-gfd"), capsys)
    assert "--workload-metadata=GKE_METADATA" in lines[0]


def test_gpu_nodes_running_the_metadata_server_pass_the_check(capsys: pytest.CaptureFixture[str]) -> None:
    _, lines = identity_lines(GCS_STACK, fixture("gke-workload-identity"), capsys)
    assert lines == [f"[ok] identity: the GPU nodes run the GKE metadata server ({GKE_METADATA_SERVER_LABEL}=true)."]


def test_some_gpu_nodes_without_it_are_a_warning_naming_them(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _, lines = identity_lines(GCS_STACK, with_one_more_gpu_node_without_the_label(tmp_path), capsys)
    assert lines[0].startswith("[warn] identity:") and "gke-prod-a100-legacy-9f8e7d6c-m1n2" in lines[0]


def test_a_stack_with_another_identity_gets_no_metadata_server_finding(capsys: pytest.CaptureFixture[str]) -> None:
    assert identity_lines(PROD, fixture("gke-a100-no-gfd"), capsys)[1] == []
