"""delivery.mode object_storage on a real S3-compatible store: moto's server (requirements-e2e.txt) holds the tiny
model under s3://models/tiny/ (tests/e2e/bucket.py fills it, then switches moto's authentication on), and vLLM's
CPU build runs the rendered server container's command, args and env: the s3:// model with `--load-format
runai_streamer`, AWS_ENDPOINT_URL and RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING from the render, and the credentials
Secret's two keys as the env its envFrom gives the container. A second start of the same render with a wrong secret
key must exit with S3's refusal well inside the startup probe, not hang until the probe kills it.

Both servers start together, one per core (the wrong-key one exits within seconds); the module stops every process
it started.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from preflight.startup_phases import check_phases, parse_phases
from tests.e2e import cpu_backend, rendered
from tests.e2e.processes import Server, free_port, get, request
from tests.e2e.store import Store

pytestmark = pytest.mark.e2e

# A failed start must end well inside the probe's budget (a hang would surface only when the probe kills the pod).
FAIL_FAST_SHARE = 0.5
# moto's answer to a request signed with the wrong secret (S3's own code for it).
SIGNATURE_REFUSED = "SignatureDoesNotMatch"
# vLLM's tqdm bar over the tensors the streamer hands it (vllm/model_executor/model_loader/weight_utils.py
# runai_safetensors_weights_iterator), and the streamer's own summary (runai_model_streamer 0.17.1
# safetensors_streamer.py, printed with the rendered RUNAI_STREAMER_LOG_TO_STDERR=1).
STREAMED = "Loading safetensors using Runai Model Streamer: 100% Completed"
STREAM_SUMMARY = "[RunAI Streamer] Overall time to stream"


def start(name: str, launch: rendered.Launch, secret: dict[str, str], python: Path, home: Path, core: int) -> Server:
    """The rendered container with its envFrom Secret's keys (cpu_backend.py for the rest; the model stays the
    rendered s3:// URI)."""
    assert launch.env_from == (rendered.BUCKET_SECRET,), launch.env_from
    host = cpu_backend.Host(python=python, model_dir=home / "unused", home=home, port=free_port(), core=core)
    return cpu_backend.start_server(name, launch, host, secret, {"launch": launch})


@pytest.fixture(scope="module")
def bucket_servers(
    e2e_python: Path, store: Store, api_key: str, cores: tuple[int, int], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Server]]:
    launch = rendered.object_storage_launch(api_key, store.server.base_url)
    wrong = store.credentials | {"AWS_SECRET_ACCESS_KEY": "wrong-" + store.credentials["AWS_SECRET_ACCESS_KEY"][6:]}
    started: dict[str, Server] = {}
    try:
        for name, secret, core in (("streamed", store.credentials, cores[1]), ("wrong-key", wrong, cores[0])):
            started[name] = start(name, launch, secret, e2e_python, tmp_path_factory.mktemp(f"home-{name}"), core)
        yield started
    finally:
        for server in started.values():
            server.stop()


@pytest.fixture(scope="module")
def streamed(bucket_servers: dict[str, Server]) -> Server:
    server = bucket_servers["streamed"]
    server.wait_healthy("/health", server.extra["launch"].startup_budget_seconds)
    return server


def test_the_rendered_object_storage_server_turns_healthy_within_the_startup_probe_budget(streamed: Server) -> None:
    budget = streamed.extra["launch"].startup_budget_seconds  # failureThreshold x periodSeconds
    assert streamed.healthy_after is not None and streamed.healthy_after <= budget
    assert get(streamed.base_url + "/health")[0] == 200


def test_the_streamed_server_answers_a_completion_under_the_served_model_name(streamed: Server, api_key: str) -> None:
    name = streamed.extra["launch"].served_model_name
    body = {"model": name, "prompt": cpu_backend.PROMPT, "max_tokens": 2, "ignore_eos": True}
    status, answer = request(
        streamed.base_url + "/v1/completions", "POST", body, {"Authorization": f"Bearer {api_key}"}, timeout=120
    )
    assert status == 200 and json.loads(answer)["model"] == name, answer


def test_the_weights_came_through_the_streamer_from_the_store(streamed: Server, store: Store) -> None:
    log = streamed.log.read_text(errors="replace")
    assert STREAMED in log and STREAM_SUMMARY in log, streamed.log_tail()
    # moto's access log: the streamer's ranged reads (206) of the checkpoint, e.g.
    # `"GET http://127.0.0.1:PORT/models/tiny/model.safetensors HTTP/1.1" 206 -` (colour codes around the request)
    checkpoint = re.escape(rendered.BUCKET_URI.removeprefix("s3://") + "model.safetensors")
    assert re.search(rf'GET \S*/{checkpoint} HTTP/1\.1\S*" 206', store.server.log.read_text(errors="replace"))


def test_the_phase_report_reads_the_weight_load_from_the_streamed_servers_log(streamed: Server, store: Store) -> None:
    _cfg, report = rendered.object_storage_stack(store.server.base_url)
    assert report.startup is not None
    logged = parse_phases(streamed.log.read_text(errors="replace"))
    checks = {check.phase: check for check in check_phases(report.startup, logged)}
    assert logged.weight_load is not None and checks["weight_load"].logged == logged.weight_load, streamed.log_tail()


def test_a_wrong_secret_key_ends_the_start_with_s3s_refusal_well_inside_the_startup_probe(
    bucket_servers: dict[str, Server],
) -> None:
    server = bucket_servers["wrong-key"]
    assert server.process is not None
    limit = server.extra["launch"].startup_budget_seconds * FAIL_FAST_SHARE
    try:
        code = server.process.wait(timeout=max(0.0, server.started_at + limit - time.monotonic()))
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running {limit:.0f} s after launch:\n{server.log_tail()}")
    assert code != 0 and SIGNATURE_REFUSED in server.log.read_text(errors="replace"), server.log_tail()
