"""vLLM's router as plain manifests: its ServiceAccount, the namespaced Role and RoleBinding its pod discovery
needs, the Deployment, Service and PodDisruptionBudget, and a ServiceMonitor on its metrics port. Pure.

Discovery reads pods in the stack's namespace only (`--service-discovery-namespace`), so a Role is enough;
without that flag the router watches every namespace and would need a ClusterRole
(vllm-project/router/docs/environment/kubernetes.md, `vllm-router --help` 0.1.17).
"""

from __future__ import annotations

import math
from typing import Any

from components.render.alerts import render_prometheus_rule
from components.render.pod import kubelet_literal
from components.render.resources import container_resources
from components.render.scheduling import render_pdb_spec
from components.render.security import (
    API_KEY_KEY,
    api_key_annotations,
    container_security_context,
    pod_security_context,
)
from plan.monitoring import MonitoringPlan
from plan.names import PORT_NAME
from plan.routing import API_KEY_ENV, METRICS_PORT_NAME, RoutingPlan

MONITORING_API = "monitoring.coreos.com/v1"
RBAC_API = "rbac.authorization.k8s.io/v1"
PROBE_PERIOD_SECONDS = 10


def router_objects(routing: RoutingPlan, monitoring: MonitoringPlan) -> list[dict[str, Any]]:
    """In registration order; the ServiceMonitor only when monitoring is on, its alert with monitoring.alerts."""
    objects = [
        render_service_account(routing),
        render_role(routing),
        render_role_binding(routing),
        render_deployment(routing),
        render_service(routing),
        render_pdb(routing),
    ]
    if not monitoring.enabled:
        return objects
    objects.append(render_service_monitor(routing, monitoring))
    return objects + ([render_router_rule(routing, monitoring)] if monitoring.config.alerts else [])


def _metadata(routing: RoutingPlan) -> dict[str, Any]:
    return {"name": routing.name, "namespace": routing.namespace, "labels": dict(routing.labels)}


def render_service_account(routing: RoutingPlan) -> dict[str, Any]:
    """The router calls the Kubernetes API (pod discovery), so its pods mount the token."""
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _metadata(routing), "automountServiceAccountToken": True}


def render_role(routing: RoutingPlan) -> dict[str, Any]:
    rule = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}
    return {"apiVersion": RBAC_API, "kind": "Role", "metadata": _metadata(routing), "rules": [rule]}


def render_role_binding(routing: RoutingPlan) -> dict[str, Any]:
    return {
        "apiVersion": RBAC_API,
        "kind": "RoleBinding",
        "metadata": _metadata(routing),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": routing.name},
        "subjects": [{"kind": "ServiceAccount", "name": routing.name, "namespace": routing.namespace}],
    }


def render_container(routing: RoutingPlan) -> dict[str, Any]:
    """`--api-key $(ROUTER_API_KEY)`: the router takes the key only as an argument, so the kubelet expands it
    from the Secret; every other `$(` of the command line stays literal. Always api_key, never api_key_previous:
    the router rolls after the servers (components/router.py), so it takes a new key once they all accept it."""
    env: list[dict[str, Any]] = [{"name": "PYTHONDONTWRITEBYTECODE", "value": "1"}]
    args = kubelet_literal(list(routing.args))
    if routing.api_key_secret is not None:
        key_ref = {"secretKeyRef": {"name": routing.api_key_secret, "key": API_KEY_KEY}}
        env.append({"name": API_KEY_ENV, "valueFrom": key_ref})
        args[args.index("--api-key") + 1] = f"$({API_KEY_ENV})"
    ports = [
        {"name": PORT_NAME, "containerPort": routing.port, "protocol": "TCP"},
        {"name": METRICS_PORT_NAME, "containerPort": routing.prometheus_port, "protocol": "TCP"},
    ]
    return {
        "name": "router",
        "image": routing.image,
        "imagePullPolicy": "IfNotPresent",
        "command": args,
        "env": env,
        "ports": ports,
        "resources": container_resources(routing.cpu, routing.memory_gib),
        "securityContext": container_security_context(),
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
        # Endpoints drop the pod while it sleeps; then SIGTERM stops the listener and the answers in flight finish.
        "lifecycle": {"preStop": {"exec": {"command": ["sleep", str(routing.pre_stop_sleep_seconds)]}}},
        **render_probes(routing),
    }


def render_probes(routing: RoutingPlan) -> dict[str, Any]:
    """The router listens only once its workers are healthy (docs/sources.md §S9), so the startup
    probe allows the servers' startup budget (its --worker-startup-timeout-secs) plus a minute."""
    tcp = {"tcpSocket": {"port": PORT_NAME}}
    startup_failures = math.ceil((routing.startup_seconds + 60) / PROBE_PERIOD_SECONDS)
    return {
        "startupProbe": {**tcp, "periodSeconds": PROBE_PERIOD_SECONDS, "failureThreshold": startup_failures},
        "readinessProbe": {"httpGet": {"path": "/health", "port": PORT_NAME}, "periodSeconds": 5, "failureThreshold": 2},
        "livenessProbe": {**tcp, "periodSeconds": PROBE_PERIOD_SECONDS, "failureThreshold": 3},
    }


