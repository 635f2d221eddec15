"""Rules spanning `autoscaling`, `monitoring` and the rest of the stack."""

from __future__ import annotations

from catalog import keda_http
from catalog.keda import Feature, supports
from config.errors import ConfigIssue, show
from config.observability import AutoscalingConfig, HttpAddOnConfig
from config.stack import StackConfig
from plan.zero import ZeroPlan

ADD_ON = "autoscaling.http_add_on"


def cross_checks(cfg: StackConfig) -> list[ConfigIssue]:
    """Rules spanning autoscaling, monitoring and the rest of the stack."""
    scaling = cfg.autoscaling
    issues: list[ConfigIssue] = []
    if scaling.min_replica_count == 0 and scaling.http_add_on is None:
        issues.append(
            ConfigIssue(
                "autoscaling.min_replica_count",
                "is 0 without autoscaling.http_add_on: every trigger reads vLLM's own metrics, which vanish with the "
                "last pod, so KEDA would never scale back up, and no endpoint would hold a request meanwhile.",
                f"install the KEDA HTTP add-on ({keda_http.OLDEST_SUPPORTED} or newer) and set autoscaling.http_add_on (its "
                "namespace and interceptor Service; docs/scale-to-zero.md), or set autoscaling.min_replica_count to 1 "
                "or more.",
            )
        )
    if scaling.http_add_on is not None:
        issues += add_on_checks(cfg, scaling.http_add_on)
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


def scaling_reads_prometheus(scaling: AutoscalingConfig) -> bool:
    """The ScaledObject's triggers query Prometheus; the add-on's scale on the interceptor's own count."""
    return scaling.http_add_on is None


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
    if not cfg.monitoring.enabled and scaling_reads_prometheus(cfg.autoscaling):
        issues.append(
            ConfigIssue(
                "autoscaling.enabled",
                "is true, but monitoring.enabled is false: without the ServiceMonitor Prometheus never scrapes vLLM, "
                "so every trigger query fails and KEDA stays on its fallback.",
                "set monitoring.enabled: true, or autoscaling.enabled: false.",
            )
        )
    if scaling_reads_prometheus(cfg.autoscaling):
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


def add_on_checks(cfg: StackConfig, add_on: HttpAddOnConfig) -> list[ConfigIssue]:
    """What the KEDA HTTP add-on's interceptor needs of the rest of the stack (docs/scale-to-zero.md)."""
    issues: list[ConfigIssue] = []
    if not keda_http.supported(add_on.version):
        issues.append(
            ConfigIssue(
                f"{ADD_ON}.version",
                f"is {show(add_on.version)}; the rendered objects and the alerts need the add-on "
                f"{keda_http.OLDEST_SUPPORTED} or newer (route_name metrics, unbounded request timeouts).",
                f"upgrade the add-on and set {ADD_ON}.version to the installed release (e.g. {keda_http.RELEASE}).",
            )
        )
    if not cfg.autoscaling.enabled:
        issues.append(
            ConfigIssue(
                ADD_ON,
                "is set, but autoscaling.enabled is false: the HTTPScaledObject is an autoscaler.",
                "set autoscaling.enabled: true, or remove autoscaling.http_add_on.",
            )
        )
    if cfg.exposure.ingress is not None:
        issues.append(
            ConfigIssue(
                "exposure.ingress",
                f"is set with {ADD_ON}: an Ingress can only forward to a Service in its own namespace, and the "
                f"interceptor's Service is in {show(add_on.namespace)}.",
                "use exposure.gateway instead (the stack renders the ReferenceGrant that lets its HTTPRoute reach "
                "the interceptor), or remove exposure.ingress and send clients to the interceptor's Service.",
            )
        )
    gateway = cfg.exposure.gateway
    if gateway is not None and gateway.request_timeout_seconds is None and cfg.autoscaling.min_replica_count == 0:
        issues.append(
            ConfigIssue(
                "exposure.gateway.request_timeout_seconds",
                "is null with autoscaling.min_replica_count 0: the route then takes the Gateway implementation's "
                "own request timeout, often seconds, which no cold start fits and the check cannot read.",
                "set exposure.gateway.request_timeout_seconds to the longest a request may wait (e.g. 600).",
            )
        )
    if gateway is not None and gateway.backend == "InferencePool":
        issues.append(
            ConfigIssue(
                "exposure.gateway.backend",
                f"is 'InferencePool' with {ADD_ON}: the pool sends requests straight to the server pods, past the "
                "interceptor that holds them while the server is at zero.",
                "set exposure.gateway.backend: Service, or remove autoscaling.http_add_on.",
            )
        )
    issues += _node_local_at_zero(cfg, add_on)
    if cfg.routing.enabled:
        issues.append(
            ConfigIssue(
                "routing.enabled",
                f"is true with {ADD_ON}: the interceptor waits for a ready endpoint of the Service it forwards to, "
                "and the router's Service is ready while no server is, so a request would reach a router with no "
                "server (interceptor/middleware/endpoint_resolver.go).",
                "set routing.enabled: false to scale the server to zero, or remove autoscaling.http_add_on.",
            )
        )
    return issues


