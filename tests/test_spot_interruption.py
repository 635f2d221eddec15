"""A spot node's reclaim against the server's grace (cluster/disruption.py check_gke_spot, check_karpenter_spot):
GKE's 15 s for non-system pods of a Spot VM's 30 s notice, EC2's 2-minute spot notice under Karpenter
(docs/sources.md §S14). Snapshots built from the documented labels: cloud.google.com/gke-spot,
cloud.google.com/gke-preemptible, karpenter.sh/capacity-type."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli.preflight import main
from cluster.disruption import check_gke_spot, check_karpenter_spot, spot_drain_seconds
from cluster.facts import NodePool, facts_from_items
from cluster.karpenter import CAPACITY_TYPE, candidate_nodes
from tests.cluster_facts import fixture, node
from tests.test_cluster_fixtures import with_profile

GPU_TAINT = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
A100 = {"cloud.google.com/gke-accelerator": "nvidia-a100-80gb", "kubernetes.io/arch": "amd64"}


def gke_gpu_node(name: str, pool: str, **labels: str) -> dict[str, Any]:
    return node(name, {**A100, "cloud.google.com/gke-nodepool": pool, **labels}, gpus=4, taints=GPU_TAINT)


def disruption_lines(capsys, stack: Path, items: list[dict[str, Any]], tmp_path: Path) -> list[str]:  # type: ignore[no-untyped-def]
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    main([str(stack), "--cluster", str(path)])
    return [line for line in capsys.readouterr().out.split("\n") if "] disruption:" in line or "] gpu:" in line]


def with_node_selector(stack: Path, key: str, value: str) -> Path:
    stack.write_text(
        stack.read_text().replace("    count: 4\n", f"    count: 4\n    node_selector:\n      {key}: {value}\n", 1)
    )
    return stack


def karpenter_snapshot(capacity_types: list[str] | None, termination_grace_period: str | None = None) -> list[dict[str, Any]]:
    """eks-karpenter-scale-from-zero with its GPU NodePool's capacity-type requirement replaced (None: removed)."""
    items: list[dict[str, Any]] = json.loads(fixture("eks-karpenter-scale-from-zero").read_text())["items"]
    for item in items:
        if item["kind"] == "NodePool" and item["metadata"]["name"] == "gpu":
            spec = item["spec"]["template"]["spec"]
            spec["requirements"] = [r for r in spec["requirements"] if r["key"] != CAPACITY_TYPE]
            if capacity_types is not None:
                spec["requirements"].append({"key": CAPACITY_TYPE, "operator": "In", "values": capacity_types})
            if termination_grace_period is not None:
                spec["terminationGracePeriod"] = termination_grace_period
    return items


def karpenter_pool(termination_grace_period: str | None = None) -> NodePool:
    requirement = {"key": CAPACITY_TYPE, "operator": "In", "values": ["spot"]}
    return NodePool("gpu", (requirement,), {}, karpenter=True, termination_grace_period=termination_grace_period)


def spot_fits(pool: NodePool) -> list[tuple[NodePool, Any]]:
    return [(pool, candidate) for candidate in candidate_nodes(pool)]


# --- GKE ------------------------------------------------------------------------------------------------


def test_a_gke_spot_gpu_pool_the_server_lands_on_warns_naming_the_pool_both_graces_and_the_on_demand_pin(  # type: ignore[no-untyped-def]
    capsys, tmp_path: Path
) -> None:
    items = [gke_gpu_node("gke-prod-spot-1", "a100-spot", **{"cloud.google.com/gke-spot": "true"})]
    (line, gpu) = disruption_lines(capsys, with_profile(tmp_path, "prod", "gke"), items, tmp_path)
    assert gpu.startswith("  [ok] gpu:")
    assert line.startswith('  [warn] disruption: node pool a100-spot (cloud.google.com/gke-spot: "true") can run the server')
    assert "giving non-system pods 15 s of it: less than server.termination_grace_period_seconds (180)" in line
    assert "set gpu.node_selector to {cloud.google.com/gke-nodepool: <an on-demand GPU pool>}" in line


def test_a_legacy_preemptible_node_warns_as_a_spot_node_does() -> None:
    facts = facts_from_items([gke_gpu_node("n1", "old-pool", **{"cloud.google.com/gke-preemptible": "true"})], "t")
    (finding,) = check_gke_spot(facts.nodes, [], grace_seconds=180)
    assert (finding.level, finding.message.startswith('node pool old-pool (cloud.google.com/gke-preemptible: "true")')) == (
        "warn",
        True,
    )


