"""A stand-in API server for smoke/rolled_out.py, the rollout gate's script: it answers for one workload as its
controller updates the status during a rolling update (for a LeaderWorkerSet kubernetes-sigs/lws updateStatus /
updateConditions: observedGeneration, updatedReplicas, readyReplicas and the Available condition are written
together), and lists pods (and ReplicaSets) as the kubelet and the controllers leave them. It checks the paths,
the label selectors and the Bearer token; `run_gate` (a LeaderWorkerSet) and `run_workload_gate` (any kind) run
the real script against it."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.factories import REPO
from tests.http_json import send_json

SCRIPT = REPO / "smoke" / "rolled_out.py"
NAMESPACE, NAME, TOKEN = "vllm-405b", "vllm-405b-group", "gate-token"


def object_path(namespace: str = NAMESPACE, name: str = NAME) -> str:
    return f"/apis/leaderworkerset.x-k8s.io/v1/namespaces/{namespace}/leaderworkersets/{name}"


def pods_path(namespace: str = NAMESPACE) -> str:
    return f"/api/v1/namespaces/{namespace}/pods"


PATH, PODS = object_path(), pods_path()


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


def pod_list(*pods: dict[str, Any], more: str = "") -> tuple[int, dict[str, Any]]:
    return 200, {"kind": "PodList", "metadata": {"continue": more} if more else {}, "items": list(pods)}


NO_PODS = [pod_list()]


def next_answer(answers: list[tuple[int, Any]]) -> tuple[int, Any]:
    return answers.pop(0) if len(answers) > 1 else answers[0]


# A route: a path and the labelSelector its query must carry (None: no query), answered in turn by its list.
Routes = dict[tuple[str, str | None], list[tuple[int, Any]]]


class FakeApiServer:
    """Answers each GET of a route with the next (status, body) of its list, repeating the last one; 404 for any
    other path or selector, 401 without the token."""

    def __init__(self, routes: Routes) -> None:
        self.routes = {route: list(answers) for route, answers in routes.items()}
        self.seen: list[tuple[str, str | None]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake.seen.append((self.path, self.headers.get("Authorization")))
                path, _, query = self.path.partition("?")
                selector = urllib.parse.parse_qs(query).get("labelSelector", [None])[0] if query else None
                answers = fake.routes.get((path, selector))
                code, body = next_answer(answers) if answers else (404, {"kind": "Status"})
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    code, body = 401, {"kind": "Status", "message": "Unauthorized"}
                send_json(self, code, json.dumps(body).encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        # A short poll: shutdown() waits for the loop to see its flag (0.5 s by default, in every test).
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    return path


def run_workload_gate(
    kind: str, name: str, routes: Routes, token_file: Path, *flags: str, namespace: str = NAMESPACE
) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    fake = FakeApiServer(routes)
    try:
        command = [sys.executable, str(SCRIPT), "--namespace", namespace, "--kind", kind, "--name", name]
        command += ["--poll-seconds", "0.01", "--api-url", fake.url, "--token-file", str(token_file), *flags]
        return subprocess.run(command, capture_output=True, text=True, timeout=60), fake.seen
    finally:
        fake.close()


def run_gate(
    answers: list[tuple[int, Any]],
    token_file: Path,
    pods: list[tuple[int, Any]] = NO_PODS,
    *flags: str,
    namespace: str = NAMESPACE,
    name: str = NAME,
) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    """The gate of the LeaderWorkerSet `name`: `answers` for the object, `pods` for its groups' pods."""
    routes: Routes = {
        (object_path(namespace, name), None): answers,
        (pods_path(namespace), f"leaderworkerset.sigs.k8s.io/name={name}"): pods,
    }
    return run_workload_gate("LeaderWorkerSet", name, routes, token_file, *flags, namespace=namespace)


def object_reads(seen: list[tuple[str, str | None]]) -> int:
    return sum(path == PATH for path, _ in seen)
