"""How clients reach the server: an HTTPRoute on an existing Gateway (optionally to an InferencePool), or an
Ingress, and a ready-to-paste curl; the URL clients use is the plan's (plan/traffic.py). Pure.

The route lists only `exposure.paths` (Exact matches, each one vLLM's API key guards; config/exposure.py),
so /invocations, /tokenize, /detokenize, /pooling, /score, /rerank and /metrics are never forwarded.

Cross-namespace: the route and its backend (Service or InferencePool) live in the stack's namespace, so no
ReferenceGrant is needed (gateway-api: a ReferenceGrant is required for a route's backendRef into another
namespace, not for a parentRef). With the KEDA HTTP add-on (plan/zero.py) the backend is the interceptor's
proxy Service in the add-on's namespace: the route then rewrites the Host to the one the HTTPScaledObject
routes on (URLRewrite, Extended support) and a ReferenceGrant there admits it. An Ingress cannot reach another
namespace's Service at all, which validation/observability.py refuses.
A Gateway in another namespace must admit the route through its listener's allowedRoutes; that is the
Gateway owner's side, and this stack does not own the Gateway.

InferencePool (inference.networking.k8s.io/v1, GIE v1.6.0): `endpointPickerRef` names the picker
(exposure.gateway.endpoint_picker, required with that backend: validation/exposure.py). The picker is a separate
Deployment this stack does not create; since GIE v1.6.0 it is released by llm-d/llm-d-router (docs/sources.md §S5).
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from components.render.security import API_KEY_KEY
from config.exposure import GatewayConfig, IngressConfig
from plan.identity import Identity
from plan.traffic import TrafficPlan

GATEWAY_GROUP = "gateway.networking.k8s.io"
INFERENCE_GROUP = "inference.networking.k8s.io"
COMPONENT = "exposure"


def render_exposure(identity: Identity, traffic: TrafficPlan) -> list[dict[str, Any]]:
    """InferencePool (when the route targets one) and HTTPRoute, or the Ingress, or nothing."""
    gateway, ingress = traffic.exposure.gateway, traffic.exposure.ingress
    if gateway is not None:
        pool = [render_inference_pool(identity, traffic)] if gateway.backend == "InferencePool" else []
        health = [render_health_check_policy(identity, traffic)] if traffic.health_check_policy else []
        timeout = [render_backend_policy(identity, traffic)] if traffic.backend_timeout_seconds is not None else []
        grant = [render_reference_grant(identity, traffic)] if traffic.backend_namespace else []
        return [*pool, render_http_route(identity, traffic, gateway), *health, *timeout, *grant]
    if ingress is not None:
        return [render_ingress(identity, traffic, ingress)]
    return []


def _metadata(identity: Identity) -> dict[str, Any]:
    return {"name": identity.names.server, "namespace": identity.namespace, "labels": identity.labels(COMPONENT)}


def render_http_route(identity: Identity, traffic: TrafficPlan, gateway: GatewayConfig) -> dict[str, Any]:
    parent: dict[str, Any] = {"group": GATEWAY_GROUP, "kind": "Gateway", "name": gateway.name}
    if gateway.namespace:
        parent["namespace"] = gateway.namespace
    if gateway.section_name:
        parent["sectionName"] = gateway.section_name
    rule: dict[str, Any] = {
        "matches": [{"path": {"type": "Exact", "value": path}} for path in traffic.exposure.paths],
        "backendRefs": [_backend_ref(identity, traffic, gateway)],
    }
    if traffic.route_host is not None:
        rule["filters"] = [{"type": "URLRewrite", "urlRewrite": {"hostname": traffic.route_host}}]
    if traffic.route_timeout_seconds is not None:
        rule["timeouts"] = {"request": f"{traffic.route_timeout_seconds}s"}
    spec: dict[str, Any] = {"parentRefs": [parent]}
    if gateway.hostnames:
        spec["hostnames"] = list(gateway.hostnames)
    spec["rules"] = [rule]
    return {"apiVersion": f"{GATEWAY_GROUP}/v1", "kind": "HTTPRoute", "metadata": _metadata(identity), "spec": spec}


def render_health_check_policy(identity: Identity, traffic: TrafficPlan) -> dict[str, Any]:
    """GKE Gateway health-checks `/` by default, where vLLM answers 404 and every backend turns unhealthy: check
    /health instead (cloud.google.com/kubernetes-engine/docs/how-to/configure-gateway-resources, docs/sources.md §S8)."""
    pool = traffic.exposure.gateway is not None and traffic.exposure.gateway.backend == "InferencePool"
    port = traffic.port if pool else traffic.backend_port  # the router's /health too, when routing is on
    check = {"type": "HTTP", "httpHealthCheck": {"port": port, "requestPath": "/health"}}
    spec = {"default": {"config": check}, "targetRef": _gke_policy_target(identity, traffic)}
    return {"apiVersion": "networking.gke.io/v1", "kind": "HealthCheckPolicy", "metadata": _metadata(identity), "spec": spec}


def render_backend_policy(identity: Identity, traffic: TrafficPlan) -> dict[str, Any]:
    """GKE Gateway: the backend service's timeout bounds each request (30 s when unset, a whole streamed
    completion included), and the route may not carry `timeouts`; timeoutSec takes the route's bound
    (GoogleCloudPlatform/gke-gateway-api apis/networking/v1/gcpbackendpolicy_types.go, docs/sources.md §S8)."""
    spec = {"default": {"timeoutSec": traffic.backend_timeout_seconds}, "targetRef": _gke_policy_target(identity, traffic)}
    return {"apiVersion": "networking.gke.io/v1", "kind": "GCPBackendPolicy", "metadata": _metadata(identity), "spec": spec}


def _gke_policy_target(identity: Identity, traffic: TrafficPlan) -> dict[str, str]:
    """What GKE's policies attach to: the route's backend in the stack's namespace, the pool or the Service (the
    router's when routing is on); a policy on any other Service leaves the load balancer's defaults in force."""
    if traffic.exposure.gateway is not None and traffic.exposure.gateway.backend == "InferencePool":
        return {"group": INFERENCE_GROUP, "kind": "InferencePool", "name": identity.names.server}
    return {"group": "", "kind": "Service", "name": traffic.backend_service}


def _backend_ref(identity: Identity, traffic: TrafficPlan, gateway: GatewayConfig) -> dict[str, Any]:
    if gateway.backend == "InferencePool":
        return {"group": INFERENCE_GROUP, "kind": "InferencePool", "name": identity.names.server}
    ref: dict[str, Any] = {"group": "", "kind": "Service", "name": traffic.backend_service, "port": traffic.backend_port}
    if traffic.backend_namespace:
        ref["namespace"] = traffic.backend_namespace
    return ref


def render_reference_grant(identity: Identity, traffic: TrafficPlan) -> dict[str, Any]:
    """In the backend's namespace: admits this stack's HTTPRoute to the one Service (gateway-api ReferenceGrant
    v1beta1, standard channel). Named after the stack's namespace and server, unique among stacks there."""
    return {
        "apiVersion": f"{GATEWAY_GROUP}/v1beta1",
        "kind": "ReferenceGrant",
        "metadata": {
            "name": f"{identity.namespace}-{identity.names.server}",
            "namespace": traffic.backend_namespace,
            "labels": identity.labels(COMPONENT),
        },
        "spec": {
            "from": [{"group": GATEWAY_GROUP, "kind": "HTTPRoute", "namespace": identity.namespace}],
            "to": [{"group": "", "kind": "Service", "name": traffic.backend_service}],
        },
    }


