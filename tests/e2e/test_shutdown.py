"""A replica going away (a rolling update, a scale-down, a node drain): after the preStop sleep the kubelet sends
the container's main process SIGTERM, and SIGKILL once the grace period is over. vLLM aborts every answer in flight
at SIGTERM unless `--shutdown-timeout` says how long to drain (docs/sources.md §A.7); the render sets it from the
grace period (plan/vllm_args.py drain_seconds). This runs the rendered Kubernetes command and signals it so."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from plan.vllm_args import ENGINE_TEARDOWN_SECONDS
from tests.e2e import cpu_backend, rendered
from tests.e2e.processes import Server, chat, free_port, get

pytestmark = pytest.mark.e2e

TOKENS = 3000  # generated one by one on one CPU core: the answer is still running when SIGTERM comes
RUNNING = re.compile(r"^vllm:num_requests_running\{[^}]*\} ([0-9.]+)$", re.MULTILINE)


@dataclass(frozen=True)
class Drained:
    in_flight_at_sigterm: bool  # the answer had not come back when the signal was sent
    status: int
    body: bytes
    exit_code: int | None  # the server's, within the drain and teardown the render allows
    log: str


def _drain_seconds(server: Server) -> int:
    args = server.extra["launch"].args
    return int(args[args.index("--shutdown-timeout") + 1])


def wait_until_running(server: Server, bound_s: float = 60) -> None:
    """Until the server's engine runs a request (its /metrics), at most `bound_s`."""
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        _status, body = get(server.base_url + "/metrics")
        if any(float(value) >= 1 for value in RUNNING.findall(body.decode(errors="replace"))):
            return
        time.sleep(0.2)
    raise AssertionError(f"no request running within {bound_s:.0f} s:\n{server.log_tail()}")


def _sigterm_while_answering(server: Server, api_key: str) -> Drained:
    assert server.process is not None
    model, bound = server.extra["launch"].served_model_name, _drain_seconds(server) + ENGINE_TEARDOWN_SECONDS
    with ThreadPoolExecutor(1) as pool:
        answer = pool.submit(chat, server.base_url, model, api_key, TOKENS, timeout=bound)
        wait_until_running(server)
        in_flight = not answer.done()
        os.kill(server.process.pid, signal.SIGTERM)  # the kubelet signals the container's main process
        status, body = answer.result()
    try:
        exit_code: int | None = server.process.wait(timeout=bound)
    except subprocess.TimeoutExpired:
        exit_code = None
    return Drained(in_flight, status, body, exit_code, Path(server.log).read_text(errors="replace"))


@pytest.fixture(scope="module")
def drained(
    e2e_python: Path, tiny_model: Path, api_key: str, cores: tuple[int, int], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Drained]:
    launch = rendered.kubernetes_launch(api_key)
    home = tmp_path_factory.mktemp("home-draining")
    host = cpu_backend.Host(python=e2e_python, model_dir=tiny_model, home=home, port=free_port(), core=cores[1])
    server = cpu_backend.start_server("draining", launch, host, extra={"launch": launch})
    try:
        server.wait_healthy("/health", launch.startup_budget_seconds)
        yield _sigterm_while_answering(server, api_key)
    finally:
        server.stop()


def test_the_answer_was_still_running_when_sigterm_came(drained: Drained) -> None:
    assert drained.in_flight_at_sigterm


def test_an_answer_in_flight_at_sigterm_comes_back_whole(drained: Drained) -> None:
    assert drained.status == 200, drained.body[:500]
    answer = json.loads(drained.body)
    assert (answer["choices"][0]["finish_reason"], answer["usage"]["completion_tokens"]) == ("length", TOKENS)


def test_the_engine_drained_the_answer_instead_of_aborting_it(drained: Drained) -> None:
    assert "[shutdown] EngineCore: draining in-flight requests count=1" in drained.log, drained.log[-3000:]


def test_the_server_exits_by_itself_within_the_drain_and_teardown_the_grace_period_allows(drained: Drained) -> None:
    assert drained.exit_code is not None, drained.log[-3000:]