def render_deployment(routing: RoutingPlan) -> dict[str, Any]:
    """Replicas spread over nodes when they can be; restricted pod security."""
    spread = {
        "maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": dict(routing.selector)},
    }
    pod_spec = {
        "serviceAccountName": routing.name,
        "automountServiceAccountToken": True,
        "enableServiceLinks": False,
        "securityContext": pod_security_context(routing.security),
        "containers": [render_container(routing)],
        "volumes": [{"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}],
        "topologySpreadConstraints": [spread],
        "terminationGracePeriodSeconds": routing.termination_grace_period_seconds,
    }
    spec = {
        "replicas": routing.replicas,
        "selector": {"matchLabels": dict(routing.selector)},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
        "revisionHistoryLimit": 3,
        "template": {"metadata": _pod_metadata(routing), "spec": pod_spec},
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _metadata(routing), "spec": spec}


def _pod_metadata(routing: RoutingPlan) -> dict[str, Any]:
    """The router's pods carry the API key's fingerprint too: it reads `--api-key` at start only."""
    annotations = api_key_annotations(routing.api_key_secret)
    return {"labels": dict(routing.labels), **({"annotations": annotations} if annotations else {})}


def render_service(routing: RoutingPlan) -> dict[str, Any]:
    ports = [
        {"name": PORT_NAME, "port": routing.port, "targetPort": PORT_NAME, "protocol": "TCP"},
        {"name": METRICS_PORT_NAME, "port": routing.prometheus_port, "targetPort": METRICS_PORT_NAME, "protocol": "TCP"},
    ]
    spec = {"type": "ClusterIP", "selector": dict(routing.selector), "ports": ports}
    return {"apiVersion": "v1", "kind": "Service", "metadata": _metadata(routing), "spec": spec}


def render_pdb(routing: RoutingPlan) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": _metadata(routing),
        "spec": render_pdb_spec(routing.selector),
    }


def render_service_monitor(routing: RoutingPlan, monitoring: MonitoringPlan) -> dict[str, Any]:
    """The router's metrics (vllm_router_*) on its metrics port, labelled for the same Prometheus as the server's."""
    endpoint = {"port": METRICS_PORT_NAME, "path": "/metrics", "scheme": "http", "interval": monitoring.config.interval}
    spec = {
        "selector": {"matchLabels": dict(routing.selector)},
        "namespaceSelector": {"matchNames": [routing.namespace]},
        "endpoints": [endpoint],
    }
    # The Prometheus' selector labels (release: ...), with the router's own names over the server's.
    metadata = {**_metadata(routing), "labels": {**monitoring.wiring.monitor_labels, **routing.labels}}
    return {"apiVersion": MONITORING_API, "kind": "ServiceMonitor", "metadata": metadata, "spec": spec}


def render_router_rule(routing: RoutingPlan, monitoring: MonitoringPlan) -> dict[str, Any]:
    """One alert: a server the router has marked unhealthy (vllm_router_worker_health, docs/sources.md §S9) for
    longer than a rollout's pod swap. The series carries the Service's job and namespace (the ServiceMonitor)."""
    selector = f'job="{routing.name}", namespace="{routing.namespace}"'
    rule = {
        "alert": "VllmRouterWorkerUnhealthy",
        "expr": f"min by (worker) (vllm_router_worker_health{{{selector}}}) == 0",
        "for": "5m",
        "labels": {"severity": "warning"},
        "annotations": {
            "summary": f"{routing.name} marks server {{{{ $labels.worker }}}} unhealthy",
            "description": "The router has sent no request to this server for 5 minutes: its /health check fails.",
            "runbook": f"kubectl -n {routing.namespace} get pods -l app.kubernetes.io/component=server; read the "
            "server pod's log and events; a pod the router still lists after it was deleted points to discovery "
            "(the router's Role and its log).",
        },
    }
    labels = {**monitoring.wiring.rule_labels, **routing.labels}
    rules = [rule, _error_rule(routing, selector)]
    return render_prometheus_rule(routing.name, labels, [{"name": routing.name, "rules": rules}], routing.namespace)


def _error_rule(routing: RoutingPlan, selector: str) -> dict[str, Any]:
    """The share of the router's requests that failed (vllm_router_request_errors_total over
    vllm_router_requests_total, read from the 0.1.17 binary, docs/sources.md §S9): every server down, retries
    exhausted, or servers answering errors the router passes on. Silent while the router serves nothing."""
    errors = f"sum(rate(vllm_router_request_errors_total{{{selector}}}[5m]))"
    requests = f"sum(rate(vllm_router_requests_total{{{selector}}}[5m]))"
    percent = f"{routing.error_alert_ratio * 100:g}"
    return {
        "alert": "VllmRouterRequestErrors",
        "expr": f"{errors} / {requests} > {routing.error_alert_ratio:g} and {requests} > 0",
        "for": "5m",
        "labels": {"severity": "critical"},
        "annotations": {
            "summary": f"{routing.name} fails {{{{ $value | humanizePercentage }}}} of its requests",
            "description": f"More than {percent} % of the requests through the router failed for 5 minutes "
            "(routing.error_alert_ratio).",
            "runbook": f"kubectl -n {routing.namespace} logs deploy/{routing.name}; check the servers the router "
            "marks unhealthy (VllmRouterWorkerUnhealthy) and the servers' own errors.",
        },
    }
