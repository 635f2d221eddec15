"""Autoscaling and monitoring config: defaults, fractions, and the cross-key rules with their messages."""

from __future__ import annotations

import pytest

from config.errors import ConfigError
from config.observability import AutoscalingConfig, MonitoringConfig
from tests.factories import REPO, make_config


def rendered_issues(**changes: object) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        make_config(**changes)
    return [issue.render() for issue in caught.value.issues]


def test_autoscaling_is_off_by_default() -> None:
    assert AutoscalingConfig().enabled is False


def test_prometheus_address_is_derived_from_monitoring_by_default() -> None:
    assert AutoscalingConfig().server_address is None


def test_default_keda_version_is_the_oldest_supported_release() -> None:
    assert AutoscalingConfig().keda_version == "2.16"


def test_fallback_behavior_on_a_keda_without_it_is_refused_with_the_fix() -> None:
    issues = rendered_issues(autoscaling={"fallback_behavior": "static"})
    assert issues == [
        "vllm-serving:autoscaling.fallback_behavior: is 'static', but KEDA 2.16 (autoscaling.keda_version) has no "
        "fallback.behavior: it arrived in KEDA 2.17 and older webhooks refuse the ScaledObject. Fix: remove "
        "autoscaling.fallback_behavior, or set autoscaling.keda_version to the installed release if it is 2.17 or newer."
    ]


def test_fallback_behavior_loads_with_a_keda_that_has_it() -> None:
    cfg = make_config(autoscaling={"fallback_behavior": "static", "keda_version": "2.17.0"})
    assert cfg.autoscaling.fallback_behavior == "static"


def test_a_keda_version_that_is_not_a_version_is_refused() -> None:
    issues = rendered_issues(autoscaling={"keda_version": "latest"})
    assert issues[0].startswith("vllm-serving:autoscaling.keda_version: 'latest' does not match the pattern")


def test_autoscaling_without_a_release_needs_a_prometheus_service_or_address() -> None:
    issues = rendered_issues(autoscaling={"enabled": True}, monitoring={"release": None})
    assert issues == [
        "vllm-serving:autoscaling.server_address: is unset and monitoring.release is null, so there is no "
        "Prometheus Service name to derive KEDA's serverAddress from. Fix: set monitoring.prometheus_service (and "
        "monitoring.prometheus_namespace), or autoscaling.server_address, e.g. "
        "http://prometheus-operated.monitoring.svc:9090."
    ]


def test_a_monitor_label_that_is_not_a_kubernetes_label_is_refused() -> None:
    issues = rendered_issues(monitoring={"monitor_labels": {"release": "kube prometheus"}})
    assert issues[0].startswith(
        "vllm-serving:monitoring.monitor_labels: 'kube prometheus' (label release) is not a Kubernetes label value."
    )


def test_default_release_label_is_monitoring() -> None:
    assert MonitoringConfig().release == "monitoring"


def test_every_observability_field_has_a_description() -> None:
    for model in (AutoscalingConfig, MonitoringConfig):
        assert [name for name, field in model.model_fields.items() if not field.description] == []


def test_min_above_max_names_both_keys_and_the_fix() -> None:
    issues = rendered_issues(autoscaling={"enabled": True, "min_replica_count": 5, "max_replica_count": 2}, replicas=2)
    assert issues == [
        "vllm-serving:autoscaling.min_replica_count: (5) is above autoscaling.max_replica_count (2). "
        "Fix: lower autoscaling.min_replica_count or raise autoscaling.max_replica_count."
    ]


def test_min_replica_count_zero_without_the_http_add_on_is_refused_with_the_scale_to_zero_reason() -> None:
    issues = rendered_issues(autoscaling={"min_replica_count": 0})
    assert len(issues) == 1
    assert issues[0].startswith(
        "vllm-serving:autoscaling.min_replica_count: is 0 without autoscaling.http_add_on: every trigger reads "
        "vLLM's own metrics, which vanish with the last pod"
    )


def test_kv_threshold_written_as_percent_is_refused_with_the_fraction() -> None:
    issues = rendered_issues(autoscaling={"kv_cache_usage_threshold": 85})
    assert issues == [
        "vllm-serving:autoscaling.kv_cache_usage_threshold: 85.0 is above 1, but "
        "autoscaling.kv_cache_usage_threshold is a 0..1 fraction (vLLM reports 1 = 100 %). "
        "Fix: write 0.85, not 85."
    ]


def test_kv_alert_threshold_written_as_percent_is_refused() -> None:
    issues = rendered_issues(monitoring={"kv_cache_usage_alert_threshold": 90})
    assert issues[0].endswith("Fix: write 0.9, not 90.")


def test_fallback_replicas_outside_the_bounds_is_refused() -> None:
    issues = rendered_issues(autoscaling={"fallback_replicas": 9})
    assert issues == [
        "vllm-serving:autoscaling.fallback_replicas: (9) is outside "
        "autoscaling.min_replica_count..max_replica_count (1..4). Fix: set autoscaling.fallback_replicas "
        "within that range, or remove it (it defaults to min_replica_count)."
    ]


def test_autoscaling_without_monitoring_is_refused() -> None:
    issues = rendered_issues(autoscaling={"enabled": True}, monitoring={"enabled": False})
    assert len(issues) == 1
    assert issues[0].startswith("vllm-serving:autoscaling.enabled: is true, but monitoring.enabled is false")


def test_replicas_outside_the_autoscaling_bounds_is_refused_when_enabled() -> None:
    issues = rendered_issues(autoscaling={"enabled": True, "max_replica_count": 2}, replicas=3)
    assert issues[0].startswith("vllm-serving:replicas: (3) is outside autoscaling.min_replica_count..max_replica_count")


def test_replicas_outside_the_bounds_is_fine_while_autoscaling_is_off() -> None:
    assert make_config(autoscaling={"max_replica_count": 2}, replicas=3).replicas == 3


def test_a_trigger_named_twice_is_refused() -> None:
    issues = rendered_issues(autoscaling={"triggers": ["queue", "queue"]})
    assert issues == [
        "vllm-serving:autoscaling.triggers: ['queue', 'queue'] names a trigger twice. Fix: list each trigger once."
    ]


def test_an_unknown_trigger_is_refused() -> None:
    issues = rendered_issues(autoscaling={"triggers": ["gpu_util"]})
    assert issues[0].startswith("vllm-serving:autoscaling.triggers[0]: 'gpu_util' is not allowed")


def test_a_valid_autoscaling_stack_loads() -> None:
    cfg = make_config(autoscaling={"enabled": True, "min_replica_count": 1, "max_replica_count": 3})
    assert (cfg.autoscaling.min_replica_count, cfg.autoscaling.max_replica_count) == (1, 3)


def test_every_observability_key_is_in_the_configuration_reference() -> None:
    text = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    keys = [f"autoscaling.{key}" for key in AutoscalingConfig.model_fields]
    keys += [f"monitoring.{key}" for key in MonitoringConfig.model_fields]
    assert [key for key in keys if f"`vllm-serving:{key}`" not in text] == []
