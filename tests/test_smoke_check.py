"""smoke/check.py against a local stdlib HTTP server that imitates vLLM's /v1/chat/completions."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.http_json import send_json

SCRIPT = Path(__file__).resolve().parents[1] / "smoke" / "check.py"
MODEL = "llama-70b"
KEY = "sk-smoke"


def completion(model: str = MODEL, content: str | None = "ready") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    }


class FakeVllm(BaseHTTPRequestHandler):
    """Answers what the test put in `server.reply` (status, body, delay) and keeps the request it got."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        self.server.seen.append((self.path, dict(self.headers), json.loads(self.rfile.read(length))))  # type: ignore[attr-defined]
        status, body, delay = self.server.reply  # type: ignore[attr-defined]
        time.sleep(delay)
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the timeout case has hung up
            send_json(self, status, data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def running_server() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeVllm)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def server(running_server: ThreadingHTTPServer) -> ThreadingHTTPServer:
    running_server.seen, running_server.reply = [], (200, completion(), 0.0)  # type: ignore[attr-defined]
    return running_server


def url(httpd: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{httpd.server_address[1]}"


def _load_script() -> Any:
    spec = importlib.util.spec_from_file_location("smoke_check", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CHECK = _load_script()


def arguments(base_url: str, *extra: str, timeout: float = 5) -> list[str]:
    return ["--base-url", base_url, "--model", MODEL, "--timeout-seconds", str(timeout), *extra]


def run_check(base_url: str, *extra: str, timeout: float = 5) -> subprocess.CompletedProcess[str]:
    """main() in this process (a subprocess per case is too slow for the suite), its output captured."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = CHECK.main(arguments(base_url, *extra, timeout=timeout))
    return subprocess.CompletedProcess([], code, out.getvalue(), err.getvalue())


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    """The real command line, as the Job runs it."""
    return subprocess.run([sys.executable, "-S", str(SCRIPT), *args], capture_output=True, text=True, timeout=30, check=False)


def key_file(tmp_path: Path) -> str:
    path = tmp_path / "api-key"
    path.write_text(KEY + "\n", encoding="utf-8")
    return str(path)


def test_a_right_answer_exits_zero_and_names_the_model(server: ThreadingHTTPServer) -> None:
    result = run_script(*arguments(url(server)))
    assert (result.returncode, result.stdout.startswith(f"smoke test passed: {MODEL} answered 'ready'")) == (0, True)


def test_the_request_is_one_chat_completion_for_the_served_model(server: ThreadingHTTPServer) -> None:
    run_check(url(server))
    path, _, body = server.seen[0]  # type: ignore[attr-defined]
    assert (path, body["model"], body["messages"][0]["role"], body["max_tokens"]) == ("/v1/chat/completions", MODEL, "user", 16)


def test_the_api_key_file_is_sent_as_a_bearer_token(server: ThreadingHTTPServer, tmp_path: Path) -> None:
    run_check(url(server), "--api-key-file", key_file(tmp_path))
    assert server.seen[0][1]["Authorization"] == f"Bearer {KEY}"  # type: ignore[attr-defined]


def test_without_a_key_file_no_authorization_header_is_sent(server: ThreadingHTTPServer) -> None:
    run_check(url(server))
    assert "Authorization" not in server.seen[0][1]  # type: ignore[attr-defined]


def test_a_wrong_model_name_fails_naming_both_names_and_the_body(server: ThreadingHTTPServer) -> None:
    server.reply = (200, completion(model="other-model"), 0.0)  # type: ignore[attr-defined]
    result = run_check(url(server))
    assert result.returncode == 1
    assert "HTTP 200 but the response is from model 'other-model', not 'llama-70b'" in result.stderr
    assert '"model": "other-model"' in result.stderr


def test_a_401_fails_with_the_status_and_the_body(server: ThreadingHTTPServer) -> None:
    server.reply = (401, {"error": "Unauthorized"}, 0.0)  # type: ignore[attr-defined]
    result = run_check(url(server))
    assert result.returncode == 1
    assert 'HTTP 401 (the API key was refused or is missing): {"error": "Unauthorized"}' in result.stderr


def test_a_500_fails_with_the_status_and_the_body(server: ThreadingHTTPServer) -> None:
    server.reply = (500, "Internal Server Error: CUDA out of memory", 0.0)  # type: ignore[attr-defined]
    result = run_script(*arguments(url(server)))
    assert (result.returncode, result.stderr.strip().endswith("HTTP 500: Internal Server Error: CUDA out of memory")) == (
        1,
        True,
    )


def test_an_empty_answer_fails(server: ThreadingHTTPServer) -> None:
    server.reply = (200, completion(content=""), 0.0)  # type: ignore[attr-defined]
    result = run_check(url(server))
    assert (result.returncode, "HTTP 200 but the answer is empty" in result.stderr) == (1, True)


def test_a_server_slower_than_the_bound_fails_as_a_timeout(server: ThreadingHTTPServer) -> None:
    server.reply = (200, completion(), 1.0)  # type: ignore[attr-defined]
    result = run_check(url(server), timeout=0.3)
    assert (result.returncode, "no answer within 0.3 s (timeout)" in result.stderr) == (1, True)


def test_a_refused_connection_fails_saying_it_cannot_connect() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = run_check(f"http://127.0.0.1:{port}")
    assert (result.returncode, "cannot connect: [Errno 111] Connection refused" in result.stderr) == (1, True)


def test_every_failure_is_one_line_that_names_the_url(server: ThreadingHTTPServer) -> None:
    server.reply = (503, {"error": "x" * 5000}, 0.0)  # type: ignore[attr-defined]
    lines = run_check(url(server)).stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"smoke test FAILED: POST {url(server)}/v1/chat/completions: HTTP 503")


def test_a_long_body_is_truncated_to_fit_a_termination_message(server: ThreadingHTTPServer) -> None:
    server.reply = (503, {"error": "x" * 5000}, 0.0)  # type: ignore[attr-defined]
    assert len(run_check(url(server)).stderr.encode()) < 2048


def test_a_missing_key_file_fails_naming_it(server: ThreadingHTTPServer, tmp_path: Path) -> None:
    result = run_check(url(server), "--api-key-file", str(tmp_path / "absent"))
    assert (result.returncode, f"cannot read the API key file {tmp_path / 'absent'}" in result.stderr) == (1, True)


def test_a_missing_argument_exits_two() -> None:
    result = run_script("--model", MODEL)
    assert (result.returncode, "--base-url" in result.stderr) == (2, True)


def test_the_script_imports_nothing_outside_the_standard_library() -> None:
    imported = {
        line.split()[1].split(".")[0]
        for line in SCRIPT.read_text().splitlines()
        if line.startswith(("import ", "from ")) and not line.startswith("from __future__")
    }
    assert imported <= set(sys.stdlib_module_names)


def test_an_openai_style_base_url_ending_in_v1_reaches_the_same_path(server: ThreadingHTTPServer) -> None:
    assert run_check(url(server) + "/v1/").returncode == 0
    assert server.seen[0][0] == "/v1/chat/completions"  # type: ignore[attr-defined]


def test_an_answer_of_whitespace_passes_because_the_model_generated(server: ThreadingHTTPServer) -> None:
    server.reply = (200, completion(content="\n\n"), 0.0)  # type: ignore[attr-defined]
    assert run_check(url(server)).returncode == 0


def test_the_host_option_sends_the_host_the_interceptor_routes_on(server: ThreadingHTTPServer) -> None:
    assert run_check(url(server), "--host", "llama-server.llm.svc").returncode == 0
    assert server.seen[0][1]["Host"] == "llama-server.llm.svc"  # type: ignore[attr-defined]


def test_without_the_host_option_the_url_names_the_host(server: ThreadingHTTPServer) -> None:
    assert run_check(url(server)).returncode == 0
    assert server.seen[0][1]["Host"] == url(server).removeprefix("http://")  # type: ignore[attr-defined]
