"""The real download script, with huggingface_hub, against a local HTTP server standing in for the Hub
(HF_ENDPOINT): a refused token or a gated model ends the attempt with its cause and a failure marker, and the
server's wait container stops on that marker with the cause."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from components.render.cache import DOWNLOAD_SCRIPT, WAIT_SCRIPT


def hub_answering(status: int) -> ThreadingHTTPServer:
    """Every request gets `status`, with the Hub's error header and JSON body."""

    class Refuse(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            body = json.dumps({"error": f"refused with {status}"}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("X-Error-Message", f"refused with {status}")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_GET = do_HEAD = _answer

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return server


@pytest.fixture(scope="module", params=[401, 403])
def refused(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[int, subprocess.CompletedProcess[str], Path]]:
    """One run of the script per status (a subprocess: huggingface_hub reads HF_ENDPOINT on import)."""
    pytest.importorskip("huggingface_hub")  # requirements-dev.txt pins it
    tmp_path = tmp_path_factory.mktemp(f"refused-{request.param}")
    server = hub_answering(request.param)
    failed = tmp_path / ".vllm-serving" / "failed-x"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "HF_HOME": str(tmp_path),
        "HF_ENDPOINT": f"http://127.0.0.1:{server.server_address[1]}",
        "HF_TOKEN": "hf_not_a_token",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "CACHE_MARKER": str(tmp_path / ".vllm-serving" / "complete-x"),
        "FAILURE_MARKER": str(failed),
        "DOWNLOAD_DEADLINE_SECONDS": "60",
        "DOWNLOADS": json.dumps([["meta-llama/Llama-3.1-8B-Instruct", None]]),
        "MAX_WORKERS": "1",
        "IGNORE_PATTERNS": "[]",
        "PRUNE_OTHER_REVISIONS": "0",
    }
    try:
        done = subprocess.run([sys.executable, "-c", DOWNLOAD_SCRIPT], env=env, capture_output=True, text=True, timeout=60)
    finally:
        server.shutdown()
    yield request.param, done, failed


def test_a_refused_download_exits_naming_the_status_and_its_cause(refused):  # type: ignore[no-untyped-def]
    status, done, _ = refused
    last_line = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 1
    assert last_line.startswith(f"model download failed: HTTP {status}: ")
    assert ("hf_token" if status == 401 else "gated model") in last_line


def test_a_refused_download_writes_the_failure_marker_with_its_reason(refused):  # type: ignore[no-untyped-def]
    status, _, failed = refused
    assert failed.read_text().startswith(f"HTTP {status}: ")


def test_the_wait_container_stops_on_the_failure_marker_with_the_reason(tmp_path):  # type: ignore[no-untyped-def]
    failed = tmp_path / "failed-x"
    failed.write_text("HTTP 403: gated model")
    env = {"PATH": os.environ.get("PATH", ""), "CACHE_MARKER": str(tmp_path / "complete-x"), "FAILURE_MARKER": str(failed)}
    done = subprocess.run(["sh", "-c", WAIT_SCRIPT], env=env, capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stderr.strip()) == (1, "model download failed: HTTP 403: gated model")
