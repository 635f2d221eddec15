"""Exposure: HTTPRoute / InferencePool / Ingress rendered from config, validated strictly against the upstream
CRDs (Gateway API v1.6.1, Inference Extension v1.6.0) and Kubernetes' own schema; config errors; outputs."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from components.render.exposure import curl_command, render_exposure
from config.errors import ConfigError
from config.exposure import GENERATE_PATHS
from config.stack import StackConfig
from plan.identity import Identity
from plan.traffic import TrafficPlan
from tests.factories import make_config
from tests.kubernetes_fixtures import plan_of
from tests.promtool import crd_errors

INSTANCE = "prod"
GATEWAY = {
    "name": "inference-gateway",
    "namespace": "gateway-system",
    "section_name": "https",
    "hostnames": ["llm.example.com"],
}
POOL = {"backend": "InferencePool", "endpoint_picker": {"service": "prod-epp"}}
TIMEOUTS = ("nginx.ingress.kubernetes.io/proxy-read-timeout", "nginx.ingress.kubernetes.io/proxy-send-timeout")
UNGUARDED = ("/invocations", "/tokenize", "/detokenize", "/metrics", "/pooling", "/score", "/rerank", "/health")


def parts(cfg: StackConfig) -> tuple[Identity, TrafficPlan]:
    plan = plan_of(cfg, INSTANCE)
    return plan.identity, plan.traffic


def exposed(**exposure: Any) -> StackConfig:
    return make_config(
        security={"require_api_key": True}, engine={"max_model_len": 8192, "served_model_name": "llama-8b"}, exposure=exposure
    )


def route(**gateway: Any) -> dict[str, Any]:
    objects = render_exposure(*parts(exposed(gateway={**GATEWAY, **gateway})))
    return objects[-1]


def ingress(**fields: Any) -> dict[str, Any]:
    spec = {"class_name": "nginx", "host": "llm.example.com", "controller_namespace": "ingress-nginx", **fields}
    (obj,) = render_exposure(*parts(exposed(ingress=spec)))
    return obj


def test_without_gateway_or_ingress_nothing_is_exposed() -> None:
    assert render_exposure(*parts(make_config())) == []


def test_the_route_validates_strictly_against_the_gateway_api_v1_6_1_crd() -> None:
    assert crd_errors(route(), "gateway.networking.k8s.io_httproutes.yaml") == []


def test_the_route_to_an_inference_pool_validates_strictly_against_the_crd() -> None:
    assert crd_errors(route(**POOL), "gateway.networking.k8s.io_httproutes.yaml") == []


def test_the_inference_pool_validates_strictly_against_the_inference_extension_v1_crd() -> None:
    pool, _ = render_exposure(*parts(exposed(gateway={**GATEWAY, **POOL})))
    assert crd_errors(pool, "inference.networking.k8s.io_inferencepools.yaml") == []


def test_strict_crd_validation_rejects_an_unknown_route_field() -> None:
    broken = route()
    broken["spec"]["rules"][0]["pathMatch"] = "/"
    assert crd_errors(broken, "gateway.networking.k8s.io_httproutes.yaml") != []


def test_the_route_attaches_to_the_named_gateway_listener() -> None:
    assert route()["spec"]["parentRefs"] == [
        {
            "group": "gateway.networking.k8s.io",
            "kind": "Gateway",
            "name": "inference-gateway",
            "namespace": "gateway-system",
            "sectionName": "https",
        }
    ]


def test_the_route_carries_the_hostnames() -> None:
    assert route()["spec"]["hostnames"] == ["llm.example.com"]


def test_the_route_matches_exactly_the_chat_completion_and_models_paths() -> None:
    assert route()["spec"]["rules"][0]["matches"] == [
        {"path": {"type": "Exact", "value": "/v1/chat/completions"}},
        {"path": {"type": "Exact", "value": "/v1/completions"}},
        {"path": {"type": "Exact", "value": "/v1/models"}},
    ]


def test_the_route_sends_to_the_service_port() -> None:
    assert route()["spec"]["rules"][0]["backendRefs"] == [{"group": "", "kind": "Service", "name": "prod-server", "port": 8000}]


def test_the_route_sends_to_the_inference_pool_when_asked() -> None:
    assert route(**POOL)["spec"]["rules"][0]["backendRefs"] == [
        {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "prod-server"}
    ]


def test_the_route_lets_a_long_generation_run_for_the_request_timeout() -> None:
    assert route()["spec"]["rules"][0]["timeouts"] == {"request": "300s"}


def test_a_null_request_timeout_leaves_timeouts_out() -> None:
    assert "timeouts" not in route(request_timeout_seconds=None)["spec"]["rules"][0]


def test_the_route_lives_in_the_stacks_namespace_beside_its_backend_so_no_reference_grant_is_needed() -> None:
    objects = render_exposure(*parts(exposed(gateway={**GATEWAY, **POOL})))
    assert [(o["kind"], o["metadata"]["namespace"]) for o in objects] == [("InferencePool", "prod"), ("HTTPRoute", "prod")]


def test_the_inference_pool_selects_the_server_pods_on_the_api_port_and_names_its_endpoint_picker() -> None:
    pool, _ = render_exposure(*parts(exposed(gateway={**GATEWAY, **POOL})))
    assert pool["spec"] == {
        "selector": {
            "matchLabels": {
                "app.kubernetes.io/name": "vllm",
                "app.kubernetes.io/instance": "prod",
                "app.kubernetes.io/component": "server",
            }
        },
        "targetPorts": [{"number": 8000}],
        "appProtocol": "http",
        "endpointPickerRef": {"kind": "Service", "name": "prod-epp", "port": {"number": 9002}, "failureMode": "FailClose"},
    }


def test_an_inference_pool_without_an_endpoint_picker_is_refused_naming_the_key_and_the_fix() -> None:
    with pytest.raises(ConfigError) as refused:
        exposed(gateway={**GATEWAY, "backend": "InferencePool"})
    (issue,) = refused.value.issues
    assert issue.key == "exposure.gateway.backend" and "exposure.gateway.endpoint_picker.service" in issue.fix


def test_the_ingress_validates_strictly_against_the_newest_kubernetes_schema() -> None:
    kubernetes_validate.validate(ingress(tls_secret_name="llm-tls"), kubernetes_validate.latest_version(), strict=True)


def test_the_ingress_uses_the_class_host_and_tls_secret() -> None:
    spec = ingress(tls_secret_name="llm-tls")["spec"]
    assert (spec["ingressClassName"], spec["tls"], spec["rules"][0]["host"]) == (
        "nginx",
        [{"hosts": ["llm.example.com"], "secretName": "llm-tls"}],
        "llm.example.com",
    )


def test_the_ingress_gives_ingress_nginx_the_request_timeout_for_reads_and_sends() -> None:
    annotations = ingress(request_timeout_seconds=900)["metadata"]["annotations"]
    assert {key: annotations[key] for key in TIMEOUTS} == dict.fromkeys(TIMEOUTS, "900")


def test_the_ingress_timeout_defaults_to_five_minutes_not_ingress_nginxs_minute() -> None:
    annotations = ingress()["metadata"]["annotations"]
    assert {annotations[key] for key in TIMEOUTS} == {"300"}


def test_the_ingress_carries_only_the_timeouts_and_the_body_bound() -> None:
    assert set(ingress()["metadata"]["annotations"]) == {*TIMEOUTS, "nginx.ingress.kubernetes.io/proxy-body-size"}


def test_the_ingress_forwards_exactly_the_guarded_paths_to_the_service() -> None:
    paths = ingress()["spec"]["rules"][0]["http"]["paths"]
    assert [(p["path"], p["pathType"], p["backend"]["service"]["name"]) for p in paths] == [
        (path, "Exact", "prod-server") for path in GENERATE_PATHS
    ]


@pytest.mark.parametrize("path", UNGUARDED)
def test_no_rendered_route_or_ingress_forwards_an_unguarded_path(path: str) -> None:
    forwarded = [m["path"]["value"] for m in route()["spec"]["rules"][0]["matches"]]
    forwarded += [p["path"] for p in ingress()["spec"]["rules"][0]["http"]["paths"]]
    assert not any(value == path or value.startswith(path + "/") for value in forwarded)


@pytest.mark.parametrize("path", ["/invocations", "/tokenize", "/metrics", "/v1/../invocations", "v1/models", "/"])
def test_a_path_the_api_key_does_not_guard_is_refused_naming_the_key(path: str) -> None:
    with pytest.raises(ConfigError) as error:
        make_config(security={"require_api_key": True}, exposure={"gateway": GATEWAY, "paths": ["/v1/chat/completions", path]})
    assert "vllm-serving:exposure.paths" in str(error.value)
    assert "is not a path vLLM's API key guards" in str(error.value)


def test_exposure_without_an_api_key_is_refused_with_the_fix() -> None:
    with pytest.raises(ConfigError) as error:
        make_config(exposure={"gateway": GATEWAY})
    assert "vllm-serving:exposure.gateway: exposes the API outside the namespace, but security.require_api_key is false" in str(
        error.value
    )
    assert "Fix: set security.require_api_key: true" in str(error.value)


def test_gateway_and_ingress_together_are_refused() -> None:
    with pytest.raises(ConfigError) as error:
        exposed(
            gateway=GATEWAY, ingress={"class_name": "nginx", "host": "a.example.com", "controller_namespace": "ingress-nginx"}
        )
    assert "vllm-serving:exposure: sets both gateway and ingress" in str(error.value)


def test_a_gateway_without_a_name_is_refused_naming_the_key() -> None:
    with pytest.raises(ConfigError) as error:
        exposed(gateway={"namespace": "gateway-system"})
    assert "vllm-serving:exposure.gateway.name: is required but missing." in str(error.value)


def test_a_bad_gateway_pod_label_is_refused_naming_the_key() -> None:
    with pytest.raises(ConfigError) as error:
        exposed(gateway={**GATEWAY, "pod_selector": {"bad key!": "x"}})
    assert "vllm-serving:exposure.gateway.pod_selector" in str(error.value)


def test_clients_use_the_gateway_hostname() -> None:
    assert parts(exposed(gateway=GATEWAY))[1].client_url == "https://llm.example.com"


def test_without_exposure_clients_use_the_service_dns_name() -> None:
    assert parts(make_config())[1].client_url == "http://prod-server.prod.svc:8000"


def test_the_curl_takes_the_key_from_the_secret_and_calls_the_gateway() -> None:
    assert curl_command(*parts(exposed(gateway=GATEWAY))) == (
        "curl -sS https://llm.example.com/v1/chat/completions -H 'Content-Type: application/json' "
        '-H "Authorization: Bearer $(kubectl get secret -n prod prod-api-key '
        '-o go-template=\'{{index .data "api-key"}}\' | base64 -d)" '
        '-d \'{"model": "llama-8b", "messages": [{"role": "user", "content": "Hello"}]}\''
    )


def test_without_exposure_the_curl_goes_through_a_port_forward() -> None:
    assert curl_command(*parts(make_config())).startswith(
        "kubectl port-forward -n prod svc/prod-server 8000:8000 & sleep 2; curl -sS http://127.0.0.1:8000/v1/chat/"
    )


def test_the_log_says_how_clients_reach_an_unexposed_server_and_what_they_can_reach() -> None:
    from components.stack import how_clients_reach_it

    assert how_clients_reach_it(*parts(make_config())) == (
        "no exposure.gateway or exposure.ingress: http://prod-server.prod.svc:8000 is reachable from pods in "
        "namespace prod only (network_policy), on every path, /invocations and /tokenize included; expose it "
        "through a Gateway (exposure.gateway) to serve clients elsewhere (docs/exposure.md)"
    )


def test_the_log_names_the_gateway_url_and_the_routed_paths() -> None:
    from components.stack import how_clients_reach_it

    assert how_clients_reach_it(*parts(exposed(gateway=GATEWAY))) == (
        "clients reach llama-8b at https://llm.example.com on /v1/chat/completions, /v1/completions, /v1/models"
    )
