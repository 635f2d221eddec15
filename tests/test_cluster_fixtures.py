"""Each snapshot fixture against the shipped stacks: the exact verdict and cluster lines of the report.

The fixtures (tests/data/clusters/*.json, sources in its README) are what `kubectl get ... -o json` prints.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.preflight import main
from tests.cluster_facts import crd, fixture, list_file
from tests.factories import STACKS


def cluster_section(capsys, stack: Path, name: str, *more: str) -> tuple[int, list[str]]:  # type: ignore[no-untyped-def]
    code = main([str(stack), "--cluster", str(fixture(name)), *more])
    out = capsys.readouterr().out
    return code, out[out.index("\ncluster:") + 1 :].rstrip("\n").split("\n")


def with_profile(tmp_path: Path, stack: str, profile: str) -> Path:
    """The shipped stack with cluster.profile set, under the same file name (so the same stack name)."""
    path = tmp_path / f"Pulumi.{stack}.yaml"
    text = (STACKS / f"Pulumi.{stack}.yaml").read_text()
    path.write_text(text + f"  vllm-serving:cluster:\n    profile: {profile}\n")
    return path


EXPECTED = fixture("x").parent / "expected"
FIXTURES = ("gke-a100-no-gfd", "eks-karpenter-scale-from-zero", "aks-azure-disk", "onprem-gpu-operator-ceph", "all-right")
# The shipped stacks, and prod's shared-volume variant (its claim meets each cluster's storage classes).
STACK_FILES = {
    "prod": STACKS / "Pulumi.prod.yaml",
    "prod-on-efs": STACKS / "examples" / "Pulumi.prod-on-efs.yaml",
    "dev": STACKS / "Pulumi.dev.yaml",
}


@pytest.mark.parametrize("stack", list(STACK_FILES))
@pytest.mark.parametrize("name", FIXTURES)
def test_each_fixture_gives_the_exact_verdict_and_cluster_lines(capsys, stack: str, name: str) -> None:  # type: ignore[no-untyped-def]
    """expected/<stack>.<fixture>.txt: the exit code, the verdict line, then the cluster section, verbatim."""
    code = main([str(STACK_FILES[stack]), "--cluster", str(fixture(name))])
    out = capsys.readouterr().out
    lines = [f"exit {code}", out.split("\n")[0], *out[out.index("\ncluster:") + 1 :].rstrip("\n").split("\n")]
    assert lines == (EXPECTED / f"{stack}.{name}.txt").read_text().rstrip("\n").split("\n")


def test_prod_blocks_on_every_fixture_but_the_one_where_everything_is_right(capsys) -> None:  # type: ignore[no-untyped-def]
    codes = {name: main([str(STACKS / "Pulumi.prod.yaml"), "--cluster", str(fixture(name))]) for name in FIXTURES}
    capsys.readouterr()
    assert codes == {
        "gke-a100-no-gfd": 1,
        "eks-karpenter-scale-from-zero": 1,
        "aks-azure-disk": 1,
        "onprem-gpu-operator-ceph": 1,
        "all-right": 0,
    }


@pytest.mark.parametrize(
    ("stack", "name", "profile", "expected"),
    [
        (
            "prod",
            "gke-a100-no-gfd",
            "gke",
            "  [ok] gpu: 1 node(s) match cloud.google.com/gke-accelerator In [nvidia-a100-80gb] with >= 4 allocatable "
            "nvidia.com/gpu (e.g. gke-prod-a100-pool-5e6f7a8b-k9l0: 4).",
        ),
        (
            "prod",
            "eks-karpenter-scale-from-zero",
            "eks-karpenter",
            "  [ok] gpu: no node matches karpenter.k8s.aws/instance-gpu-name In [a100] and "
            "karpenter.k8s.aws/instance-gpu-memory In [81920] yet, but node pool gpu (p4de.24xlarge) "
            "can create one with >= 4 nvidia.com/gpu (scale from zero).",
        ),
        (
            "dev",
            "eks-karpenter-scale-from-zero",
            "eks-karpenter",
            "  [ok] gpu: no node matches karpenter.k8s.aws/instance-gpu-name In [a100] and "
            "karpenter.k8s.aws/instance-gpu-memory In [40960] yet, but node pool gpu (p4d.24xlarge) "
            "can create one with >= 1 nvidia.com/gpu (scale from zero).",
        ),
        (
            "prod",
            "aks-azure-disk",
            "aks",
            "  [ok] gpu: 1 node(s) match node.kubernetes.io/instance-type In [Standard_ND96amsr_A100_v4] with "
            ">= 4 allocatable nvidia.com/gpu (e.g. aks-gpupool-87654321-vmss000000: 8).",
        ),
    ],
    ids=["gke-profile", "karpenter-profile-p4de", "karpenter-profile-dev-p4d", "aks-profile-tolerates-sku-gpu"],
)
def test_with_the_right_profile_the_gpu_check_reads_the_providers_label(  # type: ignore[no-untyped-def]
    capsys, tmp_path, stack, name, profile, expected
) -> None:
    _, lines = cluster_section(capsys, with_profile(tmp_path, stack, profile), name)
    assert next(line for line in lines if "] gpu:" in line) == expected


def test_on_gke_the_dev_stack_asking_for_the_40_gb_a100_does_not_match_the_80_gb_pool(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _, lines = cluster_section(capsys, with_profile(tmp_path, "dev", "gke"), "gke-a100-no-gfd")
    assert next(line for line in lines if "] gpu:" in line).startswith(
        "  [block] gpu: no node and no node pool matches cloud.google.com/gke-accelerator In [nvidia-tesla-a100]"
    )


def test_the_dev_stack_owns_the_namespace_it_created(capsys) -> None:  # type: ignore[no-untyped-def]
    _, lines = cluster_section(capsys, STACKS / "Pulumi.dev.yaml", "onprem-gpu-operator-ceph")
    assert "  [ok] namespace: vllm-dev exists and is owned by this stack (app.kubernetes.io/instance=vllm-dev)." in lines


def test_a_stack_that_would_create_another_stacks_namespace_is_refused(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(
        (STACKS / "Pulumi.prod.yaml").read_text() + "  vllm-serving:namespace:\n    name: vllm-dev\n    create: true\n"
    )
    code, lines = cluster_section(capsys, path, "onprem-gpu-operator-ceph")
    assert code == 1
    assert any(line.startswith("  [block] namespace: vllm-dev is owned by vllm-dev") for line in lines)


def test_without_a_cluster_file_the_report_says_not_checked_never_passed(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([str(STACKS / "Pulumi.prod.yaml")]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith(
        "cluster: not checked (no cluster facts: pass --cluster FILE, or run pulumi preview with access to the cluster)"
    )
    assert "passed" not in out


def test_the_json_report_carries_the_cluster_verdict_and_findings(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([str(STACKS / "Pulumi.prod.yaml"), "--cluster", str(fixture("eks-karpenter-scale-from-zero")), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert (data["verdict"]["fits"], data["verdict"]["overall"], data["cluster"]["verdict"]) == (True, "BLOCKED", "blocked")
    gpu = next(f for f in data["cluster"]["findings"] if f["check"] == "gpu")
    assert gpu["level"] == "block" and gpu["message"].startswith("no node and no node pool matches nvidia.com/gpu.product")


def test_a_keda_too_old_for_a_rendered_field_blocks_naming_the_version_it_needs(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "Pulumi.prod.yaml"  # fallback.behavior is rendered for KEDA 2.17; the cluster runs 2.16.1
    path.write_text(
        (STACKS / "Pulumi.prod.yaml")
        .read_text()
        .replace("  vllm-serving:autoscaling:\n", '  vllm-serving:autoscaling:\n    keda_version: "2.17"\n')
    )
    code, lines = cluster_section(capsys, path, "onprem-gpu-operator-ceph")
    assert code == 1
    assert (
        "  [block] keda: KEDA 2.16.1 rejects this ScaledObject; it needs >= 2.17.0 for fallback.behavior. "
        "Fix: upgrade KEDA to 2.17.0 or newer, or set autoscaling.enabled: false."
    ) in lines


def test_the_json_report_without_a_cluster_file_is_not_checked(capsys) -> None:  # type: ignore[no-untyped-def]
    main([str(STACKS / "Pulumi.prod.yaml"), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert (data["verdict"]["overall"], data["cluster"]["checked"], data["cluster"]["verdict"]) == (
        "FITS",
        False,
        "not checked",
    )


def test_the_markdown_report_shows_the_cluster_verdict_and_each_finding(capsys) -> None:  # type: ignore[no-untyped-def]
    main([str(STACKS / "Pulumi.prod.yaml"), "--cluster", str(fixture("all-right")), "--markdown"])
    out = capsys.readouterr().out
    assert out.startswith("### ✅ Pulumi.prod.yaml: FITS")
    assert "**Cluster: passed (snapshot all-right.json)**" in out
    assert "- [ok] gpu: 4 node(s) match nvidia.com/gpu.product In [NVIDIA-A100-SXM4-80GB]" in out


def test_several_cluster_files_are_read_together(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    everything = json.loads(fixture("all-right").read_text())
    keda = [i for i in everything["items"] if i["kind"] == "Deployment"]
    rest = [i for i in everything["items"] if i["kind"] != "Deployment"]
    (tmp_path / "a.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": rest}))
    (tmp_path / "keda.json").write_text(json.dumps({"apiVersion": "v1", "kind": "DeploymentList", "items": keda}))
    code = main(
        [str(STACKS / "Pulumi.prod.yaml"), "--cluster", str(tmp_path / "a.json"), "--cluster", str(tmp_path / "keda.json")]
    )
    assert code == 0
    assert "cluster: passed (snapshot a.json, keda.json)" in capsys.readouterr().out


def stack_with_snapshot(tmp_path: Path, snapshot: Path) -> Path:
    """The prod stack with cluster.snapshot_files set, as a user would check it in CI without cluster access."""
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text((STACKS / "Pulumi.prod.yaml").read_text() + f"  vllm-serving:cluster:\n    snapshot_files: [{snapshot}]\n")
    return path


def test_the_cli_checks_the_stacks_own_snapshot_files_as_the_program_does(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code = main([str(stack_with_snapshot(tmp_path, fixture("aks-azure-disk")))])
    out = capsys.readouterr().out
    assert code == 1 and "cluster: blocked (snapshot aks-azure-disk.json)" in out


def test_a_bad_snapshot_file_in_the_stack_is_a_config_error_naming_the_key(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    assert main([str(stack_with_snapshot(tmp_path, bad))]) == 2
    assert f"vllm-serving:cluster.snapshot_files: {bad}: not JSON" in capsys.readouterr().err


# --- capacity on a fixed pool of three DGX A100 nodes (dgx-a100-3-nodes.json) ------------------------------

LLAMA_405B = STACKS / "examples" / "Pulumi.llama-405b-on-2x8-a100-80gb.yaml"


def finding_line(lines: list[str], check: str) -> str:
    return next(line for line in lines if f"] {check}:" in line)


def dgx_with(tmp_path: Path, rdma: bool, lws: bool) -> Path:
    """The DGX fixture with the RDMA device plugin's rdma/ib on every node and/or the LeaderWorkerSet CRD."""
    snapshot = json.loads(fixture("dgx-a100-3-nodes").read_text())
    for item in snapshot["items"]:
        if item["kind"] == "Node" and rdma:
            item["status"]["allocatable"]["rdma/ib"] = item["status"]["capacity"]["rdma/ib"] = "1"
    if lws:
        snapshot["items"].append(crd("leaderworkersets.leaderworkerset.x-k8s.io"))
    return list_file(tmp_path / "dgx.json", *snapshot["items"])


