"""The in-cluster bucket store's Service against the server's egress (cluster/store.py): a NetworkPolicy sees the
pods' port after the Service's translation, so the port the egress opens must be the Service's targetPort.
The MinIO operator's tenant Service forwards 80 to 9000 (tests/data/clusters/README.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli.preflight import main
from cluster.facts import facts_from_items
from cluster.store import check_bucket_store
from tests.cluster_facts import fixture
from tests.factories import STACKS, make_config
from tests.kubernetes_fixtures import plan_of
from validation.cluster import check_cluster

TENANT = "http://minio.models.svc.cluster.local"
EXAMPLE = STACKS / "examples" / "Pulumi.onprem-minio.yaml"


def services() -> list[dict[str, Any]]:
    return list(json.loads(fixture("minio-tenant-services").read_text())["items"])


def cluster_items() -> list[dict[str, Any]]:
    return list(json.loads(fixture("all-right").read_text())["items"]) + services()


def bucket_findings(endpoint_url: str, **network_policy: Any) -> list[tuple[str, str, str]]:
    bucket = {"uri": "s3://models/llama/", "endpoint_url": endpoint_url, "credentials_secret": "minio-keys"}
    cfg = make_config(delivery={"mode": "object_storage", "object_storage": bucket}, network_policy=network_policy)
    result = check_cluster(plan_of(cfg), facts_from_items(cluster_items(), "test"))
    return [(f.level, f.message, f.fix) for f in result.findings if f.check == "bucket"]


def test_the_tenant_service_forwarding_80_to_9000_blocks_an_egress_on_80() -> None:
    ((level, message, fix),) = bucket_findings(TENANT)
    assert level == "block" and "forwards 80 to the pods' 9000" in message
    assert fix.endswith("network_policy.object_storage_ports to the pods' port: [9000].")


def test_object_storage_ports_9000_passes_the_check() -> None:
    assert [level for level, _, _ in bucket_findings(TENANT, object_storage_ports=[9000])] == ["ok"]


def test_the_headless_service_on_9000_passes_as_written() -> None:
    assert [level for level, _, _ in bucket_findings("http://models-hl.models.svc:9000")] == ["ok"]


def test_a_port_the_service_does_not_have_blocks_naming_its_ports() -> None:
    ((level, message, _),) = bucket_findings("http://minio.models.svc:9000")
    assert level == "block" and "has no port 9000 (it has 80)" in message


def test_a_service_missing_from_a_namespace_whose_services_were_read_blocks() -> None:
    ((level, message, _),) = bucket_findings("http://s3.models.svc:80")
    assert level == "block" and "no Service of that name" in message


def test_a_namespace_whose_services_were_not_read_raises_no_finding() -> None:
    assert bucket_findings("http://minio.other.svc:80") == []


def test_without_network_policies_the_service_port_alone_is_checked() -> None:
    assert [level for level, _, _ in bucket_findings(TENANT, enabled=False)] == ["ok"]


def test_a_named_target_port_warns_that_the_policy_needs_its_number() -> None:
    item = services()[0]
    item["spec"]["ports"][0]["targetPort"] = "http-minio"
    findings = check_bucket_store(facts_from_items([item], "test"), "minio.models.svc", "models", 80, (80,))
    assert [f.level for f in findings] == ["warn"] and "'http-minio'" in findings[0].message


def test_a_service_port_without_a_target_port_forwards_to_the_same_port() -> None:
    item = services()[1]
    del item["spec"]["ports"][0]["targetPort"]
    findings = check_bucket_store(facts_from_items([item], "test"), "models-hl.models.svc", "models", 9000, (9000,))
    assert [f.level for f in findings] == ["ok"]


def test_a_snapshot_without_services_raises_no_finding() -> None:
    facts = facts_from_items(json.loads(fixture("all-right").read_text())["items"], "test")
    assert check_bucket_store(facts, "minio.models.svc", "models", 80, (80,)) == []


def preflight_exit(capsys: pytest.CaptureFixture[str], stack: Path) -> tuple[int, str]:
    snapshots = [f"--cluster={fixture(name)}" for name in ("all-right", "minio-tenant-services")]
    code = main([str(stack), *snapshots])
    return code, capsys.readouterr().out


def test_the_onprem_minio_example_passes_the_cluster_check(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = preflight_exit(capsys, EXAMPLE)
    assert code == 0 and "[ok] bucket: Service minio.models forwards 80 to the pods' 9000" in out


def test_the_example_without_its_object_storage_ports_is_blocked(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    stack = tmp_path / EXAMPLE.name
    stack.write_text(EXAMPLE.read_text().split("  vllm-serving:network_policy:")[0])
    code, out = preflight_exit(capsys, stack)
    assert code == 1 and "[block] bucket:" in out
