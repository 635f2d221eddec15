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
# The keys of a Pulumi.<stack>.yaml file (pulumi/pulumi sdk/go/common/workspace/project.go@73a66f48, type
# ProjectStack); the engine ignores any other, so a setting placed beside `config:` would be dropped unseen.
STACK_FILE_KEYS = ("config", "encryptedkey", "encryptionsalt", "environment", "secretsprovider")


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
    outside = _keys_outside_config(file, document)
    raw, secrets, issues = split_project_keys(document["config"].items(), is_secret=_is_encrypted)
    return raw, secrets, outside + issues


def _keys_outside_config(file: Path, document: dict[Any, Any]) -> list[ConfigIssue]:
    return [
        ConfigIssue(
            "",
            f"{file}: the top-level key {show(str(key))} is not one a stack file has "
            f"({', '.join(STACK_FILE_KEYS)}); Pulumi ignores it.",
            f"indent it under `config:` as {PROJECT}:<key>, or remove it."
            if str(key).startswith(f"{PROJECT}:")
            else "remove it, or move it under `config:`.",
        )
        for key in document
        if key not in STACK_FILE_KEYS
    ]


def split_project_keys(
    items: Iterable[tuple[Any, Any]], is_secret: Any
) -> tuple[dict[str, Any], frozenset[str], list[ConfigIssue]]:
    """Keep this project's keys (`vllm-serving:x`); note which secrets are set."""
    raw: dict[str, Any] = {}
    secrets: set[str] = set()
    issues: list[ConfigIssue] = []
    for key, value in items:
        full_key = _one_colon(str(key))
        if full_key is None:
            issues.append(_not_a_config_key(str(key)))
            continue
        namespace, _, name = full_key.partition(":")
        if namespace != PROJECT:
            issues += _other_namespace(str(key), namespace, name)
            continue
        issue = _secret_issue(name, value, bool(is_secret(key, value)))
        if issue is not None:
            issues.append(issue)
        elif name in SECRET_KEYS:
            secrets.add(name)
        else:
            raw[name] = value
    return raw, frozenset(secrets), issues


def _other_namespace(key: str, namespace: str, name: str) -> list[ConfigIssue]:
    """Another package's settings (kubernetes:context) are theirs; a misspelt prefix would drop a group unseen."""
    if not _near_project(namespace):
        return []
    return [
        ConfigIssue(
            "",
            f"{show(key)} is not a {PROJECT} key, but its prefix {show(namespace)} looks like a misspelling: "
            f"did you mean `{PROJECT}`?",
            f"write the key as {PROJECT}:{name}.",
        )
    ]


def _secret_issue(name: str, value: Any, secret: bool) -> ConfigIssue | None:
    if _broken_ciphertext(value):
        return ConfigIssue(
            name,
            "has a `secure:` value Pulumi cannot decrypt: it must be a mapping of `secure` to one non-empty string.",
            f"pulumi config set --secret {name} <value>.",
        )
    if name in SECRET_KEYS:
        return None if secret else _plain_text_secret(name)
    if secret:
        return _misplaced_secret(name)
    nested = _nested_ciphertext(name, value)
    return _misplaced_secret(nested) if nested else None


def _nested_ciphertext(path: str, value: Any) -> str | None:
    """The key path of a `secure:` value inside a group (`pulumi config set --path --secret`), if any."""
    if _is_encrypted(None, value):
        return path
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for child, item in children:
        found = _nested_ciphertext(f"{path}[{child}]" if isinstance(child, int) else f"{path}.{child}", item)
        if found:
            return found
    return None


def _misplaced_secret(name: str) -> ConfigIssue:
    """An encrypted value outside the secret settings: the program would write its plain text into the pod
    spec, where only the secret settings go through a Kubernetes Secret."""
    near = difflib.get_close_matches(name.rpartition(".")[2].casefold().replace("-", "_"), SECRET_KEYS, n=1, cutoff=0.6)
    if near:
        return ConfigIssue(
            name,
            f"is encrypted, but it is not a secret setting: did you mean `{near[0]}`?",
            f"pulumi config rm{' --path' if '.' in name or '[' in name else ''} {name} && "
            f"pulumi config set --secret {near[0]} <value>.",
        )
    return ConfigIssue(
        name,
        f"is encrypted, but only {', '.join(SECRET_KEYS)} are secret settings (the program keeps them in Kubernetes "
        "Secrets); an encrypted value elsewhere would reach the pod spec in plain text.",
        f"set it in plain text (pulumi config set --path {name} ...), or pass the credential as one of "
        f"{', '.join(SECRET_KEYS)}.",
    )


def _one_colon(key: str) -> str | None:
    """`ns:name`, also from Pulumi's long form `ns:config:name`; None for a key Pulumi cannot parse."""
    parts = key.split(":")
    if len(parts) == 3 and parts[1] == "config":
        parts = [parts[0], parts[2]]
    return ":".join(parts) if len(parts) == 2 and all(parts) else None


def _broken_ciphertext(value: Any) -> bool:
    return isinstance(value, dict) and "secure" in value and not _is_encrypted(None, value)


def _not_a_config_key(key: str) -> ConfigIssue:
    """Pulumi parses a config key as `<namespace>:<name>` and refuses the file otherwise
    (pulumi/pulumi sdk/go/common/resource/config/key.go, ParseKey)."""
    name = key.rpartition(":")[2]
    return ConfigIssue(
        "",
        f"{show(key)} is not a Pulumi config key (`<namespace>:<name>`); pulumi refuses the file.",
        f"write it as {PROJECT}:{name}.",
    )


def _near_project(namespace: str) -> bool:
    """A namespace that looks like a misspelt `vllm-serving` (which would silently drop the whole group)."""
    folded = unicodedata.normalize("NFKC", namespace[:64]).casefold().replace("_", "-").replace(" ", "-")
    return folded == PROJECT or difflib.SequenceMatcher(None, folded, PROJECT).ratio() >= 0.8


def _is_encrypted(_key: Any, value: Any) -> bool:
    """Pulumi's ciphertext form, `{secure: <non-empty string>}`; an empty or non-string one cannot decrypt, so
    it counts as no secret (and a plain-text value where a secret is required)."""
    return isinstance(value, dict) and set(value) == {"secure"} and isinstance(value["secure"], str) and bool(value["secure"])


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
    through (a duplicate key keeps its last value, an alias is expanded, no size or depth bound, a value YAML
    versions read differently, a setting beside `config:` that the engine ignores), so the CLI
    and `pulumi preview` agree. No file (config from an ESC environment or the Automation API): nothing to
    check. Raises ConfigError naming the file."""
    import yaml

    from config.loading import parse_stack_yaml, read_stack_text, yaml_issue

    file = stack_file_of(stack, project_dir or PROJECT_DIR)
    if file is None:
        return
    try:  # a file without `config:` (a new stack) is fine: the engine found nothing in it either
        document = parse_stack_yaml(read_stack_text(file))
    except yaml.YAMLError as error:
        raise ConfigError([yaml_issue(file, error)]) from None
    outside = _keys_outside_config(file, document) if isinstance(document, dict) else []
    if outside:
        raise ConfigError(outside)


def stack_name_of(path: str | Path) -> str:
    """`stacks/Pulumi.prod.yaml` -> `prod`, as Pulumi names the stack of a stack file."""
    return Path(path).name.removeprefix("Pulumi.").removesuffix(".yaml").removesuffix(".yml")


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
    return StackSecrets(**{name: config.get_secret(name) for name in SECRET_KEYS})


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
