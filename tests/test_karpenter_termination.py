"""Karpenter's forceful node replacement against the server pods' karpenter.sh/do-not-disrupt and grace period: the
NodePool's terminationGracePeriod (cluster/disruption.py)."""

from __future__ import annotations

import json
from pathlib import Path

from cli.preflight import main
from cluster.disruption import check_karpenter_termination
from cluster.facts import NodePool
from tests.cluster_facts import fixture
from tests.factories import STACKS
from tests.test_cluster_fixtures import cluster_section, with_profile


def pool(termination_grace_period: str | None = None, expire_after: str | None = None) -> NodePool:
    return NodePool("gpu", (), {}, karpenter=True, termination_grace_period=termination_grace_period, expire_after=expire_after)


def test_a_pool_without_a_termination_grace_period_warns_that_its_nodes_drain_until_the_pods_leave() -> None:
    (finding,) = check_karpenter_termination([pool(expire_after="720h")], grace_seconds=180)
    assert finding.level == "warn"
    assert "node pool gpu sets no spec.template.spec.terminationGracePeriod" in finding.message
    assert "past expireAfter (720h)" in finding.message
    assert "(at least 180s, server.termination_grace_period_seconds)" in finding.fix


def test_a_pool_whose_nodes_never_expire_still_warns_of_a_node_deleted_by_hand() -> None:
    (finding,) = check_karpenter_termination([pool(expire_after="Never")], grace_seconds=180)
    assert "never expires (expireAfter: Never), but one deleted by hand stays tainted" in finding.message


def test_a_termination_grace_period_shorter_than_the_servers_grace_warns_that_the_drain_is_cut_short() -> None:
    (finding,) = check_karpenter_termination([pool("2m59s")], grace_seconds=180)
    assert finding.level == "warn"
    assert "terminationGracePeriod (2m59s) is shorter than server.termination_grace_period_seconds (180)" in finding.message


def test_a_termination_grace_period_that_is_no_go_duration_warns_naming_the_value_and_the_form() -> None:
    (finding,) = check_karpenter_termination([pool("three minutes")], grace_seconds=180)
    assert (finding.level, "terminationGracePeriod ('three minutes') is no Go duration" in finding.message) == ("warn", True)
    assert "a Go duration of at least 180s" in finding.fix


def test_a_termination_grace_period_of_the_servers_grace_is_ok() -> None:
    (finding,) = check_karpenter_termination([pool("3m")], grace_seconds=180)
    assert finding.level == "ok"


def test_a_declared_pool_is_not_karpenters_and_gets_no_finding() -> None:
    assert check_karpenter_termination([NodePool("a100", (), {}, gpus_per_node=8)], grace_seconds=180) == []


def test_the_eks_karpenter_profile_reads_the_gpu_pools_termination_grace_period_from_the_snapshot(  # type: ignore[no-untyped-def]
    capsys, tmp_path: Path
) -> None:
    _, lines = cluster_section(capsys, with_profile(tmp_path, "prod", "eks-karpenter"), "eks-karpenter-scale-from-zero")
    (line,) = [line for line in lines if "] disruption:" in line]
    assert line.startswith("  [warn] disruption: node pool gpu sets no spec.template.spec.terminationGracePeriod")


def test_a_pool_with_a_long_enough_termination_grace_period_passes_on_the_eks_karpenter_profile(  # type: ignore[no-untyped-def]
    capsys, tmp_path: Path
) -> None:
    snapshot = json.loads(fixture("eks-karpenter-scale-from-zero").read_text())
    for item in snapshot["items"]:
        if item["kind"] == "NodePool" and item["metadata"]["name"] == "gpu":
            item["spec"]["template"]["spec"]["terminationGracePeriod"] = "1h"
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(snapshot))
    main([str(with_profile(tmp_path, "prod", "eks-karpenter")), "--cluster", str(path)])
    (line,) = [line for line in capsys.readouterr().out.split("\n") if "] disruption:" in line]
    assert line.startswith("  [ok] disruption: node pool gpu's terminationGracePeriod (1h) bounds")


def test_without_the_do_not_disrupt_annotation_the_termination_check_does_not_run(capsys) -> None:  # type: ignore[no-untyped-def]
    _, lines = cluster_section(capsys, STACKS / "Pulumi.prod.yaml", "eks-karpenter-scale-from-zero")
    assert not [line for line in lines if "] disruption:" in line]
