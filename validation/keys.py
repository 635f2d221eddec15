"""The rules between a stack's keys, run as soon as the keys are parsed: one module per config group.

`validate_config` is the one call that parses and checks a stack's keys; the loaders (validation/sources.py),
the program and the tests' factories go through it, so a config that parsed has passed every rule here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from config.errors import ConfigError, ConfigIssue
from config.stack import StackConfig, parse_config
from validation import (
    cluster_profile,
    delivery,
    docker,
    engine,
    exposure,
    kubernetes,
    multinode,
    observability,
    routing,
)

# In the order their issues are reported.
KEY_RULES: tuple[Callable[[StackConfig], list[ConfigIssue]], ...] = (
    engine.cross_checks,
    kubernetes.cross_checks,
    delivery.cross_checks,
    observability.cross_checks,
    docker.cross_checks,
    multinode.cross_checks,
    cluster_profile.cross_checks,
    exposure.cross_checks,
    routing.cross_checks,
)


def validate_config(raw: Mapping[str, Any]) -> StackConfig:
    """Parse the project's config keys (without the `vllm-serving:` prefix) and check the rules between them.

    Raises ConfigError listing every problem: unknown keys, bad values, and cross-key rules. The rules that
    need the preflight report, the target or the secrets run next, in validation.check_stack.
    """
    cfg = parse_config(raw)
    issues = [issue for rule in KEY_RULES for issue in rule(cfg)]
    if issues:
        raise ConfigError(issues)
    return cfg