def test_prod_on_three_dgx_nodes_warns_that_three_of_its_four_replicas_fit(capsys) -> None:  # type: ignore[no-untyped-def]
    code, lines = cluster_section(capsys, STACKS / "Pulumi.prod.yaml", "dgx-a100-3-nodes")
    assert (code, lines[0]) == (0, "cluster: warnings (snapshot dgx-a100-3-nodes.json)")
    assert finding_line(lines, "capacity").startswith(
        "  [warn] capacity: only 3 of the 4 replicas fit (3 node(s) matching nvidia.com/gpu.product In "
        "[NVIDIA-A100-SXM4-80GB] have room; each needs 4 nvidia.com/gpu on one node): the autoscaler's replica 4 "
        "stays Pending. The hostname spread's minDomains is 4 but only 3 node(s) can be domains"
    )


def test_the_405b_example_blocks_on_three_dgx_nodes_without_the_leaderworkerset_crd(capsys) -> None:  # type: ignore[no-untyped-def]
    code, lines = cluster_section(capsys, LLAMA_405B, "dgx-a100-3-nodes")
    assert code == 1
    assert finding_line(lines, "leaderworkerset").startswith(
        "  [block] leaderworkerset: a replica spans 2 nodes on a LeaderWorkerSet, but the cluster has no "
        "leaderworkersets.leaderworkerset.x-k8s.io CRD"
    )