def _node_local_at_zero(cfg: StackConfig, add_on: HttpAddOnConfig) -> list[ConfigIssue]:
    """A node-local claim lives on one node's disk: with the idle GPU node removed (node provisioning counted in
    the cold start), the replica coming back from zero finds its claim's node gone and stays Pending until the
    claim is deleted by hand (plan/delivery.py node_loss_warnings), so no start from zero would ever end."""
    medium = cfg.delivery.node_local
    if medium is None or cfg.autoscaling.min_replica_count != 0 or add_on.node_provisioning_seconds == 0:
        return []
    return [
        ConfigIssue(
            "delivery.node_local",
            f"is {show(medium)} with autoscaling.min_replica_count 0 and {ADD_ON}.node_provisioning_seconds "
            f"{add_on.node_provisioning_seconds} (the idle GPU node is removed): the node-local claim goes with its "
            "node, so the replica coming back from zero stays Pending (volume node affinity conflict) and every "
            "request waits out conditionWait and gets 504 until the claim is deleted by hand.",
            "keep the GPU nodes up while the server is at zero (a node pool minimum that holds them, no autoscaler "
            f"removing them empty) and set {ADD_ON}.node_provisioning_seconds: 0; or keep one replica "
            "(autoscaling.min_replica_count: 1); or remove delivery.node_local (a network class's per-replica claims "
            "follow the ordinal, not the node).",
        )
    ]


def zero_issues(zero: ZeroPlan | None) -> list[ConfigIssue]:
    """The feasibility of zero: the predicted cold start must end before the request path gives up."""
    if zero is None or not zero.at_zero or zero.fits:
        return []
    cold, wait = zero.cold_start, zero.longest_wait
    timed_out = (
        "the first request at zero (the smoke test's) would time out: the StatefulSet starts at zero replicas, so "
        "ordinal 0's per-replica claim is empty then and downloads the weights first."
        if cold.downloads
        else "every request arriving at zero would time out."
    )
    fill = "; or fill the weights before the server starts (delivery.mode shared_volume or object_storage)"
    return [
        ConfigIssue(
            "autoscaling.min_replica_count",
            f"is 0, but a start from zero takes {cold.explain()} (predicted), longer than the longest wait the "
            f"request path allows, {wait.render()}: {timed_out}",
            f"keep one replica (autoscaling.min_replica_count: 1); or deliver faster (delivery.mode object_storage, "
            f"a provisioned-throughput class, GPU nodes kept up: {ADD_ON}.node_provisioning_seconds 0)"
            f"{fill if cold.downloads else ''}; or raise {wait.key} above {cold.seconds}.",
        )
    ]
