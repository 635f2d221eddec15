"""vLLM's router (the wheel's binary, the rendered command line) in front of two CPU vLLM servers started from the
routed stack's rendered server command (tests/e2e/rendered.py router_launch, cpu_backend.py adapt_router_command).

Two servers, one per core of this host, and the router beside them; the module stops all three at its end.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from catalog.router_flags import router_flags
from config.routing import ROUTER_VERSION
from tests.e2e import cpu_backend, rendered
from tests.e2e.processes import Server, free_port, get, request

pytestmark = pytest.mark.e2e

ROUTER_READY_S = 120  # it listens once both (already healthy) workers answered its first check
MARKED_DOWN_S = 60  # health interval x failure threshold, plus the interval of the kill
AFTER_MARK = 4  # requests sent after the router marked the killed server down
PREFIX = "You are a meticulous assistant. " * 20  # ~640 characters every prompt of the prefix test shares
# Two more long prefixes, distinct from PREFIX and from each other from their first token.
HELD_PREFIX = "Alpha context. " + "The quick brown fox jumps over the lazy dog. " * 14
NEW_PREFIX = "Bravo context. " + "Pack my box with five dozen liquor jugs, said the sphinx. " * 12
# Long enough to keep its server busy (router load 1) across the few short requests sent meanwhile: some 20-60 s on
# one core here. The tests check it is still running after each of them rather than trust a duration.
HOLDING_TOKENS = 3000
_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][\w:]*)(?:\{(?P<labels>[^}]*)\})? (?P<value>\S+)$")


def router_launcher(python: Path) -> list[str]:
    """The wheel's `vllm-router` console script as a module: setup-e2e.sh moves the venv after installing it,
    so the script's shebang names a path that no longer exists."""
    return [str(python), "-m", "vllm_router.launch_router"]


def samples(text: str, name: str) -> dict[str, float]:
    """The samples of one metric, keyed by their label text."""
    found: dict[str, float] = {}
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if match and match["name"] == name:
            found[match["labels"] or ""] = float(match["value"])
    return found


def per_worker(metrics_url: str, name: str, servers: list[Server]) -> list[float]:
    """One metric's value for each server, matched by the server's port in the `worker` label."""
    values = samples(get(metrics_url)[1].decode(), name)
    ports = [server.base_url.rsplit(":", 1)[1] for server in servers]
    return [sum(v for labels, v in values.items() if f':{port}"' in labels) for port in ports]


def completion(router: Server, model: str, api_key: str, prompt: str, max_tokens: int = 4) -> int:
    body = {"model": model, "prompt": prompt, "max_tokens": max_tokens, "ignore_eos": True}
    headers = {"Authorization": f"Bearer {api_key}"}
    return request(router.base_url + "/v1/completions", "POST", body, headers, timeout=120)[0]


@pytest.fixture(scope="module")
def launch(api_key: str) -> rendered.RouterLaunch:
    return rendered.router_launch(api_key)


@pytest.fixture(scope="module")
def workers(
    e2e_python: Path,
    tiny_model: Path,
    launch: rendered.RouterLaunch,
    cores: tuple[int, int],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[list[Server]]:
    started = []
    for index, core in enumerate(cores):
        home = tmp_path_factory.mktemp(f"home-routed-{index}")
        host = cpu_backend.Host(python=e2e_python, model_dir=tiny_model, home=home, port=free_port(), core=core)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **cpu_backend.adapt_env(launch.server.env, host)}
        server = Server(
            name=f"routed-{index}",
            argv=cpu_backend.adapt_command(launch.server, host),
            env=env,
            log=home / "server.log",
            base_url=f"http://127.0.0.1:{host.port}",
        )
        started.append(server)
    try:
        for server in started:
            server.start()
        for server in started:
            server.wait_healthy("/health", launch.server.startup_budget_seconds)
        yield started
    finally:
        for server in started:
            server.stop()


