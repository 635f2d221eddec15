"""A replica going away (a rolling update, a scale-down, a node drain): after the preStop sleep the kubelet sends
the container's main process SIGTERM, and SIGKILL once the grace period is over. vLLM aborts every answer in flight
at SIGTERM unless `--shutdown-timeout` says how long to drain (docs/sources.md §A.7); the render sets it from the
grace period (plan/vllm_args.py drain_seconds). This runs the rendered Kubernetes command and signals it so."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from plan.vllm_args import ENGINE_TEARDOWN_SECONDS
from tests.e2e import cpu_backend, rendered
from tests.e2e.processes import Server, free_port
from tests.e2e.sigterm import Signalled, sigterm_mid_answer

pytestmark = pytest.mark.e2e

TOKENS = 3000  # generated one by one on one CPU core: the answer is still running when SIGTERM comes


def _drain_seconds(server: Server) -> int:
    args = server.extra["launch"].args
    return int(args[args.index("--shutdown-timeout") + 1])


@pytest.fixture(scope="module")
def drained(
    e2e_python: Path, tiny_model: Path, api_key: str, cores: tuple[int, int], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Signalled]:
    launch = rendered.kubernetes_launch(api_key)
    home = tmp_path_factory.mktemp("home-draining")
    host = cpu_backend.Host(python=e2e_python, model_dir=tiny_model, home=home, port=free_port(), core=cores[1])
    server = cpu_backend.start_server("draining", launch, host, extra={"launch": launch})
    try:
        server.wait_healthy("/health", launch.startup_budget_seconds)
        yield sigterm_mid_answer(server, server, api_key, TOKENS, _drain_seconds(server) + ENGINE_TEARDOWN_SECONDS)
    finally:
        server.stop()


def test_the_answer_was_still_running_when_sigterm_came(drained: Signalled) -> None:
    assert drained.in_flight_at_sigterm


def test_an_answer_in_flight_at_sigterm_comes_back_whole(drained: Signalled) -> None:
    assert drained.whole(TOKENS), drained.body[:500]


def test_the_engine_drained_the_answer_instead_of_aborting_it(drained: Signalled) -> None:
    assert "[shutdown] EngineCore: draining in-flight requests count=1" in drained.log, drained.log[-3000:]


def test_the_server_exits_by_itself_within_the_drain_and_teardown_the_grace_period_allows(drained: Signalled) -> None:
    assert drained.exit_code is not None, drained.log[-3000:]
