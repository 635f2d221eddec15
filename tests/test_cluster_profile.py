"""The cluster profile: one place maps (profile, GPU product) to the node selector the pods carry."""

from __future__ import annotations

import pytest

from catalog.gpu_labels import PROVIDER_LABELS
from catalog.gpus import GPUS
from catalog.selectors import NoLabelValue, gpu_selector_terms
from components.render.scheduling import render_affinity
from config.errors import ConfigError
from tests.factories import make_config
from tests.kubernetes_fixtures import placement_of, plan_of


def affinity_terms(**changes):  # type: ignore[no-untyped-def]
    affinity = render_affinity(placement_of(make_config(**changes)))
    assert affinity is not None
    return affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]


def test_every_catalog_gpu_has_a_provider_label_entry() -> None:
    assert set(PROVIDER_LABELS) == set(GPUS)


def test_the_generic_profile_selects_the_gpu_feature_discovery_product() -> None:
    assert affinity_terms() == [
        {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-A100-SXM4-80GB"]}]}
    ]


def test_the_gke_profile_selects_the_80_gb_a100_by_its_gke_accelerator() -> None:
    assert affinity_terms(cluster={"profile": "gke"}) == [
        {"matchExpressions": [{"key": "cloud.google.com/gke-accelerator", "operator": "In", "values": ["nvidia-a100-80gb"]}]}
    ]


def test_on_gke_nvidia_tesla_a100_is_the_40_gb_part() -> None:
    assert gpu_selector_terms("gke-accelerator", ["A100-SXM4-40GB"])[0]["matchExpressions"][0]["values"] == [
        "nvidia-tesla-a100"
    ]


def test_the_karpenter_profile_pins_the_gpu_memory_as_a100_covers_40_and_80_gb() -> None:
    assert affinity_terms(cluster={"profile": "eks-karpenter"}) == [
        {
            "matchExpressions": [
                {"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In", "values": ["a100"]},
                {"key": "karpenter.k8s.aws/instance-gpu-memory", "operator": "In", "values": ["81920"]},
            ]
        }
    ]


def test_several_acceptable_products_on_karpenter_are_one_term_each() -> None:
    terms = affinity_terms(cluster={"profile": "eks-karpenter"}, gpu={"also_accept": ["H100-80GB-HBM3"]})
    assert [t["matchExpressions"][0]["values"] for t in terms] == [["a100"], ["h100"]]


def test_the_aks_profile_selects_the_instance_type() -> None:
    assert affinity_terms(cluster={"profile": "aks"})[0]["matchExpressions"][0] == {
        "key": "node.kubernetes.io/instance-type",
        "operator": "In",
        "values": ["Standard_ND96amsr_A100_v4"],
    }


def test_the_gpu_label_key_overrides_the_profile() -> None:
    terms = affinity_terms(cluster={"profile": "gke", "gpu_label": "gfd"})
    assert terms[0]["matchExpressions"][0]["key"] == "nvidia.com/gpu.product"


def test_require_gpu_product_label_still_overrides_both_ways() -> None:
    assert (
        affinity_terms(cluster={"profile": "gke"}, scheduling={"require_gpu_product_label": True})[0]["matchExpressions"][0][
            "key"
        ]
        == "nvidia.com/gpu.product"
    )
    cfg = make_config(
        cluster={"profile": "gke"}, scheduling={"require_gpu_product_label": False}, gpu={"node_selector": {"pool": "a100"}}
    )
    assert render_affinity(placement_of(cfg)) is None


def test_a_product_the_provider_does_not_label_is_a_config_error_naming_the_key() -> None:
    with pytest.raises(ConfigError) as error:
        make_config(gpu={"product": "L40S"}, cluster={"profile": "gke"})
    assert [i.key for i in error.value.issues] == ["cluster.gpu_label"]
    assert "L40S has no known gke-accelerator label value" in error.value.render()


def test_gpu_label_none_without_a_node_selector_is_refused() -> None:
    with pytest.raises(ConfigError) as error:
        make_config(cluster={"gpu_label": "none"})
    assert [i.key for i in error.value.issues] == ["cluster.gpu_label"]


def test_an_unknown_profile_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as error:
        make_config(cluster={"profile": "eks"})
    assert error.value.issues[0].key == "cluster.profile"


def test_a_missing_label_value_raises_for_the_selector_builder() -> None:
    with pytest.raises(NoLabelValue):
        gpu_selector_terms("karpenter", ["A100-PCIE-40GB"])


def test_the_aks_profile_tolerates_the_sku_gpu_taint_aks_guides_put_on_gpu_pools() -> None:
    from components.render.scheduling import render_tolerations

    assert render_tolerations(placement_of(make_config(cluster={"profile": "aks"}))) == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
    ]
    assert render_tolerations(placement_of(make_config())) == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]


def test_the_runtime_class_follows_the_profile_unless_set() -> None:
    assert placement_of(make_config(cluster={"profile": "gke"})).runtime_class is None
    set_here = make_config(cluster={"profile": "gke"}, scheduling={"runtime_class_name": "nvidia"})
    assert placement_of(set_here).runtime_class == "nvidia"


def test_the_profile_names_the_providers_storage_classes() -> None:
    from catalog.profiles import PROFILES

    assert {name: (p.storage_class, p.rwx_storage_class) for name, p in PROFILES.items() if p.storage_class} == {
        "gke": ("standard-rwo", "standard-rwx"),
        "eks-karpenter": ("gp2", "efs-sc"),
        "aks": ("managed-csi", "azurefile-csi"),
    }


def test_a_cluster_group_on_a_docker_stack_is_refused() -> None:
    with pytest.raises(ConfigError) as error:
        make_config(target="docker", cluster={"profile": "gke"}, docker={"host": "unix:///var/run/docker.sock"})
    assert "cluster" in [i.key.split(".")[0] for i in error.value.issues]


def test_the_keda_features_checked_are_the_ones_the_rendered_scaled_object_uses() -> None:
    from components.render.keda import render_scaled_object_spec
    from tests.keda_spec import keda_features_of

    # Every trigger is AverageValue and fallback.behavior is rendered from KEDA 2.17 on (components/render/keda.py).
    for version, expected in (("2.16", {"scaledobject"}), ("2.17", {"scaledobject", "fallback.behavior"})):
        scaling = plan_of(make_config(autoscaling={"enabled": True, "keda_version": version})).scaling
        assert (scaling.keda_features, keda_features_of(render_scaled_object_spec(scaling))) == (expected, expected)


def test_a_node_selector_agreeing_with_the_gpu_affinity_is_accepted() -> None:
    cfg = make_config(
        gpu={"product": "H100-80GB-HBM3", "node_selector": {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}},
        cluster={"profile": "gke"},
    )
    assert cfg.gpu.node_selector == {"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}


def test_a_node_selector_on_another_label_is_left_to_the_user() -> None:
    cfg = make_config(
        gpu={"product": "H100-80GB-HBM3", "node_selector": {"cloud.google.com/gke-nodepool": "a100-pool"}},
        cluster={"profile": "gke"},
    )
    assert cfg.gpu.node_selector == {"cloud.google.com/gke-nodepool": "a100-pool"}