def render_inference_pool(identity: Identity, traffic: TrafficPlan) -> dict[str, Any]:
    """The server pods that serve the API (the Service's selector) on its port, and the picker that chooses one."""
    spec: dict[str, Any] = {
        "selector": {"matchLabels": dict(traffic.api_selector)},
        "targetPorts": [{"number": traffic.port}],
        "appProtocol": "http",
    }
    gateway = traffic.exposure.gateway
    picker = gateway.endpoint_picker if gateway is not None else None
    if picker is not None:
        spec["endpointPickerRef"] = {
            "kind": "Service",
            "name": picker.service,
            "port": {"number": picker.port},
            "failureMode": picker.failure_mode,
        }
    return {
        "apiVersion": f"{INFERENCE_GROUP}/v1",
        "kind": "InferencePool",
        "metadata": _metadata(identity),
        "spec": spec,
    }


def render_ingress(identity: Identity, traffic: TrafficPlan, ingress: IngressConfig) -> dict[str, Any]:
    backend = {"service": {"name": traffic.backend_service, "port": {"number": traffic.backend_port}}}
    paths = [{"path": path, "pathType": "Exact", "backend": backend} for path in traffic.exposure.paths]
    spec: dict[str, Any] = {"ingressClassName": ingress.class_name}
    if ingress.tls_secret_name:
        spec["tls"] = [{"hosts": [ingress.host], "secretName": ingress.tls_secret_name}]
    spec["rules"] = [{"host": ingress.host, "http": {"paths": paths}}]
    metadata = _metadata(identity) | {"annotations": dict(traffic.ingress_annotations)}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": metadata, "spec": spec}


def curl_command(identity: Identity, traffic: TrafficPlan) -> str:
    """One chat completion as a shell command, the key read from the Secret with kubectl. Without exposure
    the Service is reached through `kubectl port-forward` (it is not reachable from outside the cluster)."""
    names, ns = identity.names, identity.namespace
    message = {"model": traffic.served_model_name, "messages": [{"role": "user", "content": "Hello"}]}
    body = shlex.quote(json.dumps(message))
    auth = ""
    if traffic.require_api_key:
        template = shlex.quote('{{index .data "' + API_KEY_KEY + '"}}')
        auth = (
            f' -H "Authorization: Bearer $(kubectl get secret -n {ns} {names.api_key_secret} '
            f'-o go-template={template} | base64 -d)"'
        )
    rest = f"/v1/chat/completions -H 'Content-Type: application/json'{auth} -d {body}"
    if traffic.exposed:
        return f"curl -sS {traffic.client_url}{rest}"
    port = traffic.backend_port
    if traffic.route_host is not None:  # the interceptor routes on the Host header
        rest = rest.replace(" -H", f" -H 'Host: {traffic.route_host}' -H", 1)
    backend_ns = traffic.backend_namespace or ns
    forward = f"kubectl port-forward -n {backend_ns} svc/{traffic.backend_service} {port}:{port} & sleep 2; "
    return f"{forward}curl -sS http://127.0.0.1:{port}{rest}"