@pytest.fixture(scope="module")
def router(
    e2e_python: Path,
    launch: rendered.RouterLaunch,
    workers: list[Server],
    api_key: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    port, metrics_port = free_port(), free_port()
    argv = cpu_backend.adapt_router_command(
        launch.command, router_launcher(e2e_python), [w.base_url for w in workers], port, metrics_port, api_key
    )
    directory = tmp_path_factory.mktemp("router")
    server = Server(
        name="router",
        argv=argv,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        log=directory / "router.log",
        base_url=f"http://127.0.0.1:{port}",
        extra={"metrics": f"http://127.0.0.1:{metrics_port}/metrics"},
    )
    server.start()
    try:
        server.wait_healthy("/health", ROUTER_READY_S)
        yield server
    finally:
        server.stop()


def test_the_flag_table_is_the_installed_routers_help(e2e_python: Path) -> None:
    help_text = subprocess.run(
        [*router_launcher(e2e_python), "--help"], check=True, capture_output=True, text=True, timeout=60
    ).stdout
    options = help_text.split("options:", 1)[1]
    assert set(re.findall(r"^  (--[a-z0-9-]+)", options, re.M)) == router_flags(ROUTER_VERSION).flags


def test_the_router_accepts_the_rendered_command_line(router: Server) -> None:
    assert router.process is not None and router.process.poll() is None


def test_a_chat_completion_through_the_router_is_answered(router: Server, launch: rendered.RouterLaunch, api_key: str) -> None:
    body = {"model": launch.server.served_model_name, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
    status, answer = request(
        router.base_url + "/v1/chat/completions", "POST", body, {"Authorization": f"Bearer {api_key}"}, timeout=120
    )
    assert status == 200, answer
    assert json.loads(answer)["model"] == launch.server.served_model_name


def test_a_request_without_the_api_key_is_refused_through_the_router(router: Server, launch: rendered.RouterLaunch) -> None:
    """The router holds the key for its own calls to the servers (--api-key); a client without one must still
    be refused, or the router would open the servers to every pod that reaches it."""
    body = {"model": launch.server.served_model_name, "prompt": "hi", "max_tokens": 1}
    status, answer = request(router.base_url + "/v1/completions", "POST", body, timeout=60)
    assert status == 401, (status, answer)


def test_cache_aware_sends_prompts_sharing_a_long_prefix_to_one_server(
    router: Server, workers: list[Server], launch: rendered.RouterLaunch, api_key: str
) -> None:
    assert launch.policy == "cache_aware"
    before = per_worker(router.extra["metrics"], "vllm_router_processed_requests_total", workers)
    statuses = [completion(router, launch.server.served_model_name, api_key, f"{PREFIX} question {n}") for n in range(6)]
    after = per_worker(router.extra["metrics"], "vllm_router_processed_requests_total", workers)
    assert statuses == [200] * 6
    assert sorted(b - a for a, b in zip(before, after, strict=True)) == [0, 6], (before, after)


def landed_on(router: Server, workers: list[Server], launch: rendered.RouterLaunch, api_key: str, prompt: str) -> int:
    """The index of the server the router sent one completion to."""
    before = per_worker(router.extra["metrics"], "vllm_router_processed_requests_total", workers)
    assert completion(router, launch.server.served_model_name, api_key, prompt) == 200
    after = per_worker(router.extra["metrics"], "vllm_router_processed_requests_total", workers)
    moved = [index for index, (a, b) in enumerate(zip(before, after, strict=True)) if b > a]
    assert len(moved) == 1, (before, after)
    return moved[0]


@dataclass
class Holding:
    """One long completion in flight on `server` (the server HELD_PREFIX was first routed to)."""

    server: int
    thread: threading.Thread

    def still_running(self, router: Server, workers: list[Server]) -> bool:
        running = per_worker(router.extra["metrics"], "vllm_router_running_requests", workers)
        return self.thread.is_alive() and running[self.server] >= 1


@pytest.fixture(scope="class")
def holding(router: Server, workers: list[Server], launch: rendered.RouterLaunch, api_key: str) -> Iterator[Holding]:
    server = landed_on(router, workers, launch, api_key, f"{HELD_PREFIX} question 1")
    model = launch.server.served_model_name
    thread = threading.Thread(
        target=completion, args=(router, model, api_key, f"{HELD_PREFIX} long", HOLDING_TOKENS), daemon=True
    )
    thread.start()
    held = Holding(server, thread)
    while thread.is_alive() and not held.still_running(router, workers):
        time.sleep(0.2)
    assert held.still_running(router, workers), "the long completion ended before the router counted it"
    yield held
    thread.join(timeout=600)


class TestWhileOneServerIsBusy:
    """The router's cache_aware policy picks by the prompt's token ids, which it gets from the servers'
    /v1/completions/render (on with --enable-scale-out, plan/routing.py): a prefix it has seen goes back to its
    server though that server is the busier one (below --balance-abs-threshold), a prefix it has not seen goes to
    the least loaded server. Without the render routes every request is the second kind (docs/routing.md)."""

    def test_a_prompt_repeating_a_cached_prefix_goes_to_that_busy_server(
        self, router: Server, workers: list[Server], launch: rendered.RouterLaunch, api_key: str, holding: Holding
    ) -> None:
        server = landed_on(router, workers, launch, api_key, f"{HELD_PREFIX} question 2")
        assert holding.still_running(router, workers), "the long completion ended: the server was not busy"
        assert server == holding.server

    def test_a_prompt_with_a_new_prefix_goes_to_the_idle_server(
        self, router: Server, workers: list[Server], launch: rendered.RouterLaunch, api_key: str, holding: Holding
    ) -> None:
        server = landed_on(router, workers, launch, api_key, f"{NEW_PREFIX} question 1")
        assert holding.still_running(router, workers), "the long completion ended: the server was not busy"
        assert server != holding.server


def test_the_router_had_every_prompts_token_ids_from_the_servers(router: Server) -> None:
    """After the prefix tests: vllm-router counts a request whose render call failed as missing_tokens."""
    decisions = samples(get(router.extra["metrics"])[1].decode(), "vllm_router_prefix_routing_decisions_total")
    outcomes: dict[str, float] = {}
    for labels, value in decisions.items():
        if match := re.search(r'outcome="([^"]*)"', labels):
            outcomes[match[1]] = outcomes.get(match[1], 0) + value
    assert outcomes.get("missing_tokens", 0) == 0, decisions
    assert outcomes.get("prefix_hit", 0) > 0, decisions


class Burst:
    """Completions sent one after another until stopped: (monotonic start, status) of each."""

    def __init__(self, router: Server, model: str, api_key: str) -> None:
        self.sent: list[tuple[float, int]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(router, model, api_key), daemon=True)

    def _run(self, router: Server, model: str, api_key: str) -> None:
        n = 0
        while not self.stop.is_set():
            started = time.monotonic()
            self.sent.append((started, completion(router, model, api_key, f"burst {n} {n * 7919}")))
            n += 1

    def started_after(self, moment: float) -> list[int]:
        return [status for started, status in list(self.sent) if started > moment]


def test_a_killed_server_loses_no_request_sent_after_the_router_marked_it_down(
    router: Server, workers: list[Server], launch: rendered.RouterLaunch, api_key: str
) -> None:
    burst = Burst(router, launch.server.served_model_name, api_key)
    burst.thread.start()
    while len(burst.sent) < 3:
        time.sleep(0.2)
    workers[1].stop()  # SIGTERM, then SIGKILL to its process group
    deadline, marked_down = time.monotonic() + MARKED_DOWN_S, None
    while marked_down is None and time.monotonic() < deadline:
        health = per_worker(router.extra["metrics"], "vllm_router_worker_health", workers)
        marked_down = time.monotonic() if health[1] == 0 and health[0] == 1 else None
        time.sleep(0.5)
    assert marked_down is not None, f"the router never marked the killed server down:\n{router.log_tail()}"
    while len(burst.started_after(marked_down)) < AFTER_MARK + 1:
        time.sleep(0.2)
    burst.stop.set()
    burst.thread.join(timeout=180)
    assert burst.started_after(marked_down)[:AFTER_MARK] == [200] * AFTER_MARK
