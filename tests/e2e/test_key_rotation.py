"""A rotation halfway: the rendered server of a stack with api_key (the new key) and api_key_previous (the old one)
runs on vLLM's CPU build with its command line as the kubelet expands it (`--api-key $(VLLM_API_KEY)
$(API_KEY_PREVIOUS)`, both variables from the Secret). It must accept both keys, refuse any other, and keep both out
of its start-up log (the release redacts `api_key` in its `non-default args` line: catalog/vllm_flags.py
SEVERAL_API_KEYS_SINCE).
"""

from __future__ import annotations

import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from components.render.security import API_KEY_KEY, API_KEY_PREVIOUS_KEY
from plan.traffic import smoke_script
from tests.e2e import cpu_backend, rendered
from tests.e2e.processes import Server, free_port, get, request

pytestmark = pytest.mark.e2e

NEW, OLD = "sk-new-" + secrets.token_hex(8), "sk-old-" + secrets.token_hex(8)


@pytest.fixture(scope="module")
def rotating(
    e2e_python: Path, tiny_model: Path, cores: tuple[int, int], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """On the second core, which the Docker server's module has given back (Prometheus takes it later)."""
    launch = rendered.rotation_launch(NEW, OLD)
    home = tmp_path_factory.mktemp("home-rotation")
    host = cpu_backend.Host(python=e2e_python, model_dir=tiny_model, home=home, port=free_port(), core=cores[1])
    server = cpu_backend.start_server("rotation", launch, host, extra={"launch": launch})
    try:
        server.wait_healthy("/health", launch.startup_budget_seconds)
        yield server
    finally:
        server.stop()


def models(server: Server, key: str) -> int:
    return get(server.base_url + "/v1/models", headers={"Authorization": f"Bearer {key}"})[0]


def test_the_rendered_command_line_hands_vllm_both_keys_as_the_kubelet_expands_them() -> None:
    args = rendered.rotation_launch(NEW, OLD).args
    start = args.index("--api-key")
    assert args[start : start + 3] == ["--api-key", NEW, OLD]


def test_the_server_mid_rotation_accepts_the_new_key(rotating: Server) -> None:
    assert models(rotating, NEW) == 200


def test_the_server_mid_rotation_still_accepts_the_previous_key(rotating: Server) -> None:
    assert models(rotating, OLD) == 200


def test_the_server_mid_rotation_refuses_any_other_key(rotating: Server) -> None:
    assert models(rotating, "sk-never-issued") == 401


def test_a_client_still_on_the_previous_key_gets_its_completion(rotating: Server) -> None:
    body = {"model": rotating.extra["launch"].served_model_name, "prompt": cpu_backend.PROMPT, "max_tokens": 2}
    headers = {"Authorization": f"Bearer {OLD}"}
    status, answer = request(rotating.base_url + "/v1/completions", "POST", body, headers, timeout=120)
    assert status == 200, answer


def test_the_start_up_log_holds_neither_key(rotating: Server) -> None:
    log = rotating.log.read_text(errors="replace")
    assert "non-default args" in log, rotating.log_tail()  # the line that would print them
    assert NEW not in log and OLD not in log


def test_the_smoke_check_a_rotation_reruns_passes_with_the_new_key_as_its_job_mounts_it(
    rotating: Server, tmp_path: Path
) -> None:
    """The Job's own command, its volumes as the kubelet mounts them: the script from the ConfigMap, both keys of
    the Secret as files (the check reads `api-key`, the new one)."""
    script, keys = tmp_path / "script", tmp_path / "api-key"
    script.mkdir()
    keys.mkdir()
    (script / "check.py").write_text(smoke_script())
    (keys / API_KEY_KEY).write_text(NEW)
    (keys / API_KEY_PREVIOUS_KEY).write_text(OLD)
    command = rendered.rotation_smoke_command(rotating.base_url, {"script": script, "api-key": keys})
    assert command[0] == "python3"
    result = subprocess.run([sys.executable, *command[1:]], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
