"""A router pod going away (a rolling update of the router, a node drain): the kubelet sends it SIGTERM and kills
it once its grace period is over. The router (the wheel's binary, the rendered command) must finish the answers it
proxies in between; the render gives its pod a grace period of its own request bound (plan/routing.py), not the
kubelet's 30 s. Here it runs in front of the Kubernetes test server and is signalled mid-answer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e import cpu_backend, rendered
from tests.e2e.processes import Server, chat, free_port
from tests.e2e.test_router import ROUTER_READY_S, router_launcher
from tests.e2e.test_shutdown import wait_until_running

pytestmark = pytest.mark.e2e

TOKENS = 1500  # still being generated when the router gets SIGTERM


@dataclass(frozen=True)
class Stopped:
    in_flight_at_sigterm: bool
    status: int
    body: bytes
    exit_code: int | None  # the router's, waited for up to its rendered grace period
    seconds_to_exit: float


@pytest.fixture(scope="module")
def stopped(
    e2e_python: Path, kubernetes_server: Server, api_key: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stopped]:
    launch = rendered.router_launch(api_key)
    port, metrics_port = free_port(), free_port()
    argv = cpu_backend.adapt_router_command(
        launch.command, router_launcher(e2e_python), [kubernetes_server.base_url], port, metrics_port, api_key
    )
    router = Server(
        name="router-shutdown",
        argv=argv,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        log=tmp_path_factory.mktemp("router-shutdown") / "router.log",
        base_url=f"http://127.0.0.1:{port}",
    )
    router.start()
    try:
        router.wait_healthy("/health", ROUTER_READY_S)
        yield _sigterm_while_proxying(router, kubernetes_server, api_key, launch.grace_seconds)
    finally:
        router.stop()


def _sigterm_while_proxying(router: Server, server: Server, api_key: str, grace_s: int) -> Stopped:
    assert router.process is not None
    model = server.extra["launch"].served_model_name
    with ThreadPoolExecutor(1) as pool:
        answer = pool.submit(chat, router.base_url, model, api_key, TOKENS, timeout=grace_s)
        wait_until_running(server)
        in_flight = not answer.done()
        signalled = time.monotonic()
        os.kill(router.process.pid, signal.SIGTERM)  # the kubelet signals the container's main process
        status, body = answer.result()
    try:
        exit_code: int | None = router.process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        exit_code = None
    return Stopped(in_flight, status, body, exit_code, time.monotonic() - signalled)


def test_the_answer_was_still_being_proxied_when_sigterm_came(stopped: Stopped) -> None:
    assert stopped.in_flight_at_sigterm


def test_an_answer_the_router_proxies_at_sigterm_comes_back_whole(stopped: Stopped) -> None:
    assert stopped.status == 200, stopped.body[:500]
    answer = json.loads(stopped.body)
    assert (answer["choices"][0]["finish_reason"], answer["usage"]["completion_tokens"]) == ("length", TOKENS)


def test_the_router_exits_by_itself_once_the_answer_is_done_within_its_rendered_grace_period(stopped: Stopped) -> None:
    assert stopped.exit_code is not None