def test_pinning_an_on_demand_gke_pool_in_gpu_node_selector_keeps_the_gpu_check_and_drops_the_spot_warning(  # type: ignore[no-untyped-def]
    capsys, tmp_path: Path
) -> None:
    items = [
        gke_gpu_node("gke-prod-spot-1", "a100-spot", **{"cloud.google.com/gke-spot": "true"}),
        gke_gpu_node("gke-prod-od-1", "a100-pool"),
    ]
    unpinned = disruption_lines(capsys, with_profile(tmp_path, "prod", "gke"), items, tmp_path)
    stack = with_node_selector(with_profile(tmp_path, "prod", "gke"), "cloud.google.com/gke-nodepool", "a100-pool")
    pinned = disruption_lines(capsys, stack, items, tmp_path)
    assert [line.split(":")[0] for line in unpinned] == ["  [warn] disruption", "  [ok] gpu"]
    assert [line.split(":")[0] for line in pinned] == ["  [ok] gpu"]


def test_a_declared_gke_spot_pool_at_zero_nodes_warns_too() -> None:
    pool = NodePool("a100-spot", (), {**A100, "cloud.google.com/gke-spot": "true"}, gpus_per_node=4)
    (finding,) = check_gke_spot([], spot_fits(pool), grace_seconds=60)
    assert "less than server.termination_grace_period_seconds (60)" in finding.message


def test_a_server_grace_within_gke_spots_15_seconds_is_ok() -> None:
    facts = facts_from_items([gke_gpu_node("n1", "a100-spot", **{"cloud.google.com/gke-spot": "true"})], "t")
    (finding,) = check_gke_spot(facts.nodes, [], grace_seconds=15)
    assert finding.level == "ok"


# --- Karpenter ------------------------------------------------------------------------------------------


def test_a_spot_nodepool_without_a_termination_grace_period_leaves_a_do_not_disrupt_server_none_of_its_grace(  # type: ignore[no-untyped-def]
    capsys, tmp_path: Path
) -> None:
    stack = with_profile(tmp_path, "prod", "eks-karpenter")
    lines = disruption_lines(capsys, stack, karpenter_snapshot(["spot", "on-demand"]), tmp_path)
    (spot,) = [line for line in lines if "can launch spot instances" in line]
    assert spot.startswith("  [warn] disruption: node pool gpu can launch spot instances for the server")
    assert "EC2 reclaims a spot instance 120 s after its interruption warning" in spot
    assert "of server.termination_grace_period_seconds (180) the server gets 0 s" in spot


def test_a_nodepool_without_a_capacity_type_requirement_can_launch_spot(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    stack = with_profile(tmp_path, "prod", "eks-karpenter")
    lines = disruption_lines(capsys, stack, karpenter_snapshot(None), tmp_path)
    assert [line for line in lines if "node pool gpu can launch spot instances" in line]


def test_pinning_on_demand_in_gpu_node_selector_still_matches_a_karpenter_pool_and_drops_the_spot_warning(  # type: ignore[no-untyped-def]
    capsys, tmp_path: Path
) -> None:
    stack = with_node_selector(with_profile(tmp_path, "prod", "eks-karpenter"), CAPACITY_TYPE, "on-demand")
    lines = disruption_lines(capsys, stack, karpenter_snapshot(["spot", "on-demand"]), tmp_path)
    assert [line for line in lines if line.startswith("  [ok] gpu: no node matches")]
    assert not [line for line in lines if "spot" in line]


def test_a_grace_longer_than_the_two_minute_notice_warns_even_with_a_long_termination_grace_period() -> None:
    (finding,) = check_karpenter_spot(spot_fits(karpenter_pool("1h")), grace_seconds=180, do_not_disrupt=True)
    assert "the server gets 0 s" in finding.message
    assert "server.termination_grace_period_seconds of at most 120" in finding.fix


def test_a_termination_grace_period_within_the_notice_gives_a_do_not_disrupt_pod_its_full_grace() -> None:
    (finding,) = check_karpenter_spot(spot_fits(karpenter_pool("120s")), grace_seconds=100, do_not_disrupt=True)
    assert finding.level == "ok"


def test_a_termination_grace_period_past_the_notice_deletes_the_pod_too_late_for_its_full_grace() -> None:
    assert spot_drain_seconds(100, node_grace=180, do_not_disrupt=True) == 40


def test_an_evictable_server_pod_keeps_at_most_the_two_minute_notice() -> None:
    (finding,) = check_karpenter_spot(spot_fits(karpenter_pool()), grace_seconds=180, do_not_disrupt=False)
    assert "the drain evicts the server pod at once" in finding.message
    assert "the server gets 120 s" in finding.message
