"""smoke/rolled_out.py waits for a LeaderWorkerSet's rolling update: the real script in a subprocess against
tests/gate_api.py's stand-in API server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.gate_api import NAME, NAMESPACE, NO_PODS, PATH, PODS, ROLLING, SCRIPT, TOKEN, lws, object_reads, run_gate, token_file

__all__ = ["token_file"]  # the fixture, imported for pytest


@pytest.fixture(scope="module")
def rolled(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    path = tmp_path_factory.mktemp("gate") / "token"
    path.write_text(TOKEN)
    return run_gate(ROLLING, path)


def polls_until_done(answers: list[dict[str, Any]], token_file: Path) -> int:
    """How many times the gate read the object before it exited 0; the last answer is done."""
    result, seen = run_gate([(200, answer) for answer in answers], token_file)
    assert result.returncode == 0, result.stdout + result.stderr
    return object_reads(seen)


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
    assert object_reads(seen) == len(ROLLING)


def test_the_gate_prints_each_step_of_the_rollout_and_the_last_as_ok(
    rolled: tuple[subprocess.CompletedProcess[str], list[Any]],
) -> None:
    lines = rolled[0].stdout.splitlines()
    assert lines[-1] == "OK generation 3 (observed 3): 2 of 2 groups updated, 2 ready, Available=True"
    assert "generation 3 (observed 3): 1 of 2 groups updated, 1 ready, Available=False" in lines


def test_the_gate_reads_the_one_object_and_its_groups_pods_with_its_account_token(
    rolled: tuple[subprocess.CompletedProcess[str], list[Any]],
) -> None:
    reads = {(path.partition("?")[0], token) for path, token in rolled[1]}
    assert reads == {(PATH, f"Bearer {TOKEN}"), (PODS, f"Bearer {TOKEN}")}


def test_the_gate_reads_no_pods_once_the_rollout_is_done(token_file: Path) -> None:
    _, seen = run_gate(ROLLING[-1:], token_file)
    assert [path for path, _ in seen] == [PATH]


def test_without_observed_generation_a_done_status_must_hold_at_two_polls_in_a_row(token_file: Path) -> None:
    result, seen = run_gate([(200, lws(3, None, 2, 2, True))], token_file)
    assert (result.returncode, object_reads(seen)) == (0, 2), result.stdout


def test_without_observed_generation_a_stale_done_status_the_controller_then_rewrites_does_not_end_the_wait(
    token_file: Path,
) -> None:
    stale, rolling, done = lws(3, None, 2, 2, True), lws(3, None, 0, 1, False), lws(3, None, 2, 2, True)
    result, seen = run_gate([(200, stale), (200, rolling), (200, done)], token_file)
    assert (result.returncode, object_reads(seen)) == (0, 4), result.stdout


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
    command = [sys.executable, str(SCRIPT), "--namespace", NAMESPACE, "--kind", "LeaderWorkerSet", "--name", NAME]
    result = subprocess.run(command, capture_output=True, text=True, timeout=30, env={"PATH": "/usr/bin:/bin"})
    assert result.returncode == 2 and "--api-url is required" in result.stderr


def test_an_api_server_that_gives_no_usable_answer_for_the_window_fails_the_gate_naming_the_policy(
    token_file: Path,
) -> None:
    result, seen = run_gate([(503, {"message": "unavailable"})], token_file, NO_PODS, "--unreachable-seconds", "0.2")
    assert result.returncode == 1 and len(seen) >= 2, result.stdout  # not at the first failure
    line = result.stdout.splitlines()[-1]
    assert line.startswith("FAIL no usable answer from the API server for ")
    assert "s (HTTP Error 503" in line and "NetworkPolicy egress" in line
