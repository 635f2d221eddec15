"""Where raw config comes from: a stack file on disk (the offline preflight) or the Pulumi engine.

Both give the same thing: the project's keys without the `vllm-serving:` prefix, which secret keys are
set, and the problems found on the way (a plain-text secret, a file that is not a stack file).
validation/sources.py validates them into a StackConfig.
"""

from __future__ import annotations

import difflib
import os
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from config.errors import PROJECT, ConfigError, ConfigIssue, show
from config.secrets import SECRET_KEYS, StackSecrets

PROJECT_DIR = Path(__file__).resolve().parent.parent  # where Pulumi.yaml is


def read_stack_file(path: str | Path) -> tuple[dict[str, Any], frozenset[str], list[ConfigIssue]]:
    import yaml  # only the offline path needs a YAML parser

    from config.loading import parse_stack_yaml, read_stack_text, yaml_issue

    file = Path(path)
    try:
        document = parse_stack_yaml(read_stack_text(file))
    except yaml.YAMLError as error:
        raise ConfigError([yaml_issue(file, error)]) from None
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
    import pulumi
    from pulumi.runtime import config as runtime_config

    check_stack_file_syntax(pulumi.get_stack())
    keys = set(runtime_config.CONFIG.get()) | set(runtime_config.get_config_env())
    items = [(key, _decode(runtime_config.get_config(key))) for key in sorted(keys)]
    return split_project_keys(items, is_secret=lambda key, _value: runtime_config.is_config_secret(key))


def check_stack_file_syntax(stack: str, project_dir: Path | None = None) -> None:
    """Read the stack's own file as the offline CLI does, for what the Pulumi engine's YAML parser lets
    through (a duplicate key keeps its last value, an alias is expanded, no size or depth bound), so the CLI
    and `pulumi preview` agree. No file (config from an ESC environment or the Automation API): nothing to
    check. Raises ConfigError naming the file."""
    import yaml

    from config.loading import parse_stack_yaml, read_stack_text, yaml_issue

    file = stack_file_of(stack, project_dir or PROJECT_DIR)
    if file is None:
        return
    try:  # a file without `config:` (a new stack) is fine: the engine found nothing in it either
        parse_stack_yaml(read_stack_text(file))
    except yaml.YAMLError as error:
        raise ConfigError([yaml_issue(file, error)]) from None


def stack_file_of(stack: str, project_dir: Path) -> Path | None:
    """Pulumi.<stack>.yaml in the project's stackConfigDir (Pulumi.yaml), when it exists (even as a FIFO)."""
    import yaml

    from config.loading import parse_stack_yaml, read_stack_text

    try:
        project = parse_stack_yaml(read_stack_text(project_dir / "Pulumi.yaml"))
    except (ConfigError, yaml.YAMLError):  # the engine read Pulumi.yaml already; its own errors come first
        project = None
    folder = project.get("stackConfigDir") if isinstance(project, dict) else None
    base = project_dir / folder if isinstance(folder, str) else project_dir
    for name in (f"Pulumi.{stack}.yaml", f"Pulumi.{stack}.yml"):
        if os.path.lexists(base / name):
            return base / name
    return None


def share_hf_token_with_the_hub_read() -> None:
    """The Hub read at preview (preflight/hub.py, a model outside the catalog) authenticates as huggingface_hub
    does, with HF_TOKEN: hand it the hf_token secret unless the environment names a token already. Config.get
    returns a secret's plaintext (pulumi sdk config.py _get); it goes to this process's environment only."""
    import pulumi

    token = pulumi.Config().get("hf_token")
    if token and not os.environ.get("HF_TOKEN"):
        os.environ["HF_TOKEN"] = token


def load_pulumi_secrets() -> StackSecrets:
    """The credentials as Pulumi secret Outputs (set with `pulumi config set --secret`)."""
    import pulumi

    config = pulumi.Config()
    return StackSecrets(hf_token=config.get_secret("hf_token"), api_key=config.get_secret("api_key"))


def _decode(value: Any) -> Any:
    """Pulumi hands structured values over as JSON text; scalars stay strings for pydantic to coerce."""
    from reading.numbers import loads

    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return loads(value, finite=False)
        except (RecursionError, ValueError):  # bad JSON or a number out of bounds: pydantic names the key
            return value
    return value


def load_kubernetes_provider_settings() -> tuple[str | None, str | None]:
    """The Kubernetes provider's own `kubernetes:kubeconfig` and `kubernetes:context`, so the cluster checks
    read the same cluster, through the same context, as the provider deploys to."""
    import pulumi

    provider = pulumi.Config("kubernetes")
    return provider.get("kubeconfig"), provider.get("context")
