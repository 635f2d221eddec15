"""The post-deploy smoke check (issue 13's stdlib-only smoke/check.py), its real command against the real server:
`python smoke/check.py --base-url URL --model NAME --api-key-file FILE --timeout-seconds N`."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.paths import REPO
from tests.e2e.processes import Server

CHECK = REPO / "smoke" / "check.py"
CHECK_TIMEOUT_S = 60

pytestmark = pytest.mark.e2e


def run_check(base_url: str, model: str, key_file: Path, timeout_s: int = CHECK_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable,
        str(CHECK),
        "--base-url",
        base_url,
        "--model",
        model,
        "--api-key-file",
        str(key_file),
        "--timeout-seconds",
        str(timeout_s),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout_s + 30)


@pytest.fixture
def key_file(tmp_path: Path, api_key: str) -> Path:
    path = tmp_path / "api-key"
    path.write_text(api_key + "\n")
    return path


def test_smoke_check_passes_on_the_served_model(kubernetes_server: Server, key_file: Path) -> None:
    result = run_check(kubernetes_server.base_url, kubernetes_server.extra["launch"].served_model_name, key_file)
    assert result.returncode == 0, result.stdout + result.stderr


def test_smoke_check_fails_on_a_wrong_model_name_with_the_response_body(kubernetes_server: Server, key_file: Path) -> None:
    result = run_check(kubernetes_server.base_url, "not-the-served-model", key_file)
    # vLLM's 404 body names the model it does not know.
    assert result.returncode != 0 and "not-the-served-model" in result.stdout + result.stderr, result


def test_smoke_check_fails_with_401_on_a_key_the_server_does_not_accept(kubernetes_server: Server, tmp_path: Path) -> None:
    wrong = tmp_path / "wrong-key"
    wrong.write_text("sk-not-the-key\n")
    result = run_check(kubernetes_server.base_url, kubernetes_server.extra["launch"].served_model_name, wrong)
    assert result.returncode != 0 and "401" in result.stdout + result.stderr, result


@pytest.fixture
def silent_server() -> Iterator[str]:
    """Accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_smoke_check_fails_on_a_server_that_never_answers(silent_server: str, key_file: Path) -> None:
    result = run_check(silent_server, "llama-8b", key_file, timeout_s=3)
    assert result.returncode != 0, result
