"""An S3-compatible store holding the tiny model: moto's server (requirements-e2e.txt), filled by tests/e2e/bucket.py
under rendered.BUCKET_URI, with authentication on once it is filled. Used by the object-storage tests (a Secret's
key) and the EKS Pod Identity tests (a role session the agent hands out)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.e2e import rendered
from tests.e2e.processes import Server, free_port

E2E_DIR = Path(__file__).resolve().parent
STORE_READY_S = 60
FILL_TIMEOUT_S = 120


@dataclass(frozen=True)
class Store:
    server: Server
    credentials: dict[str, str]  # the Secret's keys: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
    role_session: dict[str, str]  # an assumed role's AccessKeyId, SecretAccessKey and Token


@contextmanager
def running_store(e2e_python: Path, tiny_model: Path, directory: Path) -> Iterator[Store]:
    """moto's server on a free port, the tiny model in its bucket; stopped on exit."""
    port = free_port()
    server = Server(
        name="s3-store",
        argv=[str(e2e_python), "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        log=directory / "moto.log",
        base_url=f"http://127.0.0.1:{port}",
    )
    server.start()
    try:
        server.wait_healthy("/moto-api/", STORE_READY_S)
        filled = subprocess.run(
            [str(e2e_python), str(E2E_DIR / "bucket.py"), server.base_url, str(tiny_model), rendered.BUCKET_URI],
            check=True,
            capture_output=True,
            text=True,
            timeout=FILL_TIMEOUT_S,
        )
        keys = json.loads(filled.stdout)
        yield Store(server, keys["user"], keys["role_session"])
    finally:
        server.stop()
