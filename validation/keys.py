"""The rules between a stack's keys, run as soon as the keys are parsed: one module per config group.

`validate_config` is the one call that parses and checks a stack's keys; the loaders (validation/sources.py),
the program and the tests' factories go through it, so a config that parsed has passed every rule here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from config.errors import ConfigError, ConfigIssue
from config.secrets import SECRET_KEYS
from config.stack import StackConfig, parse_config
from validation import (
    cluster_profile,
    cost,
    credentials,
    delivery,
    docker,
    engine,
    exposure,
    kubernetes,
    landing,
    lora,
    multinode,
    observability,
    routing,
    values,
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
    landing.check_landings,
    values.cross_checks,
    credentials.cross_checks,
    routing.cross_checks,
    cost.cross_checks,
    lora.cross_checks,
)


def validate_config(raw: Mapping[str, Any]) -> StackConfig:
    """Parse the project's config keys (without the `vllm-serving:` prefix) and check the rules between them.

    Raises ConfigError listing every problem: unknown keys, bad values, and cross-key rules. The rules that
    need the preflight report, the target or the secrets run next, in validation.check_stack.
    """
    try:
        cfg = parse_config(raw)
    except ConfigError as error:  # unknown keys alone must not hide what the rules find in the rest
        raise ConfigError([*error.issues, *_rule_issues_without_unknown_keys(raw)]) from None
    issues = _rule_issues(cfg)
    if issues:
        raise ConfigError(issues)
    return cfg


def _rule_issues(cfg: StackConfig) -> list[ConfigIssue]:
    return [issue for rule in KEY_RULES for issue in rule(cfg)]


def _rule_issues_without_unknown_keys(raw: Mapping[str, Any]) -> list[ConfigIssue]:
    """The issues the file has once its unknown keys are left out, when those were its only schema errors: the
    rules between keys, or a group's own checks that pydantic skips while the group has an unknown key.

    A bad value stays a stop: the rules read values, and one read as a default would report a false problem.
    """
    data: Any = {key: value for key, value in raw.items() if key not in SECRET_KEYS}
    try:
        StackConfig.model_validate(data)
    except ValidationError as error:
        errors = error.errors()
        if any(e["type"] != "extra_forbidden" for e in errors):
            return []
        for e in errors:
            data = _without(data, tuple(e["loc"]))
    try:
        return _rule_issues(parse_config(data))
    except ConfigError as error:  # a group's own after-validators, which pydantic skips while a key is unknown
        return error.issues


def _without(data: Any, loc: tuple[Any, ...]) -> Any:
    """A copy of nested mappings and lists with the key at loc removed."""
    head, rest = loc[0], loc[1:]
    if isinstance(data, Mapping):
        if not rest:
            return {key: value for key, value in data.items() if key != head}
        return {**data, head: _without(data[head], rest)}
    if isinstance(data, list | tuple) and isinstance(head, int) and rest:
        items = list(data)
        items[head] = _without(items[head], rest)
        return items
    return data
