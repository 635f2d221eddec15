"""A router pod going away (a rolling update of the router, a node drain): the kubelet sends it SIGTERM and kills
it once its grace period is over. The router (the wheel's binary, the rendered command) must finish the answers it
proxies in between; the render gives its pod a grace period of its own request bound (plan/routing.py), not the
kubelet's 30 s. Here it runs in front of the Kubernetes test server and is signalled mid-answer."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import cpu_backend, rendered
from tests.e2e.processes import Server, free_port
from tests.e2e.sigterm import Signalled, sigterm_mid_answer
from tests.e2e.test_router import ROUTER_READY_S, router_launcher

pytestmark = pytest.mark.e2e

TOKENS = 1500  # still being generated when the router gets SIGTERM


@pytest.fixture(scope="module")
def stopped(
    e2e_python: Path, kubernetes_server: Server, api_key: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Signalled]:
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
        yield sigterm_mid_answer(router, kubernetes_server, api_key, TOKENS, launch.grace_seconds)
    finally:
        router.stop()


def test_the_answer_was_still_being_proxied_when_sigterm_came(stopped: Signalled) -> None:
    assert stopped.in_flight_at_sigterm


def test_an_answer_the_router_proxies_at_sigterm_comes_back_whole(stopped: Signalled) -> None:
    assert stopped.whole(TOKENS), stopped.body[:500]


def test_the_router_exits_by_itself_once_the_answer_is_done_within_its_rendered_grace_period(stopped: Signalled) -> None:
    assert stopped.exit_code is not None
