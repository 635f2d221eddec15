"""The rendered ScaledObject, field by field, and thresholds derived from the preflight's capacity."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.keda import Feature
from catalog.vllm_metrics import VERSIONS
from components.render.keda import render_scaled_object
from config.observability import AutoscalingConfig
from plan.scaling import (
    Capacity,
    Workload,
    capacity_of,
    derive_thresholds,
    derived_queue_threshold,
    derived_running_threshold,
    keda_features,
)
from plan.sizing import resolve_sizing
from tests.factories import make_config
from tests.plan_parts import scaling_of
from tests.promtool import crd_errors

CAPACITY = Capacity(max_num_seqs=256, kv_cache_tokens=448_224, tokens_per_request=1024, gpu_memory_utilization=0.9)
WORKLOAD = Workload(namespace="llm", model_name="llama-8b", deployment_name="llama-server")
LABELS = {"app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": "llama"}
SERVER = "http://monitoring-kube-prometheus-prometheus.monitoring.svc:9090"
ALL_TRIGGERS = ("queue", "running", "kv_cache", "latency")


def scaled_object(version: str = "0.33.0", server_address: str = SERVER, **changes: Any) -> dict[str, Any]:
    cfg = AutoscalingConfig(enabled=True, **changes)
    return render_scaled_object(scaling_of(cfg, CAPACITY, WORKLOAD, server_address, version, labels=LABELS))


def trigger(name: str, version: str = "0.33.0", **changes: Any) -> dict[str, Any]:
    triggers = scaled_object(version, triggers=ALL_TRIGGERS, **changes)["spec"]["triggers"]
    return next(t for t in triggers if t["name"] == name)


def test_concurrency_is_the_batch_when_the_kv_cache_holds_it() -> None:
    assert CAPACITY.concurrency == 256


def test_concurrency_is_what_the_kv_cache_holds_when_that_is_less() -> None:
    assert Capacity(256, 40_960, 1024, 0.9).concurrency == 40


def test_queue_threshold_is_a_tenth_of_the_concurrency_rounded_up() -> None:
    assert derived_queue_threshold(0.1, CAPACITY) == 26


def test_queue_threshold_is_at_least_one() -> None:
    assert derived_queue_threshold(0.1, Capacity(4, 10**6, 1024, 0.9)) == 1


def test_running_threshold_leaves_headroom_below_the_concurrency() -> None:
    assert derived_running_threshold(0.8, CAPACITY) == 204


def test_configured_thresholds_override_the_derived_ones() -> None:
    thresholds = derive_thresholds(AutoscalingConfig(queue_threshold=5, running_threshold=100), CAPACITY)
    assert (thresholds.queue, thresholds.running) == (5, 100)


def test_capacity_comes_from_the_preflight_report() -> None:
    report = resolve_sizing(make_config())
    capacity = capacity_of(report)
    assert capacity.max_num_seqs == report.resolved.max_num_seqs
    assert capacity.kv_cache_tokens == report.capacity.kv_cache_tokens
    assert capacity.tokens_per_request == report.target.tokens_per_request
    assert capacity.gpu_memory_utilization == report.resolved.gpu_memory_utilization


def test_scaled_object_targets_the_deployment() -> None:
    assert scaled_object()["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "llama-server"}


def test_scaled_object_metadata_names_namespace_and_labels() -> None:
    assert scaled_object()["metadata"] == {"name": "llama", "namespace": "llm", "labels": LABELS}


def test_scaled_object_sets_replica_bounds_polling_and_cooldown() -> None:
    spec = scaled_object(min_replica_count=2, max_replica_count=6, polling_interval=15, cooldown_period=120)["spec"]
    assert (spec["minReplicaCount"], spec["maxReplicaCount"]) == (2, 6)
    assert (spec["pollingInterval"], spec["cooldownPeriod"]) == (15, 120)


def test_default_min_replica_count_is_one_not_kedas_zero() -> None:
    assert scaled_object()["spec"]["minReplicaCount"] == 1


def test_fallback_on_the_oldest_supported_keda_has_no_behavior_field() -> None:
    assert scaled_object(min_replica_count=2)["spec"]["fallback"] == {"failureThreshold": 3, "replicas": 2}


def test_fallback_on_keda_2_17_never_scales_down_on_an_outage() -> None:
    assert scaled_object(min_replica_count=2, keda_version="2.17.1")["spec"]["fallback"] == {
        "failureThreshold": 3,
        "replicas": 2,
        "behavior": "currentReplicasIfHigher",
    }


def test_fallback_behavior_can_be_set_on_a_keda_that_has_it() -> None:
    spec = scaled_object(keda_version="v2.18.0", fallback_behavior="static")["spec"]
    assert spec["fallback"]["behavior"] == "static"


def test_no_version_gated_feature_is_rendered_for_the_oldest_supported_keda() -> None:
    assert keda_features(AutoscalingConfig(enabled=True)) == {"scaledobject"}


def test_fallback_behavior_is_a_feature_the_stack_needs_on_keda_2_17() -> None:
    assert keda_features(AutoscalingConfig(enabled=True, keda_version="2.17")) == {"scaledobject", Feature.FALLBACK_BEHAVIOR}


@pytest.mark.parametrize("keda_version", ["2.16", "2.17", "2.18"])
def test_every_trigger_is_average_value_so_every_keda_accepts_the_fallback(keda_version: str) -> None:
    triggers = scaled_object(triggers=ALL_TRIGGERS, keda_version=keda_version)["spec"]["triggers"]
    assert [t["metricType"] for t in triggers] == ["AverageValue"] * 4


def test_fallback_replicas_can_be_set() -> None:
    assert scaled_object(fallback_replicas=3)["spec"]["fallback"]["replicas"] == 3


def test_hpa_is_named_explicitly_for_the_alerts() -> None:
    assert scaled_object()["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["name"] == "keda-hpa-llama"


def test_scale_down_is_slow_one_pod_per_five_minutes_after_ten_minutes() -> None:
    behavior = scaled_object()["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    assert behavior["scaleDown"] == {
        "stabilizationWindowSeconds": 600,
        "selectPolicy": "Min",
        "policies": [{"type": "Pods", "value": 1, "periodSeconds": 300}],
    }


def test_scale_up_adds_two_pods_a_minute_without_stabilization() -> None:
    behavior = scaled_object()["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]
    assert behavior["scaleUp"] == {
        "stabilizationWindowSeconds": 0,
        "selectPolicy": "Max",
        "policies": [{"type": "Pods", "value": 2, "periodSeconds": 60}],
    }


def test_default_triggers_are_queue_running_and_kv_cache() -> None:
    assert [t["name"] for t in scaled_object()["spec"]["triggers"]] == ["queue", "running", "kv_cache"]


def test_no_latency_trigger_unless_asked_for() -> None:
    assert "latency" not in [t["name"] for t in scaled_object()["spec"]["triggers"]]


def test_queue_trigger_sums_waiting_requests_per_replica() -> None:
    assert trigger("queue") == {
        "type": "prometheus",
        "name": "queue",
        "metricType": "AverageValue",
        "metadata": {
            "serverAddress": SERVER,
            "query": 'sum(vllm:num_requests_waiting{namespace="llm",model_name="llama-8b"})',
            "threshold": "26",
            "ignoreNullValues": "false",
        },
    }


def test_running_trigger_sums_running_requests_against_the_derived_threshold() -> None:
    metadata = trigger("running")["metadata"]
    assert metadata["query"] == 'sum(vllm:num_requests_running{namespace="llm",model_name="llama-8b"})'
    assert metadata["threshold"] == "204"
    assert trigger("running")["metricType"] == "AverageValue"


def test_kv_cache_trigger_sums_each_pods_usage_in_thousandths_against_a_per_replica_threshold() -> None:
    kv = trigger("kv_cache")
    assert kv["metricType"] == "AverageValue"
    assert kv["metadata"]["query"] == (
        '(sum(avg by (pod) (vllm:kv_cache_usage_perc{namespace="llm",model_name="llama-8b"}))) * 1000'
    )
    assert kv["metadata"]["threshold"] == "850"


def test_kv_cache_trigger_uses_the_v0_gauge_on_vllm_0_7_2() -> None:
    query = trigger("kv_cache", "0.7.2")["metadata"]["query"]
    assert query == '(sum(avg by (pod) (vllm:gpu_cache_usage_perc{namespace="llm",model_name="llama-8b"}))) * 1000'


def test_latency_trigger_reads_p95_ttft_and_treats_an_idle_but_reporting_server_as_zero() -> None:
    latency = trigger("latency")
    assert latency["metricType"] == "AverageValue"
    assert latency["metadata"]["query"] == (
        "(((histogram_quantile(0.95, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket"
        '{namespace="llm",model_name="llama-8b"}[2m]))) > 0) * on () count(count by (pod) '
        '(vllm:num_requests_running{namespace="llm",model_name="llama-8b"}))) or '
        '(sum(vllm:num_requests_running{namespace="llm",model_name="llama-8b"}) * 0)) * 1000'
    )
    assert latency["metadata"]["threshold"] == "2000"


@pytest.mark.parametrize("name", ALL_TRIGGERS)
def test_every_trigger_turns_empty_results_into_errors(name: str) -> None:
    assert trigger(name)["metadata"]["ignoreNullValues"] == "false"


@pytest.mark.parametrize("name", ALL_TRIGGERS)
def test_every_trigger_metadata_value_is_a_string(name: str) -> None:
    assert all(isinstance(value, str) for value in trigger(name)["metadata"].values())


def test_no_trigger_sets_the_removed_metric_name_field() -> None:
    assert all("metricName" not in t["metadata"] for t in scaled_object(triggers=ALL_TRIGGERS)["spec"]["triggers"])


def test_no_trigger_sets_an_activation_threshold_that_min_replicas_would_ignore() -> None:
    assert all("activationThreshold" not in t["metadata"] for t in scaled_object(triggers=ALL_TRIGGERS)["spec"]["triggers"])


def test_every_trigger_queries_the_server_address_it_is_given() -> None:
    triggers = scaled_object(server_address="http://prom.obs.svc:9090", triggers=ALL_TRIGGERS)["spec"]["triggers"]
    assert {t["metadata"]["serverAddress"] for t in triggers} == {"http://prom.obs.svc:9090"}


@pytest.mark.parametrize("version", sorted(VERSIONS))
@pytest.mark.parametrize("keda_version", ["2.16", "2.17"])
def test_scaled_object_matches_the_keda_crd_schema(version: str, keda_version: str) -> None:
    manifest = scaled_object(version, triggers=ALL_TRIGGERS, keda_version=keda_version)
    assert crd_errors(manifest, "keda.sh_scaledobjects.yaml") == []


def test_crd_check_catches_a_snake_case_field() -> None:
    broken = scaled_object()
    broken["spec"]["min_replica_count"] = 1
    assert crd_errors(broken, "keda.sh_scaledobjects.yaml") == [
        "spec: Additional properties are not allowed ('min_replica_count' was unexpected)"
    ]
