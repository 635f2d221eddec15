"""Servers the tier starts: each in its own session (process group), always stopped through that group."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STOP_GRACE_S = 20  # SIGTERM first (uvicorn and the engine shut down), then SIGKILL to the whole group


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    name: str
    argv: list[str]
    env: dict[str, str]
    log: Path
    base_url: str
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    healthy_after: float | None = None  # seconds from launch to the first /health 200
    extra: dict[str, Any] = field(default_factory=dict)

    def start(self) -> None:
        with self.log.open("wb") as out:
            # start_new_session: the server and every child (engine core, workers) share one process group.
            self.process = subprocess.Popen(
                self.argv, env=self.env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        self.started_at = time.monotonic()

    def stop(self) -> None:
        if self.process is None or (self.process.returncode is not None and not _group_alive(self.process.pid)):
            return
        _signal_group(self.process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=STOP_GRACE_S)
        _signal_group(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=STOP_GRACE_S)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def wait_healthy(self, path: str, budget_s: float) -> float:
        """Poll `path` until it answers 200; seconds since launch. Fails with the log past the budget or on exit."""
        assert self.process is not None
        deadline = self.started_at + budget_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"{self.name} exited with {self.process.returncode}:\n{self.log_tail()}")
            if get(self.base_url + path, timeout=5)[0] == 200:
                self.healthy_after = time.monotonic() - self.started_at
                return self.healthy_after
            time.sleep(1)
        raise AssertionError(f"{self.name}: no 200 from {path} within {budget_s:.0f} s:\n{self.log_tail()}")


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, sig)  # the session leader's pid is the group id


def _group_alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    return True


def request(
    url: str, method: str = "GET", body: Any = None, headers: dict[str, str] | None = None, timeout: float = 30
) -> tuple[int, bytes]:
    """(status, body); connection failures come back as status 0 with the error as the body."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except (urllib.error.URLError, OSError) as error:
        return 0, str(error).encode()


def get(url: str, timeout: float = 30, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    return request(url, headers=headers, timeout=timeout)


def chat(
    base_url: str, model: str, api_key: str | None, max_tokens: int = 8, path: str = "/v1/chat/completions", timeout: float = 60
) -> tuple[int, bytes]:
    """One chat completion; ignore_eos makes every request generate exactly max_tokens tokens."""
    body = {
        "model": model,
        "messages": [{"role": "user", "content": "hello, how are you today?"}],
        "max_tokens": max_tokens,
        "ignore_eos": True,
    }
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return request(base_url + path, "POST", body, headers, timeout=timeout)
