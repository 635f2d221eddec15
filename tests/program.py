"""Run the real Pulumi program (__main__.py) under mocks with a stack file's settings."""

from __future__ import annotations

import runpy
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from config.errors import PROJECT
from config.sources import read_stack_file
from tests.factories import REPO
from tests.harness import RecordingMocks, Registered, run_program_catching

SECRET_VALUES = {"hf_token": "hf_test_token", "api_key": "sk-test-key"}  # the secrets a stack may require
TEST_SECRETS = SECRET_VALUES | {"api_key_previous": "sk-test-previous-key"}  # every secret a stack file may hold


def stack_file_config(path: Path) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The stack file's project keys as the engine would hand them over, secrets with test values."""
    raw, secrets, _ = read_stack_file(path)
    config = dict(raw)
    for name in secrets:
        config[name] = TEST_SECRETS[name]
    return config, tuple(sorted(secrets))


def run_main(
    config: dict[str, Any],
    secret_keys: tuple[str, ...] = (),
    stack: str = "test",
    hf_token: bool = True,
    mocks: RecordingMocks | None = None,
) -> tuple[Registered, BaseException | None]:
    """Run __main__.py; return what it registered and the error it stopped with, if any. `hf_token`: the
    operator has set the hf_token secret, which the stacks' gated models need (validation/secrets.py)."""
    if hf_token and "hf_token" not in config:
        config, secret_keys = {**config, "hf_token": SECRET_VALUES["hf_token"]}, (*secret_keys, "hf_token")
    return run_program_catching(
        lambda: runpy.run_path(str(REPO / "__main__.py"), run_name="__main__"),
        config=config,
        secret_keys=secret_keys,
        stack=stack,
        mocks=mocks,
    )


def run_stack_file(
    path: Path, extra: dict[str, Any] | None = None, mocks: RecordingMocks | None = None
) -> tuple[Registered, BaseException | None]:
    config, secret_keys = stack_file_config(path)
    config.update(extra or {})
    return run_main(
        config,
        secret_keys + tuple(k for k in (extra or {}) if k in TEST_SECRETS),
        stack=path.name.removeprefix("Pulumi.").removesuffix(".yaml"),
        mocks=mocks,
    )


@cache
def run_repository_stack(path: Path) -> tuple[Registered, BaseException | None]:
    """run_stack_file(path) with an api_key set, once a process: the tests that only read what a stack file of
    the repository registers share one run (prod's alone was made by nine tests). No test changes a file in
    the repository or what a run registered; a test that changes what the program reads (a monkeypatched
    cluster read, failing mocks) or that compares two runs calls run_stack_file itself."""
    return run_stack_file(path, extra={"api_key": "sk-test"})


def pulumi_config(path: Path) -> tuple[dict[str, Any], tuple[str, ...]] | None:
    """The file as `pulumi config` would hold it (secure values become secret keys); None if it cannot."""
    from config.loading import parse_stack_yaml

    try:  # the bounded loader: a file it refuses (an alias, a duplicate key) is not handed to the program
        document = parse_stack_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError:
        return None
    if not isinstance(document, dict) or not isinstance(document.get("config"), dict):
        return None
    values: dict[str, Any] = {}
    secrets: list[str] = []
    for full_key, value in document["config"].items():
        key = str(full_key).removeprefix(f"{PROJECT}:")  # another namespace's keys keep theirs
        if isinstance(value, dict) and set(value) == {"secure"}:
            value = str(value["secure"])
            secrets.append(key)
        values[key] = value
    return values, tuple(secrets)
