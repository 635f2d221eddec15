"""The Kubernetes Deployment's rendered container command, args and env, run on vLLM's CPU build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.processes import Server, chat, get

pytestmark = pytest.mark.e2e


def test_deployment_command_turns_healthy_within_the_startup_probe_budget(kubernetes_server: Server) -> None:
    budget = kubernetes_server.extra["launch"].startup_budget_seconds  # failureThreshold x periodSeconds
    assert kubernetes_server.healthy_after is not None and kubernetes_server.healthy_after <= budget


def test_server_lists_only_the_rendered_served_model_name(kubernetes_server: Server, api_key: str) -> None:
    status, body = get(kubernetes_server.base_url + "/v1/models", headers={"Authorization": f"Bearer {api_key}"})
    assert status == 200, body
    assert [m["id"] for m in json.loads(body)["data"]] == [kubernetes_server.extra["launch"].served_model_name]


def test_server_answers_a_chat_completion_under_the_served_model_name(kubernetes_server: Server, api_key: str) -> None:
    name = kubernetes_server.extra["launch"].served_model_name
    status, body = chat(kubernetes_server.base_url, name, api_key)
    assert status == 200, body
    assert json.loads(body)["model"] == name


def test_server_takes_its_max_model_len_from_the_render(kubernetes_server: Server, api_key: str) -> None:
    _status, body = get(kubernetes_server.base_url + "/v1/models", headers={"Authorization": f"Bearer {api_key}"})
    args = kubernetes_server.extra["launch"].args
    assert json.loads(body)["data"][0]["max_model_len"] == int(args[args.index("--max-model-len") + 1])


def test_server_writes_its_caches_under_the_rendered_home(kubernetes_server: Server) -> None:
    cache_root = Path(kubernetes_server.env["VLLM_CACHE_ROOT"])
    assert cache_root.is_relative_to(kubernetes_server.env["HOME"]) and cache_root.is_dir()
