"""KEDA's fallback, as its code computes it (docs/sources.md §D.4): for a failing trigger it reports
int64(threshold) x replicas, and the HPA wants ceil(that / threshold). Each rendered trigger must then ask for
exactly the fallback's replicas, or an outage of Prometheus scales the server down."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from components.render.keda import render_scaled_object, scaled_threshold
from config.errors import ConfigError
from config.observability import AutoscalingConfig
from plan.scaling import Capacity, Workload
from tests.factories import make_config
from tests.plan_parts import scaling_of

CAPACITY = Capacity(max_num_seqs=256, kv_cache_tokens=448_224, tokens_per_request=1024, gpu_memory_utilization=0.9)
WORKLOAD = Workload(namespace="llm", model_name="llama-8b", deployment_name="llama-server")
SERVER = "http://monitoring-kube-prometheus-prometheus.monitoring.svc:9090"
ALL_TRIGGERS = ("queue", "running", "kv_cache", "latency")


def replicas_on_fallback(trigger: dict[str, Any], replicas: int) -> int:
    """The HPA's wish from KEDA's fallback metric for this trigger (fallback.go doFallback, l.152)."""
    threshold = float(trigger["metadata"]["threshold"])
    return math.ceil(int(threshold) * replicas / threshold)


def triggers(**changes: Any) -> list[dict[str, Any]]:
    cfg = AutoscalingConfig(**{"enabled": True, "triggers": ALL_TRIGGERS, "max_replica_count": 8, **changes})
    scaled = render_scaled_object(scaling_of(cfg, CAPACITY, WORKLOAD, SERVER, "0.33.0"))
    return list(scaled["spec"]["triggers"])


@pytest.mark.parametrize("name", ALL_TRIGGERS)
def test_each_default_trigger_asks_for_the_fallback_replicas_while_prometheus_is_down(name: str) -> None:
    trigger = next(t for t in triggers() if t["name"] == name)
    assert replicas_on_fallback(trigger, 3) == 3


def test_a_kv_cache_only_autoscaler_keeps_its_replicas_while_prometheus_is_down() -> None:
    (kv,) = triggers(triggers=("kv_cache",))
    assert replicas_on_fallback(kv, 4) == 4


@settings(max_examples=60, deadline=None)
@given(
    kv=st.floats(min_value=0.001, max_value=1.0),
    latency=st.floats(min_value=0.001, max_value=600.0),
    replicas=st.integers(min_value=1, max_value=8),
)
def test_any_accepted_threshold_renders_a_trigger_whose_fallback_keeps_the_replicas(
    kv: float, latency: float, replicas: int
) -> None:
    rendered = triggers(kv_cache_usage_threshold=kv, latency_threshold_seconds=latency)
    assert [replicas_on_fallback(t, replicas) for t in rendered] == [replicas] * len(rendered)


def test_the_kv_cache_threshold_in_thousandths_is_the_fraction_rounded() -> None:
    assert scaled_threshold("kv_cache", 0.8555) == 856


def test_a_latency_threshold_below_half_a_millisecond_renders_one_millisecond_not_zero() -> None:
    assert scaled_threshold("latency", 0.0001) == 1


def test_a_fractional_queue_threshold_is_refused_with_the_whole_numbers_beside_it() -> None:
    with pytest.raises(ConfigError) as caught:
        make_config(autoscaling={"queue_threshold": 2.5})
    assert [issue.render() for issue in caught.value.issues] == [
        "vllm-serving:autoscaling.queue_threshold: 2.5 is not a whole number of requests: KEDA's fallback truncates "
        "autoscaling.queue_threshold to 2, so while Prometheus is unreachable the HPA would want fewer than "
        "autoscaling.fallback_replicas. Fix: write 2 or 3."
    ]


def test_a_fractional_running_threshold_is_refused_naming_its_key() -> None:
    with pytest.raises(ConfigError) as caught:
        make_config(autoscaling={"running_threshold": 100.5})
    assert caught.value.issues[0].render().startswith("vllm-serving:autoscaling.running_threshold: 100.5 is not a whole")


def test_a_whole_running_threshold_written_as_a_float_loads() -> None:
    assert make_config(autoscaling={"running_threshold": 100.0}).autoscaling.running_threshold == 100
