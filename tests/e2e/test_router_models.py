"""Several names behind the one router endpoint, on real components: a base model and a tiny LoRA adapter served
by one CPU vLLM server (the rendered command of a stack with lora.adapters), and two stacks' servers on one
shared endpoint (routing.endpoint) behind the router in IGW mode (the rendered router command).

The adapter is written by tests/e2e/tiny_lora.py into the model cache's snapshot folder the render names, as
the download would. The servers run one at a time per core; the module stops every process it started.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import cpu_backend, rendered
from tests.e2e.processes import Server, free_port, get, request
from tests.e2e.test_router import ROUTER_READY_S, router_launcher

pytestmark = pytest.mark.e2e

E2E_DIR = Path(__file__).resolve().parent
ADAPTER_TIMEOUT_S = 120
UNKNOWN = "no-such-model"


def start_server(name: str, launch: rendered.Launch, python: Path, model: Path, home: Path, core: int) -> Server:
    host = cpu_backend.Host(python=python, model_dir=model, home=home, port=free_port(), core=core)
    return cpu_backend.start_server(name, launch, host)


def start_router(python: Path, command: list[str], workers: list[Server], api_key: str, directory: Path) -> Server:
    port, metrics_port = free_port(), free_port()
    argv = cpu_backend.adapt_router_command(
        command, router_launcher(python), [w.base_url for w in workers], port, metrics_port, api_key
    )
    router = Server(
        name="router",
        argv=argv,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        log=directory / "router.log",
        base_url=f"http://127.0.0.1:{port}",
    )
    router.start()
    return router


def completion(router: Server, model: str, api_key: str) -> tuple[int, dict[str, object]]:
    body = {"model": model, "prompt": cpu_backend.PROMPT, "max_tokens": 2, "ignore_eos": True}
    status, answer = request(
        router.base_url + "/v1/completions", "POST", body, {"Authorization": f"Bearer {api_key}"}, timeout=120
    )
    try:
        return status, json.loads(answer)
    except ValueError:
        return status, {"raw": answer.decode(errors="replace")}


def served_names(router: Server, api_key: str) -> set[str]:
    status, answer = get(router.base_url + "/v1/models", headers={"Authorization": f"Bearer {api_key}"}, timeout=60)
    assert status == 200, answer
    return {model["id"] for model in json.loads(answer)["data"]}


# --- a base model and its LoRA adapter, one server, the rendered (regular-mode) router in front ---


@pytest.fixture(scope="module")
def lora_launch(api_key: str) -> rendered.RouterLaunch:
    return rendered.router_launch(api_key, rendered.LORA_CHANGES)


@pytest.fixture(scope="module")
def lora_router(
    e2e_python: Path,
    tiny_model: Path,
    lora_launch: rendered.RouterLaunch,
    cores: tuple[int, int],
    api_key: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("home-lora")
    snapshot = cpu_backend.moved_home(rendered.lora_snapshot(), home)
    subprocess.run(
        [str(e2e_python), str(E2E_DIR / "tiny_lora.py"), str(snapshot)],
        check=True,
        capture_output=True,
        timeout=ADAPTER_TIMEOUT_S,
    )
    server = start_server("lora", lora_launch.server, e2e_python, tiny_model, home, cores[0])
    router: Server | None = None
    try:
        server.wait_healthy("/health", lora_launch.server.startup_budget_seconds)
        router = start_router(e2e_python, lora_launch.command, [server], api_key, home)
        router.wait_healthy("/health", ROUTER_READY_S)
        yield router
    finally:
        if router is not None:
            router.stop()
        server.stop()


def test_the_router_lists_the_base_model_and_the_adapter(
    lora_router: Server, lora_launch: rendered.RouterLaunch, api_key: str
) -> None:
    assert {lora_launch.server.served_model_name, rendered.LORA_ADAPTER} <= served_names(lora_router, api_key)


def test_the_base_model_and_the_adapter_are_each_answered_through_the_router_by_name(
    lora_router: Server, lora_launch: rendered.RouterLaunch, api_key: str
) -> None:
    names = [lora_launch.server.served_model_name, rendered.LORA_ADAPTER]
    answers = [completion(lora_router, name, api_key) for name in names]
    assert [(status, answer.get("model")) for status, answer in answers] == [(200, name) for name in names]


def test_an_unknown_name_gets_a_404_that_names_it(lora_router: Server, api_key: str) -> None:
    status, answer = completion(lora_router, UNKNOWN, api_key)
    assert status == 404 and UNKNOWN in json.dumps(answer), answer


# --- two stacks on one endpoint: the router in IGW mode routes by model ---


@pytest.fixture(scope="module")
def endpoint_router(
    e2e_python: Path,
    tiny_model: Path,
    cores: tuple[int, int],
    api_key: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Server, list[str]]]:
    owner = rendered.router_launch(api_key, rendered.ENDPOINT_CHANGES)
    member = rendered.member_launch(api_key)
    assert "--enable-igw" in owner.command
    homes = [tmp_path_factory.mktemp(f"home-endpoint-{n}") for n in range(2)]
    servers = [
        start_server("endpoint-owner", owner.server, e2e_python, tiny_model, homes[0], cores[0]),
        start_server("endpoint-member", member, e2e_python, tiny_model, homes[1], cores[1]),
    ]
    router: Server | None = None
    try:
        for server in servers:
            server.wait_healthy("/health", owner.server.startup_budget_seconds)
        router = start_router(e2e_python, owner.command, servers, api_key, homes[0])
        router.wait_healthy("/list_workers", ROUTER_READY_S)
        for server in servers:  # IGW mode ignores --worker-urls (cpu_backend.py): register as discovery would
            status, answer = request(router.base_url + "/workers", "POST", {"url": server.base_url}, timeout=60)
            assert status == 200, answer
        yield router, [owner.server.served_model_name, member.served_model_name]
    finally:
        if router is not None:
            router.stop()
        for server in servers:
            server.stop()


def test_each_stack_s_model_is_answered_by_name_through_the_one_endpoint(
    endpoint_router: tuple[Server, list[str]], api_key: str
) -> None:
    router, names = endpoint_router
    answers = [completion(router, name, api_key) for name in names * 3]
    assert [(status, answer.get("model")) for status, answer in answers] == [(200, name) for name in names * 3]


def test_an_unknown_name_on_the_endpoint_gets_a_404_that_names_it(
    endpoint_router: tuple[Server, list[str]], api_key: str
) -> None:
    status, answer = completion(endpoint_router[0], UNKNOWN, api_key)
    assert status == 404 and UNKNOWN in json.dumps(answer), answer
