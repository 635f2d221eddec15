"""What a profile and scheduling add to the pods: scheduling.tolerations on the server, download and copy
pods; on eks-karpenter karpenter.sh/do-not-disrupt (drift and consolidation would each cost a full reload;
catalog/profiles.py)."""

from __future__ import annotations

from typing import Any

import pytest

from components.render.manifests import render_manifests
from config.errors import ConfigError
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


SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"


@pytest.mark.parametrize("profile", ["gke", "aks"])
def test_where_cluster_autoscaler_runs_the_server_pods_are_not_safe_to_evict(profile: str) -> None:
    objects = render_manifests(plan_of(make_config(cluster={"profile": profile})))
    assert template_annotations(objects, "Deployment") == {SAFE_TO_EVICT: "false"}


def test_every_rank_of_a_multi_node_group_on_gke_is_not_safe_to_evict() -> None:
    raw = example_stack("llama-405b-on-2x8-a100-80gb").model_dump(exclude_unset=True)
    objects = render_manifests(plan_of(validate_config({**raw, "cluster": {"profile": "gke"}})))
    assert template_annotations(objects, "LeaderWorkerSet")[SAFE_TO_EVICT] == "false"


def test_a_generic_cluster_that_names_cluster_autoscaler_gets_its_annotation() -> None:
    objects = render_manifests(plan_of(make_config(cluster={"node_autoscaler": "cluster-autoscaler"})))
    assert template_annotations(objects, "Deployment") == {SAFE_TO_EVICT: "false"}


def test_a_profile_whose_autoscaler_is_overridden_to_none_adds_no_annotation() -> None:
    objects = render_manifests(plan_of(make_config(cluster={"profile": "gke", "node_autoscaler": "none"})))
    assert template_annotations(objects, "Deployment") == {}


def test_the_download_job_pods_carry_no_eviction_annotation() -> None:
    objects = render_manifests(plan_of(make_config(cluster={"profile": "gke"})))
    job = next(o for o in objects if o["kind"] == "Job")
    assert SAFE_TO_EVICT not in job["spec"]["template"]["metadata"].get("annotations", {})


DEDICATED = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
DEDICATED_RENDERED = {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}


def pod_tolerations(objects: list[dict[str, Any]], kind: str) -> list[dict[str, str]]:
    return next(o for o in objects if o["kind"] == kind)["spec"]["template"]["spec"].get("tolerations", [])


def test_scheduling_tolerations_reach_the_server_pods_after_the_gpu_vendors() -> None:
    objects = render_manifests(plan_of(make_config(scheduling={"tolerations": [DEDICATED]})))
    assert pod_tolerations(objects, "Deployment")[-1] == DEDICATED_RENDERED


def test_scheduling_tolerations_reach_the_download_job_pods() -> None:
    objects = render_manifests(plan_of(make_config(scheduling={"tolerations": [DEDICATED]})))
    assert DEDICATED_RENDERED in pod_tolerations(objects, "Job")


def test_scheduling_tolerations_reach_the_bucket_copy_pods() -> None:
    bucket = {"uri": "s3://models/llama/", "copy_from_hub": True, "credentials_secret": "keys"}
    cfg = make_config(
        model={"revision": "0e9e39f249a16976918f6564b8830bc894c89659"},
        delivery={"mode": "object_storage", "object_storage": bucket},
        scheduling={"tolerations": [DEDICATED]},
    )
    assert DEDICATED_RENDERED in pod_tolerations(render_manifests(plan_of(cfg)), "Job")


def test_the_cluster_check_reads_the_scheduling_tolerations() -> None:
    assert DEDICATED_RENDERED in plan_of(make_config(scheduling={"tolerations": [DEDICATED]})).placement.tolerations


@pytest.mark.parametrize(
    ("toleration", "message"),
    [
        ({"key": "dedicated", "operator": "Exists", "value": "gpu"}, "value 'gpu' is set with operator Exists"),
        ({"value": "gpu"}, "operator Equal needs a key"),
        ({"key": "dedicated", "effect": "NoEvict"}, "scheduling.tolerations[0].effect"),
    ],
)
def test_a_bad_toleration_is_refused_naming_the_key_and_the_fix(toleration: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as error:
        make_config(scheduling={"tolerations": [toleration]})
    assert message in str(error.value)
