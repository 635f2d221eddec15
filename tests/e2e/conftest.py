"""Fixtures of the e2e tier: the tiny model, the two rendered servers and a real Prometheus.

Both servers start together at the first request for either (their start-up dominates the tier's time), each
on its own core; the Docker one is stopped when its tests are done, so Prometheus gets that core. Every server
is stopped through its process group at the end of the session, also when a test fails.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import cpu_backend, paths, prometheus, rendered
from tests.e2e.processes import Server, free_port
from tests.e2e.store import Store, running_store

E2E_DIR = Path(__file__).resolve().parent
MODEL_TIMEOUT_S = 180
PROMETHEUS_READY_S = 60
STARTED: list[Server] = []  # for the summary line: how long each server took to turn healthy


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for server in STARTED:
        budget = server.extra["launch"].startup_budget_seconds
        taken = "never healthy" if server.healthy_after is None else f"healthy after {server.healthy_after:.0f} s"
        terminalreporter.write_line(f"e2e: {server.name} server {taken} (rendered budget {budget} s)")


@pytest.fixture(scope="session")
def e2e_python() -> Path:
    missing = paths.missing_dependencies()
    if missing:
        reason = "; ".join(missing) + f" ({paths.SETUP_HINT})"
        if os.environ.get("VLLM_SERVING_REQUIRE_E2E") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return paths.e2e_python()


@pytest.fixture(scope="session")
def tiny_model(e2e_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tiny-model")
    subprocess.run(
        [str(e2e_python), str(E2E_DIR / "tiny_model.py"), str(out)], check=True, capture_output=True, timeout=MODEL_TIMEOUT_S
    )
    return out


@pytest.fixture(scope="module")
def store(e2e_python: Path, tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """The tiny model in an S3-compatible store (tests/e2e/store.py), one per module that reads it."""
    with running_store(e2e_python, tiny_model, tmp_path_factory.mktemp("s3-store")) as running:
        yield running


@pytest.fixture(scope="session")
def api_key() -> str:
    return "sk-e2e-" + secrets.token_hex(8)


@pytest.fixture(scope="session")
def cores() -> tuple[int, int]:
    """(server core, second core): the Kubernetes server's core, and the Docker server's, later Prometheus'."""
    available = sorted(os.sched_getaffinity(0))
    return available[-1], available[0]


def _server(name: str, launch: rendered.Launch, python: Path, model: Path, home: Path, core: int) -> Server:
    host = cpu_backend.Host(python=python, model_dir=model, home=home, port=free_port(), core=core)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **cpu_backend.adapt_env(launch.env, host)}
    return Server(
        name=name,
        argv=cpu_backend.adapt_command(launch, host),
        env=env,
        log=home / "server.log",
        base_url=f"http://127.0.0.1:{host.port}",
        extra={"launch": launch},
    )


@pytest.fixture(scope="session")
def servers(
    e2e_python: Path, tiny_model: Path, api_key: str, cores: tuple[int, int], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Server]]:
    started = {
        "kubernetes": _server(
            "kubernetes",
            rendered.kubernetes_launch(api_key),
            e2e_python,
            tiny_model,
            tmp_path_factory.mktemp("home-kubernetes"),
            cores[0],
        ),
        "docker": _server(
            "docker", rendered.docker_launch(api_key), e2e_python, tiny_model, tmp_path_factory.mktemp("home-docker"), cores[1]
        ),
    }
    try:
        for server in started.values():
            server.start()
            STARTED.append(server)
        yield started
    finally:
        for server in started.values():
            server.stop()


def _healthy(server: Server) -> Server:
    server.wait_healthy("/health", server.extra["launch"].startup_budget_seconds)
    return server


@pytest.fixture(scope="session")
def kubernetes_server(servers: dict[str, Server]) -> Server:
    return _healthy(servers["kubernetes"])


@pytest.fixture(scope="module")
def docker_server(servers: dict[str, Server]) -> Iterator[Server]:
    """Stopped after its module, so that Prometheus later has the second core to itself."""
    try:
        yield _healthy(servers["docker"])
    finally:
        servers["docker"].stop()


@pytest.fixture(scope="session")
def monitoring() -> rendered.Monitoring:
    return rendered.monitoring()


@pytest.fixture(scope="session")
def prometheus_server(
    kubernetes_server: Server,
    servers: dict[str, Server],
    monitoring: rendered.Monitoring,
    cores: tuple[int, int],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    servers["docker"].stop()  # its core is Prometheus' now (a no-op when its module already stopped it)
    assert kubernetes_server.process is not None
    cpu_backend.lower_priority(kubernetes_server.process.pid)
    directory = tmp_path_factory.mktemp("prometheus")
    target = kubernetes_server.base_url.removeprefix("http://")
    config = prometheus.write_config(directory, monitoring, target)
    port = free_port()
    server = Server(
        name="prometheus",
        argv=prometheus.prometheus_argv(config, directory / "data", port, cores[1]),
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        log=directory / "prometheus.log",
        base_url=f"http://127.0.0.1:{port}",
    )
    server.start()
    try:
        server.wait_healthy("/-/ready", PROMETHEUS_READY_S)
        yield server
    finally:
        server.stop()
