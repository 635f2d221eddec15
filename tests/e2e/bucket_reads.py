"""vLLM's own reads of a bucket (tests/e2e/load_from_bucket.py), run in the env a pod of the rendered server gets
once a workload identity's webhook or agent has added its variables; several at once, one per core at most."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e import cpu_backend, rendered

E2E_DIR = Path(__file__).resolve().parent
LOAD_TIMEOUT_S = 300  # a vLLM import and a few reads; a hang shows as this timeout
# The server's egress policy closes the instance metadata service on a cluster (plan/flows.py `hub_flows`): no
# read falls back to a node's role, and no SDK waits out its timeouts here.
NO_INSTANCE_METADATA = {"AWS_EC2_METADATA_DISABLED": "true"}


def pod_env(launch: rendered.Launch, home: Path, added: dict[str, str]) -> dict[str, str]:
    """The rendered env (its paths moved under `home`), with what the identity adds to the pod."""
    host = cpu_backend.Host(python=Path(), model_dir=home / "unused", home=home, port=0, core=0)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        **cpu_backend.adapt_env(launch.env, host),
        **NO_INSTANCE_METADATA,
        **added,
    }


def load(e2e_python: Path, launch: rendered.Launch, env: dict[str, str], *flags: str) -> subprocess.Popen[str]:
    """Start vLLM's reads of the rendered model URI with the rendered loader config."""
    extra_config = launch.args[launch.args.index("--model-loader-extra-config") + 1]
    argv = [str(e2e_python), str(E2E_DIR / "load_from_bucket.py"), launch.args[0], extra_config, *flags]
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(process: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    try:
        stdout, stderr = process.communicate(timeout=LOAD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        pytest.fail(f"the load still ran after {LOAD_TIMEOUT_S} s:\n{stderr[-3000:]}")
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
