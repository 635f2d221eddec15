"""A validated stack config from its source: a stack file on disk (the offline CLIs) or the Pulumi engine.

config/sources.py reads the raw keys and the problems found on the way (a plain-text secret, a file that is
not a stack file); here they are reported together with the keys' own problems (validation/keys.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from config.errors import ConfigError, ConfigIssue
from config.loading import check_bounds
from config.sources import read_pulumi_config, read_stack_file
from config.stack import StackConfig
from validation.keys import validate_config


def load_stack_file_with_secrets(path: str | Path) -> tuple[StackConfig, frozenset[str]]:
    """The validated config of `stacks/Pulumi.<stack>.yaml` and the names of the secrets the file sets
    (encrypted values are not read). Raises ConfigError."""
    raw, secrets, issues = read_stack_file(path)
    return _validate(raw, issues), secrets


def load_pulumi_config_with_secrets() -> tuple[StackConfig, frozenset[str]]:
    """The running program's validated config and the secrets set."""
    raw, secrets, issues = read_pulumi_config()
    return _validate(raw, issues), secrets


def _validate(raw: dict[str, Any], issues: list[ConfigIssue]) -> StackConfig:
    if bounds := check_bounds(raw):  # before pydantic: its errors would echo the whole value
        raise ConfigError(issues + bounds)
    try:
        cfg = validate_config(raw)
    except ConfigError as error:
        raise ConfigError(issues + error.issues) from None
    if issues:
        raise ConfigError(issues)
    return cfg
