"""Where raw config comes from: a stack file on disk (the offline preflight) or the Pulumi engine.

Both give the same thing: the project's keys without the `vllm-serving:` prefix, which secret keys are
set, and the problems found on the way (a plain-text secret, a file that is not a stack file).
validation/sources.py validates them into a StackConfig.
"""

from __future__ import annotations

import difflib
import json
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from config.errors import PROJECT, ConfigError, ConfigIssue, show
from config.secrets import SECRET_KEYS, StackSecrets


def read_stack_file(path: str | Path) -> tuple[dict[str, Any], frozenset[str], list[ConfigIssue]]:
    import yaml  # only the offline path needs a YAML parser

    from config.loading import parse_stack_yaml, read_stack_text, yaml_issue

    file = Path(path)
    try:
        document = parse_stack_yaml(read_stack_text(file))
    except FileNotFoundError:
        raise ConfigError([ConfigIssue("", f"{file}: no such stack file.", "pass stacks/Pulumi.<stack>.yaml.")]) from None
    except IsADirectoryError:
        raise ConfigError(
            [ConfigIssue("", f"{file}: is a directory, not a stack file.", "pass one file, e.g. stacks/Pulumi.prod.yaml.")]
        ) from None
    except OSError as error:  # permission denied, a broken mount, ...
        raise ConfigError(
            [
                ConfigIssue(
                    "",
                    f"{file}: cannot be read ({error.strerror or type(error).__name__}).",
                    "check the path and its permissions.",
                )
            ]
        ) from None
    except yaml.YAMLError as error:
        raise ConfigError([yaml_issue(file, error)]) from None
    except UnicodeDecodeError as error:
        raise ConfigError(
            [ConfigIssue("", f"{file}: is not UTF-8 text (byte {error.start}).", "save the file as UTF-8.")]
        ) from None
    if not isinstance(document, dict) or not isinstance(document.get("config"), dict):
        raise ConfigError(
            [
                ConfigIssue(
                    "",
                    f"{file}: a stack file is a mapping with a `config:` mapping inside; this one is not.",
                    "start the file with `config:` and put `vllm-serving:<key>: <value>` entries under it.",
                )
            ]
        )
    return split_project_keys(document["config"].items(), is_secret=_is_encrypted)


def split_project_keys(
    items: Iterable[tuple[Any, Any]], is_secret: Any
) -> tuple[dict[str, Any], frozenset[str], list[ConfigIssue]]:
    """Keep this project's keys (`vllm-serving:x`, or a bare `x`); note which secrets are set."""
    raw: dict[str, Any] = {}
    secrets: set[str] = set()
    issues: list[ConfigIssue] = []
    for full_key, value in items:
        namespace, _, name = str(full_key).rpartition(":")
        if namespace and namespace != PROJECT:
            if _near_project(namespace):
                issues.append(
                    ConfigIssue(
                        "",
                        f"{show(str(full_key))} is not a {PROJECT} key, but its prefix "
                        f"{show(namespace)} looks like a misspelling: did you mean `{PROJECT}`?",
                        f"write the key as {PROJECT}:{name}.",
                    )
                )
            continue  # another package's settings, e.g. kubernetes:context
        secret = is_secret(full_key, value)
        if name in SECRET_KEYS:
            if secret:
                secrets.add(name)
            else:
                issues.append(_plain_text_secret(name))
        elif secret:
            issues.append(
                ConfigIssue(
                    name,
                    "is encrypted, but it is not a secret setting.",
                    f"set it in plain text: pulumi config set --path {name} ...",
                )
            )
        else:
            raw[name] = value
    return raw, frozenset(secrets), issues


def _near_project(namespace: str) -> bool:
    """A namespace that looks like a misspelt `vllm-serving` (which would silently drop the whole group)."""
    folded = unicodedata.normalize("NFKC", namespace[:64]).casefold().replace("_", "-").replace(" ", "-")
    return folded == PROJECT or difflib.SequenceMatcher(None, folded, PROJECT).ratio() >= 0.8


def _is_encrypted(_key: Any, value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"secure"}


def _plain_text_secret(name: str) -> ConfigIssue:
    return ConfigIssue(
        name,
        "is stored in plain text; credentials must be Pulumi secrets.",
        f"pulumi config rm {name} && pulumi config set --secret {name} <value>.",
    )


def read_pulumi_config() -> tuple[dict[str, Any], frozenset[str], list[ConfigIssue]]:
    """The running program's keys, secrets set and problems, as read_stack_file gives them for a file. Only here
    the Pulumi SDK's config is read."""
    from pulumi.runtime import config as runtime_config

    keys = set(runtime_config.CONFIG.get()) | set(runtime_config.get_config_env())
    items = [(key, _decode(runtime_config.get_config(key))) for key in sorted(keys)]
    return split_project_keys(items, is_secret=lambda key, _value: runtime_config.is_config_secret(key))


def load_pulumi_secrets() -> StackSecrets:
    """The credentials as Pulumi secret Outputs (set with `pulumi config set --secret`)."""
    import pulumi

    config = pulumi.Config()
    return StackSecrets(hf_token=config.get_secret("hf_token"), api_key=config.get_secret("api_key"))


def _decode(value: Any) -> Any:
    """Pulumi hands structured values over as JSON text; scalars stay strings for pydantic to coerce."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except (json.JSONDecodeError, RecursionError, ValueError):  # ValueError: an int of > 4300 digits
            return value
    return value


def load_kubernetes_provider_settings() -> tuple[str | None, str | None]:
    """The Kubernetes provider's own `kubernetes:kubeconfig` and `kubernetes:context`, so the cluster checks
    read the same cluster, through the same context, as the provider deploys to."""
    import pulumi

    provider = pulumi.Config("kubernetes")
    return provider.get("kubeconfig"), provider.get("context")
