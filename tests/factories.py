"""Small builders for typed configs in tests: a valid base stack, changed only where a test says."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

from config.stack import StackConfig
from validation.keys import validate_config
from validation.sources import load_pulumi_config_with_secrets, load_stack_file_with_secrets

REPO = Path(__file__).resolve().parent.parent
STACKS = REPO / "stacks"

BASE: dict[str, Any] = {
    "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
    "gpu": {"product": "A100-SXM4-80GB"},
    "engine": {"max_model_len": 8192},
}


def merge(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def raw_config(**changes: Any) -> dict[str, Any]:
    return merge(BASE, changes)


def make_config(**changes: Any) -> StackConfig:
    """A valid stack (Llama-3.1-8B on one A100-80GB) with `changes` merged in, group by group."""
    return validate_config(raw_config(**changes))


def load_stack_file(path: str | Path) -> StackConfig:
    """A stack file's validated config, without the names of its secrets."""
    return load_stack_file_with_secrets(path)[0]


def load_pulumi_config() -> StackConfig:
    """The running (mocked) program's validated config, without the names of its secrets."""
    return load_pulumi_config_with_secrets()[0]


@cache
def shipped_stack(name: str) -> StackConfig:
    """stacks/Pulumi.<name>.yaml, else the example of that name. Read once a process: the repository's stack
    files do not change under the suite, and a StackConfig is frozen (config/base.py). The tests of reading a
    file call load_stack_file, which reads it every time."""
    path = STACKS / f"Pulumi.{name}.yaml"
    return load_stack_file(path if path.exists() else STACKS / "examples" / path.name)


@cache
def example_stack(name: str) -> StackConfig:
    """stacks/examples/Pulumi.<name>.yaml, read once a process as shipped_stack is."""
    return load_stack_file(STACKS / "examples" / f"Pulumi.{name}.yaml")


def preflight_imports(module: str, *args: str) -> bool:
    """Whether `python -m preflight ARGS` (run from the repository, in a fresh interpreter) imports `module`."""
    return module in preflight_modules(*args)


@cache  # one interpreter for the tests asking about the same arguments (each run is a full preflight)
def preflight_modules(*args: str) -> frozenset[str]:
    """The modules `python -m preflight ARGS` has imported when it ends, in a fresh interpreter."""
    code = (
        f"import json, sys, runpy; sys.argv = ['preflight', *{list(args)!r}]\n"
        "try:\n    runpy.run_module('preflight', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    return frozenset(json.loads(result.stdout.strip().splitlines()[-1]))