def test_the_405b_example_blocks_when_no_node_advertises_rdma_ib(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    code = main([str(LLAMA_405B), "--cluster", str(dgx_with(tmp_path, rdma=False, lws=True))])
    lines = capsys.readouterr().out.split("\n")
    assert code == 1
    assert finding_line(lines, "rdma").startswith(
        "  [block] rdma: no node matching nvidia.com/gpu.product In [NVIDIA-A100-SXM4-80GB] has allocatable rdma/ib"
    )


def test_three_dgx_nodes_hold_one_of_the_405b_examples_two_groups_of_two(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    main([str(LLAMA_405B), "--cluster", str(dgx_with(tmp_path, rdma=True, lws=True))])
    lines = capsys.readouterr().out.split("\n")
    assert finding_line(lines, "capacity").startswith(
        "  [warn] capacity: only 1 of the 2 replicas fit (3 node(s) matching nvidia.com/gpu.product In "
        "[NVIDIA-A100-SXM4-80GB] have room; each needs 2 nodes with 8 nvidia.com/gpu, 1 rdma/ib each)"
    )
    assert "  [ok] leaderworkerset: the LeaderWorkerSet API (leaderworkersets.leaderworkerset.x-k8s.io v1) is served." in lines


def test_with_the_gpu_nodepool_deleted_the_cpu_nodepool_is_not_credited_and_the_check_blocks(  # type: ignore[no-untyped-def]
    capsys, tmp_path
) -> None:
    snapshot = json.loads(fixture("eks-karpenter-scale-from-zero").read_text())
    items = [i for i in snapshot["items"] if not (i["kind"] == "NodePool" and i["metadata"]["name"] == "gpu")]
    stack = with_profile(tmp_path, "prod", "eks-karpenter")
    code = main([str(stack), "--cluster", str(list_file(tmp_path / "no-gpu-pool.json", *items))])
    lines = capsys.readouterr().out.split("\n")
    assert code == 1
    assert finding_line(lines, "gpu").startswith("  [block] gpu: no node and no node pool matches karpenter.k8s.aws/")


def test_the_karpenter_gpu_nodepools_limit_holds_all_four_prod_replicas(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _, lines = cluster_section(capsys, with_profile(tmp_path, "prod", "eks-karpenter"), "eks-karpenter-scale-from-zero")
    assert finding_line(lines, "capacity") == (
        "  [ok] capacity: all 4 replicas fit (0 node(s) matching karpenter.k8s.aws/instance-gpu-name In [a100] and "
        "karpenter.k8s.aws/instance-gpu-memory In [81920] have room; the node pools can add 4; each needs 4 "
        "nvidia.com/gpu on one node)."
    )


def test_the_capacity_requirements_are_read_off_the_rendered_stack() -> None:
    from cluster.capacity import Requirements
    from tests.factories import example_stack, shipped_stack
    from tests.kubernetes_fixtures import plan_of
    from validation.cluster import capacity_needs

    assert capacity_needs(plan_of(shipped_stack("prod"))) == Requirements(4, 2, 4, spread_min_domains=4)
    assert capacity_needs(plan_of(example_stack("llama-405b-on-2x8-a100-80gb"))) == Requirements(
        8, 1, 2, nodes_per_replica=2, rdma_resources={"rdma/ib": 1}, needs_leaderworkerset=True, spread_min_domains=2
    )


def test_a_spread_that_may_pack_replicas_sets_no_min_domains_for_the_capacity_check() -> None:
    from tests.factories import make_config
    from tests.kubernetes_fixtures import plan_of
    from validation.cluster import capacity_needs

    packed = make_config(replicas=2, scheduling={"when_unsatisfiable": "ScheduleAnyway"})
    shared = make_config(replicas=2)
    assert (capacity_needs(plan_of(packed)).spread_min_domains, capacity_needs(plan_of(shared)).spread_min_domains) == (None, 2)


def test_prod_on_a_cluster_running_keda_2_20_names_the_keda_version_that_renders_its_fallback_behavior(capsys) -> None:  # type: ignore[no-untyped-def]
    _, lines = cluster_section(capsys, STACKS / "Pulumi.prod.yaml", "dgx-a100-3-nodes")  # keda-operator 2.20.1
    keda = [line for line in lines if "] keda: the cluster runs" in line]
    assert keda == [
        "  [warn] keda: the cluster runs KEDA 2.20.1, but autoscaling.keda_version is '2.16': the ScaledObject leaves "
        "out fallback.behavior (KEDA >= 2.17), so a Prometheus outage sets the static fallback.replicas instead of "
        'keeping the current count. Fix: set autoscaling.keda_version: "2.20".'
    ]


def dns_lines(capsys, path: Path) -> list[str]:  # type: ignore[no-untyped-def]
    _, lines = cluster_section(capsys, path, "gke-node-local-dns")
    return [line for line in lines if "] dns:" in line]


def test_the_node_local_dns_snapshot_blocks_the_generic_profile_naming_the_address_and_the_fix(capsys) -> None:  # type: ignore[no-untyped-def]
    (line,) = dns_lines(capsys, STACKS / "Pulumi.dev.yaml")
    assert line.startswith("  [block] dns: 2 node(s) run NodeLocal DNSCache") and "169.254.20.10:53" in line
    assert "Fix: set cluster.profile: gke" in line


def test_the_node_local_dns_snapshot_passes_the_gke_profile(capsys, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert dns_lines(capsys, with_profile(tmp_path, "dev", "gke")) == [
        "  [ok] dns: NodeLocal DNSCache on 2 node(s): 169.254.20.10:53 admitted."
    ]
