"""Where the e2e tier finds what scripts/setup-e2e.sh installed."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REQUIREMENTS = REPO / "requirements-e2e.txt"
SETUP_HINT = "run `bash scripts/setup-e2e.sh` first"


def e2e_venv() -> Path:
    """Same key as scripts/setup-e2e.sh: the first 16 hex digits of requirements-e2e.txt's sha256."""
    override = os.environ.get("VLLM_SERVING_E2E_VENV")
    if override:
        return Path(override)
    key = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "vllm-serving" / f"e2e-{key}"


def missing_dependencies() -> list[str]:
    """What the tier needs and does not find, as messages; empty when it can run."""
    missing = []
    if not (e2e_venv() / ".complete").is_file():
        missing.append(f"the CPU vLLM venv {e2e_venv()} is not set up")
    missing += [f"`{tool}` is not installed" for tool in ("prometheus", "taskset") if shutil.which(tool) is None]
    return missing


def e2e_python() -> Path:
    return e2e_venv() / "bin" / "python"
