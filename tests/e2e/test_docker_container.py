"""The Docker target's rendered container command and environment, run on vLLM's CPU build (tiny model).

This module runs first (file order) and stops its server at the end, so Prometheus later gets its core.
"""

from __future__ import annotations

import json

import pytest

from tests.e2e.processes import Server, chat, get

pytestmark = pytest.mark.e2e


def test_docker_command_turns_healthy_within_the_rendered_start_period(docker_server: Server) -> None:
    budget = docker_server.extra["launch"].startup_budget_seconds
    assert docker_server.healthy_after is not None and docker_server.healthy_after <= budget


def test_docker_server_lists_only_the_rendered_served_model_name(docker_server: Server, api_key: str) -> None:
    status, body = get(docker_server.base_url + "/v1/models", headers={"Authorization": f"Bearer {api_key}"})
    assert status == 200, body
    assert [model["id"] for model in json.loads(body)["data"]] == [docker_server.extra["launch"].served_model_name]


def test_docker_server_answers_a_chat_completion_with_the_key(docker_server: Server, api_key: str) -> None:
    status, body = chat(docker_server.base_url, docker_server.extra["launch"].served_model_name, api_key)
    assert status == 200, body
    assert json.loads(body)["usage"]["completion_tokens"] == 8


def test_docker_server_refuses_a_chat_completion_without_the_key(docker_server: Server) -> None:
    status, body = chat(docker_server.base_url, docker_server.extra["launch"].served_model_name, None)
    assert status == 401, body
