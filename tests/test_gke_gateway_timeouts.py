"""The GKE Gateway and a request's time bound, as the program registers them for the GKE example stack.

GKE's Gateway controller does not accept an HTTPRoute whose rules carry `timeouts` (Accepted False, reason
UnsupportedValue: kserve/kserve#5311, #5707), and its load balancer cuts each request at the backend service's
timeout, 30 s unless a GCPBackendPolicy sets timeoutSec (GoogleCloudPlatform/gke-gateway-api
apis/networking/v1/gcpbackendpolicy_types.go@067db6f1d77834fa1ee02145e86b8dfcaa5a1930:64-69): docs/sources.md §S8.
"""

from __future__ import annotations

from typing import Any

from tests.factories import REPO
from tests.harness import Registered
from tests.program import run_stack_file

GKE_EXAMPLE = REPO / "stacks" / "examples" / "Pulumi.gke-gateway.yaml"
ROUTE = "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute"
BACKEND_POLICY = "kubernetes:networking.gke.io/v1:GCPBackendPolicy"
HEALTH_POLICY = "kubernetes:networking.gke.io/v1:HealthCheckPolicy"
EXAMPLE_GATEWAY = {  # the example's exposure.gateway
    "name": "inference-gateway",
    "namespace": "gateway-system",
    "section_name": "https",
    "hostnames": ["llm.example.com"],
    "source_cidrs": ["10.129.0.0/23"],
}


def registered(**extra: Any) -> Registered:
    found, error = run_stack_file(GKE_EXAMPLE, {"api_key": "sk-test-key", **extra})
    assert error is None, error
    return found


def test_on_gke_the_http_route_carries_no_timeouts_which_the_gke_gateway_would_not_accept() -> None:
    (rule,) = registered().one(ROUTE)["spec"]["rules"]
    assert "timeouts" not in rule


def test_on_gke_a_gcp_backend_policy_gives_the_load_balancer_the_routes_request_timeout() -> None:
    policy = registered().one(BACKEND_POLICY)["spec"]
    assert policy["default"] == {"timeoutSec": 300}
    assert policy["targetRef"] == {"group": "", "kind": "Service", "name": "vllm-gke-gateway-server"}


def test_on_gke_the_backend_policy_takes_the_request_timeout_as_set() -> None:
    exposure = {"gateway": {**EXAMPLE_GATEWAY, "request_timeout_seconds": 1800}}
    assert registered(exposure=exposure).one(BACKEND_POLICY)["spec"]["default"] == {"timeoutSec": 1800}


def test_on_another_profile_the_route_keeps_its_timeout_and_no_backend_policy_is_registered() -> None:
    found = registered(cluster={"profile": "generic"})
    (rule,) = found.one(ROUTE)["spec"]["rules"]
    assert rule["timeouts"] == {"request": "300s"}
    assert found.of_type(BACKEND_POLICY) == []


def test_with_routing_on_gke_both_policies_attach_to_the_router_service_the_route_forwards_to() -> None:
    found = registered(routing={"enabled": True})
    (ref,) = found.one(ROUTE)["spec"]["rules"][0]["backendRefs"]
    assert ref["name"] == "vllm-gke-gateway-router"
    for typ in (BACKEND_POLICY, HEALTH_POLICY):
        assert found.one(typ)["spec"]["targetRef"] == {"group": "", "kind": "Service", "name": ref["name"]}
    check = found.one(HEALTH_POLICY)["spec"]["default"]["config"]["httpHealthCheck"]
    assert check == {"port": ref["port"], "requestPath": "/health"}
