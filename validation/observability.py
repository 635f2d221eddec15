"""Rules spanning `autoscaling`, `monitoring` and the rest of the stack."""

from __future__ import annotations

from catalog.keda import Feature, supports
from config.errors import ConfigIssue, show
from config.observability import AutoscalingConfig
from config.stack import StackConfig


def cross_checks(cfg: StackConfig) -> list[ConfigIssue]:
    """Rules spanning autoscaling, monitoring and the rest of the stack."""
    scaling = cfg.autoscaling
    issues: list[ConfigIssue] = []
    if scaling.min_replica_count == 0:
        issues.append(
            ConfigIssue(
                "autoscaling.min_replica_count",
                "is 0, but every trigger reads vLLM's own metrics, which vanish with the last pod, so KEDA would "
                "never scale back up.",
                "set autoscaling.min_replica_count to 1 or more (scale-to-zero needs a signal from outside the "
                "vLLM pods; see docs/autoscaling-and-monitoring.md).",
            )
        )
    if scaling.min_replica_count > scaling.max_replica_count:
        issues.append(
            ConfigIssue(
                "autoscaling.min_replica_count",
                f"({scaling.min_replica_count}) is above autoscaling.max_replica_count ({scaling.max_replica_count}).",
                "lower autoscaling.min_replica_count or raise autoscaling.max_replica_count.",
            )
        )
    issues += _fallback_checks(scaling) + _keda_version_checks(scaling)
    if scaling.enabled:
        issues += _enabled_checks(cfg)
    return issues


def _fallback_checks(scaling: AutoscalingConfig) -> list[ConfigIssue]:
    fallback = scaling.fallback_replicas
    if fallback is None or scaling.min_replica_count <= fallback <= scaling.max_replica_count:
        return []
    return [
        ConfigIssue(
            "autoscaling.fallback_replicas",
            f"({fallback}) is outside autoscaling.min_replica_count..max_replica_count "
            f"({scaling.min_replica_count}..{scaling.max_replica_count}).",
            "set autoscaling.fallback_replicas within that range, or remove it (it defaults to min_replica_count).",
        )
    ]


def _keda_version_checks(scaling: AutoscalingConfig) -> list[ConfigIssue]:
    if scaling.fallback_behavior is None or supports(scaling.keda_version, Feature.FALLBACK_BEHAVIOR):
        return []
    return [
        ConfigIssue(
            "autoscaling.fallback_behavior",
            f"is {scaling.fallback_behavior!r}, but KEDA {scaling.keda_version} (autoscaling.keda_version) has no "
            "fallback.behavior: it arrived in KEDA 2.17 and older webhooks refuse the ScaledObject.",
            "remove autoscaling.fallback_behavior, or set autoscaling.keda_version to the installed release if it "
            "is 2.17 or newer.",
        )
    ]


def _server_address_checks(cfg: StackConfig) -> list[ConfigIssue]:
    monitoring = cfg.monitoring
    if cfg.autoscaling.server_address or monitoring.release or monitoring.prometheus_service:
        return []
    if cfg.cluster.defaults.user_workload_monitoring is not None:  # OpenShift: the Thanos Querier
        return []
    return [
        ConfigIssue(
            "autoscaling.server_address",
            "is unset and monitoring.release is null, so there is no Prometheus Service name to derive KEDA's "
            "serverAddress from.",
            "set monitoring.prometheus_service (and monitoring.prometheus_namespace), or autoscaling.server_address, "
            "e.g. http://prometheus-operated.monitoring.svc:9090.",
        )
    ]


def _enabled_checks(cfg: StackConfig) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []
    if cfg.target != "kubernetes":
        issues.append(
            ConfigIssue(
                "autoscaling.enabled",
                f"is true, but target is {show(cfg.target)}; KEDA only scales Kubernetes Deployments.",
                "set autoscaling.enabled: false, or target: kubernetes.",
            )
        )
    if not cfg.monitoring.enabled:
        issues.append(
            ConfigIssue(
                "autoscaling.enabled",
                "is true, but monitoring.enabled is false: without the ServiceMonitor Prometheus never scrapes vLLM, "
                "so every trigger query fails and KEDA stays on its fallback.",
                "set monitoring.enabled: true, or autoscaling.enabled: false.",
            )
        )
    issues += _server_address_checks(cfg)
    scaling = cfg.autoscaling
    bounds_valid = scaling.min_replica_count <= scaling.max_replica_count  # else already reported
    if bounds_valid and not scaling.min_replica_count <= cfg.replicas <= scaling.max_replica_count:
        issues.append(
            ConfigIssue(
                "replicas",
                f"({cfg.replicas}) is outside autoscaling.min_replica_count..max_replica_count "
                f"({scaling.min_replica_count}..{scaling.max_replica_count}); KEDA would resize it at once.",
                "set replicas within that range.",
            )
        )
    return issues
