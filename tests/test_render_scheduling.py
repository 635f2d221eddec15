"""GPU node selection, spreading, rollout strategy and disruption budget on the rendered objects."""

from __future__ import annotations

import pytest

from config.errors import ConfigError
from tests.kubernetes_fixtures import configured, manifests, one, pod_spec, server, stack


def test_prod_pods_require_the_a100_80gb_gfd_product_label():
    spec = pod_spec(manifests(*stack("prod")))
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [
        {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-A100-SXM4-80GB"]}]}
    ]


def test_dev_pods_require_the_a100_40gb_gfd_product_label():
    spec = pod_spec(manifests(*stack("dev")))
    term = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    assert term["matchExpressions"][0]["values"] == ["NVIDIA-A100-SXM4-40GB"]


def test_every_acceptable_product_is_allowed_and_the_preflight_sized_the_smallest():
    cfg, report = configured(gpu={"product": "A100-SXM4-80GB", "also_accept": ["A100-80GB-PCIe", "A100-SXM4-40GB"]})
    spec = pod_spec(manifests(cfg, report))
    values = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
        "matchExpressions"
    ][0]["values"]
    assert values == ["NVIDIA-A100-SXM4-80GB", "NVIDIA-A100-80GB-PCIe", "NVIDIA-A100-SXM4-40GB"]
    assert report.resolved.gpu.name == "A100-SXM4-40GB"


def test_pods_tolerate_the_gpu_taint_whatever_its_value():
    assert pod_spec(manifests(*stack("prod")))["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]


def test_deployment_requests_four_gpus_for_tensor_parallel_four():
    resources = server(manifests(*stack("prod")))["resources"]
    assert resources["requests"]["nvidia.com/gpu"] == resources["limits"]["nvidia.com/gpu"] == "4"


def test_deployment_requests_gpus_for_tensor_times_pipeline_parallel():
    cfg, report = configured(
        model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
        engine={"max_model_len": 8192, "tensor_parallel_size": 2, "pipeline_parallel_size": 2},
    )
    assert server(manifests(cfg, report))["resources"]["limits"]["nvidia.com/gpu"] == "4"


def test_extra_node_labels_become_a_node_selector():
    cfg, report = configured(
        gpu={"product": "A100-SXM4-80GB", "node_selector": {"cloud.google.com/gke-accelerator": "nvidia-a100-80gb"}}
    )
    assert pod_spec(manifests(cfg, report))["nodeSelector"] == {"cloud.google.com/gke-accelerator": "nvidia-a100-80gb"}


def test_clusters_without_gpu_feature_discovery_select_gpus_by_their_cloud_label_only():
    gke = {"cloud.google.com/gke-accelerator": "nvidia-a100-80gb"}
    cfg, report = configured(
        gpu={"product": "A100-SXM4-80GB", "node_selector": gke}, scheduling={"require_gpu_product_label": False}
    )
    spec = pod_spec(manifests(cfg, report))
    assert "affinity" not in spec and spec["nodeSelector"] == gke


def test_dropping_the_gpu_product_label_without_a_node_selector_is_refused():
    with pytest.raises(ConfigError) as error:
        configured(scheduling={"require_gpu_product_label": False})
    assert [issue.key for issue in error.value.issues] == ["scheduling.require_gpu_product_label"]


def test_no_node_selector_without_extra_labels():
    assert "nodeSelector" not in pod_spec(manifests(*stack("prod")))


def test_prod_replicas_must_run_on_different_nodes():
    spread = pod_spec(manifests(*stack("prod")))["topologySpreadConstraints"]
    assert [(c["topologyKey"], c["maxSkew"], c["whenUnsatisfiable"]) for c in spread] == [
        ("kubernetes.io/hostname", 1, "DoNotSchedule")
    ]


def test_prod_counts_missing_nodes_up_to_its_autoscaling_maximum():
    # With one GPU node, skew over existing nodes would let replicas pack onto it; minDomains forbids that.
    assert pod_spec(manifests(*stack("prod")))["topologySpreadConstraints"][0]["minDomains"] == 4


def test_fixed_replicas_set_min_domains_to_the_replica_count():
    cfg, report = configured(replicas=3)
    assert pod_spec(manifests(cfg, report))["topologySpreadConstraints"][0]["minDomains"] == 3


def test_a_stack_can_opt_back_into_best_effort_spread_without_min_domains():
    cfg, report = configured(replicas=2, scheduling={"when_unsatisfiable": "ScheduleAnyway"})
    spread = pod_spec(manifests(cfg, report))["topologySpreadConstraints"][0]
    assert spread["whenUnsatisfiable"] == "ScheduleAnyway" and "minDomains" not in spread


def test_zone_spread_sets_no_min_domains():
    cfg, report = configured(replicas=4, scheduling={"spread": "zone"})
    assert "minDomains" not in pod_spec(manifests(cfg, report))["topologySpreadConstraints"][0]


def test_spread_selects_the_server_pods():
    spread = pod_spec(manifests(*stack("prod")))["topologySpreadConstraints"][0]
    assert spread["labelSelector"]["matchLabels"] == {
        "app.kubernetes.io/name": "vllm",
        "app.kubernetes.io/instance": "llama",
        "app.kubernetes.io/component": "server",
    }


def test_spread_by_zone_when_configured():
    cfg, report = configured(replicas=2, scheduling={"spread": "zone", "when_unsatisfiable": "DoNotSchedule"})
    spread = pod_spec(manifests(cfg, report))["topologySpreadConstraints"][0]
    assert (spread["topologyKey"], spread["whenUnsatisfiable"]) == ("topology.kubernetes.io/zone", "DoNotSchedule")


def test_no_spread_constraint_for_a_single_replica():
    assert "topologySpreadConstraints" not in pod_spec(manifests(*stack("dev")))


def test_no_spread_constraint_when_disabled():
    cfg, report = configured(replicas=2, scheduling={"spread": "none"})
    assert "topologySpreadConstraints" not in pod_spec(manifests(cfg, report))


def test_several_replicas_roll_one_at_a_time_without_surge():
    strategy = one(manifests(*stack("prod")), "Deployment")["spec"]["strategy"]
    assert strategy == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}


def test_a_single_replica_is_recreated_so_its_gpus_are_freed_first():
    assert one(manifests(*stack("dev")), "Deployment")["spec"]["strategy"] == {"type": "Recreate"}


def test_autoscaled_stack_rolls_even_when_it_starts_with_one_replica():
    cfg, report = configured(
        autoscaling={"enabled": True, "min_replica_count": 1, "max_replica_count": 3}, cache={"storage_class_name": "efs-sc"}
    )
    assert one(manifests(cfg, report), "Deployment")["spec"]["strategy"]["type"] == "RollingUpdate"


def test_disruption_budget_evicts_at_most_one_server_pod():
    pdb = one(manifests(*stack("prod")), "PodDisruptionBudget")["spec"]
    assert pdb["maxUnavailable"] == 1 and "minAvailable" not in pdb


def test_disruption_budget_selects_the_server_pods():
    objects = manifests(*stack("prod"))
    selector = one(objects, "PodDisruptionBudget")["spec"]["selector"]
    assert selector == one(objects, "Deployment")["spec"]["selector"]


def test_unhealthy_pods_never_block_a_node_drain():
    assert one(manifests(*stack("prod")), "PodDisruptionBudget")["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow"
