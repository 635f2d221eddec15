"""smoke/groups_rolled.py, the rollout gate's script, against an API server that answers as the LWS controller
updates the object's status during a rolling update (kubernetes-sigs/lws updateStatus / updateConditions:
observedGeneration, updatedReplicas, readyReplicas and the Available condition are written together). The real
script in a subprocess, over HTTP; the fake server checks the path and the Bearer token."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.factories import REPO
from tests.http_json import send_json

SCRIPT = REPO / "smoke" / "groups_rolled.py"
NAMESPACE, NAME, TOKEN = "vllm-405b", "vllm-405b-group", "gate-token"
PATH = f"/apis/leaderworkerset.x-k8s.io/v1/namespaces/{NAMESPACE}/leaderworkersets/{NAME}"


def lws(generation: int, observed: int | None, updated: int, ready: int, available: bool) -> dict[str, Any]:
    """The object of two groups; `observed` None: a controller that writes no observedGeneration."""
    condition = {"type": "Available", "status": "True" if available else "False"}
    status: dict[str, Any] = {"updatedReplicas": updated, "readyReplicas": ready, "conditions": [condition]}
    if observed is not None:
        status["observedGeneration"] = observed
    return {"metadata": {"name": NAME, "generation": generation}, "spec": {"replicas": 2}, "status": status}


# An update to generation 3 of two groups, as the gate's polls see it: the status of generation 2 right after the
# apply, the controller's first pass, the first group replaced, then both.
ROLLING = [
    (200, lws(3, 2, 2, 2, True)),
    (200, lws(3, 3, 0, 1, False)),
    (200, lws(3, 3, 1, 1, False)),
    (200, lws(3, 3, 2, 2, True)),
]


class FakeApiServer:
    """Answers each GET of the object with the next (status, body) of `answers`, then repeats the last one."""

    def __init__(self, answers: list[tuple[int, Any]]) -> None:
        self.answers = list(answers)
        self.seen: list[tuple[str, str | None]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake.seen.append((self.path, self.headers.get("Authorization")))
                code, body = fake.answers.pop(0) if len(fake.answers) > 1 else fake.answers[0]
                if self.path != PATH or self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    code, body = 401, {"kind": "Status", "message": "Unauthorized"}
                send_json(self, code, json.dumps(body).encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    return path


def run_gate(answers: list[tuple[int, Any]], token_file: Path) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    fake = FakeApiServer(answers)
    try:
        command = [sys.executable, str(SCRIPT), "--namespace", NAMESPACE, "--name", NAME, "--poll-seconds", "0.01"]
        command += ["--api-url", fake.url, "--token-file", str(token_file)]
        return subprocess.run(command, capture_output=True, text=True, timeout=60), fake.seen
    finally:
        fake.close()


@pytest.fixture(scope="module")
def rolled(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    path = tmp_path_factory.mktemp("gate") / "token"
    path.write_text(TOKEN)
    return run_gate(ROLLING, path)


def polls_until_done(answers: list[dict[str, Any]], token_file: Path) -> int:
    """How many times the gate read the object before it exited 0; the last answer is done."""
    result, seen = run_gate([(200, answer) for answer in answers], token_file)
    assert result.returncode == 0, result.stdout + result.stderr
    return len(seen)


def test_the_status_of_the_previous_generation_does_not_end_the_wait_though_it_says_available(token_file: Path) -> None:
    assert polls_until_done([lws(3, 2, 2, 2, True), lws(3, 3, 2, 2, True)], token_file) == 2


def test_a_generation_seen_with_every_group_updated_and_ready_and_available_ends_the_wait_at_once(
    token_file: Path,
) -> None:
    assert polls_until_done([lws(3, 3, 2, 2, True)], token_file) == 1


def test_groups_ready_but_not_all_updated_do_not_end_the_wait(token_file: Path) -> None:
    assert polls_until_done([lws(3, 3, 1, 2, True), lws(3, 3, 2, 2, True)], token_file) == 2


def test_a_gate_over_a_rolling_update_exits_zero_once_the_last_group_is_replaced(
    rolled: tuple[subprocess.CompletedProcess[str], list[Any]],
) -> None:
    result, seen = rolled
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(seen) == len(ROLLING)


def test_the_gate_prints_each_step_of_the_rollout_and_the_last_as_ok(
    rolled: tuple[subprocess.CompletedProcess[str], list[Any]],
) -> None:
    lines = rolled[0].stdout.splitlines()
    assert lines[-1] == "OK generation 3 (observed 3): 2 of 2 groups updated, 2 ready, Available=True"
    assert "generation 3 (observed 3): 1 of 2 groups updated, 1 ready, Available=False" in lines


def test_the_gate_reads_the_one_object_with_its_account_token(
    rolled: tuple[subprocess.CompletedProcess[str], list[Any]],
) -> None:
    assert set(rolled[1]) == {(PATH, f"Bearer {TOKEN}")}


def test_without_observed_generation_a_done_status_must_hold_at_two_polls_in_a_row(token_file: Path) -> None:
    result, seen = run_gate([(200, lws(3, None, 2, 2, True))], token_file)
    assert (result.returncode, len(seen)) == (0, 2), result.stdout


def test_without_observed_generation_a_stale_done_status_the_controller_then_rewrites_does_not_end_the_wait(
    token_file: Path,
) -> None:
    stale, rolling, done = lws(3, None, 2, 2, True), lws(3, None, 0, 1, False), lws(3, None, 2, 2, True)
    result, seen = run_gate([(200, stale), (200, rolling), (200, done)], token_file)
    assert (result.returncode, len(seen)) == (0, 4), result.stdout


def test_a_gate_its_role_does_not_cover_fails_at_once_naming_the_answer(token_file: Path) -> None:
    forbidden = {"kind": "Status", "message": 'leaderworkersets.leaderworkerset.x-k8s.io "vllm-405b-group" is forbidden'}
    result, seen = run_gate([(403, forbidden)], token_file)
    assert (result.returncode, len(seen)) == (1, 1)
    assert "FAIL the API server answered 403" in result.stdout and "is forbidden" in result.stdout


def test_a_gate_retries_through_an_api_server_that_is_restarting(token_file: Path) -> None:
    result, _ = run_gate([(503, {"message": "unavailable"}), *ROLLING[-1:]], token_file)
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines()[0].startswith("retrying: HTTP Error 503")


def test_an_oversized_token_file_fails_the_gate_unread(tmp_path: Path) -> None:
    huge = tmp_path / "token"
    huge.write_text("x" * (64 * 1024 + 1))
    result, seen = run_gate(ROLLING[-1:], huge)
    assert (result.returncode, seen) == (1, [])
    assert f"FAIL {huge} is larger than 65536 bytes" in result.stdout


def test_without_an_api_url_outside_a_pod_the_gate_exits_two_naming_the_flag() -> None:
    command = [sys.executable, str(SCRIPT), "--namespace", NAMESPACE, "--name", NAME]
    result = subprocess.run(command, capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
    assert result.returncode == 2 and "--api-url is required" in result.stderr
