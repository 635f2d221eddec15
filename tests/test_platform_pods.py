"""What a profile adds to the GPU pods: on eks-karpenter, karpenter.sh/do-not-disrupt (Karpenter's drift,
expiry and consolidation would each cost a full reload; catalog/profiles.py)."""

from __future__ import annotations

from typing import Any

from components.render.manifests import render_manifests
from tests.factories import example_stack, make_config
from tests.kubernetes_fixtures import plan_of
from validation.keys import validate_config

DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"


def template_annotations(objects: list[dict[str, Any]], kind: str) -> dict[str, str]:
    workload = next(o for o in objects if o["kind"] == kind)
    spec = workload["spec"]
    template = spec["leaderWorkerTemplate"]["workerTemplate"] if kind == "LeaderWorkerSet" else spec["template"]
    return template["metadata"].get("annotations", {})


def test_on_eks_karpenter_the_server_pods_may_not_be_disrupted() -> None:
    objects = render_manifests(plan_of(make_config(cluster={"profile": "eks-karpenter"})))
    assert template_annotations(objects, "Deployment")[DO_NOT_DISRUPT] == "true"


def test_on_eks_karpenter_every_rank_of_a_multi_node_group_may_not_be_disrupted() -> None:
    raw = example_stack("llama-405b-on-2x8-a100-80gb").model_dump(exclude_unset=True)
    objects = render_manifests(plan_of(validate_config({**raw, "cluster": {"profile": "eks-karpenter"}})))
    assert template_annotations(objects, "LeaderWorkerSet")[DO_NOT_DISRUPT] == "true"


def test_on_eks_karpenter_the_per_replica_stateful_set_pods_may_not_be_disrupted() -> None:
    cfg = make_config(cluster={"profile": "eks-karpenter"}, replicas=2, delivery={"mode": "per_replica_volume"})
    assert template_annotations(render_manifests(plan_of(cfg)), "StatefulSet")[DO_NOT_DISRUPT] == "true"


def test_other_profiles_add_no_karpenter_annotation() -> None:
    assert DO_NOT_DISRUPT not in template_annotations(render_manifests(plan_of(make_config())), "Deployment")
