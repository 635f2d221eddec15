"""SIGTERM in the middle of an answer, as the kubelet sends it to a container's main process when its pod goes away,
and what came of it (tests/e2e/test_shutdown.py for the server, test_router_shutdown.py for the router)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from tests.e2e.processes import Server, chat, get

RUNNING = re.compile(r"^vllm:num_requests_running\{[^}]*\} ([0-9.]+)$", re.MULTILINE)


@dataclass(frozen=True)
class Signalled:
    in_flight_at_sigterm: bool  # the answer had not come back when the signal was sent
    status: int
    body: bytes
    exit_code: int | None  # the signalled process's, waited for up to the bound
    log: str  # the signalled process's

    def whole(self, tokens: int) -> bool:
        """The answer came back with every token it asked for (ignore_eos), not aborted."""
        if self.status != 200:
            return False
        answer = json.loads(self.body)
        return (answer["choices"][0]["finish_reason"], answer["usage"]["completion_tokens"]) == ("length", tokens)


def wait_until_running(server: Server, bound_s: float = 60) -> None:
    """Until the server's engine runs a request (its /metrics), at most `bound_s`."""
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        _status, body = get(server.base_url + "/metrics")
        if any(float(value) >= 1 for value in RUNNING.findall(body.decode(errors="replace"))):
            return
        time.sleep(0.2)
    raise AssertionError(f"no request running within {bound_s:.0f} s:\n{server.log_tail()}")


def sigterm_mid_answer(target: Server, engine: Server, api_key: str, tokens: int, bound_s: int) -> Signalled:
    """Ask `target` for `tokens` tokens of `engine`'s model, send `target` SIGTERM once `engine` generates them,
    and wait up to `bound_s` for the answer and for `target` to exit."""
    assert target.process is not None
    model = engine.extra["launch"].served_model_name
    with ThreadPoolExecutor(1) as pool:
        answer = pool.submit(chat, target.base_url, model, api_key, tokens, timeout=bound_s)
        wait_until_running(engine)
        in_flight = not answer.done()
        os.kill(target.process.pid, signal.SIGTERM)  # the kubelet signals the container's main process
        status, body = answer.result()
    try:
        exit_code: int | None = target.process.wait(timeout=bound_s)
    except subprocess.TimeoutExpired:
        exit_code = None
    return Signalled(in_flight, status, body, exit_code, target.log.read_text(errors="replace"))
