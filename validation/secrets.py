"""The secrets a stack's config requires."""

from __future__ import annotations

from config.errors import ConfigIssue
from config.stack import StackConfig


def missing_secrets(cfg: StackConfig, secrets_present: frozenset[str]) -> list[ConfigIssue]:
    """Secrets the config requires that are not set. A rule of validation.check_stack: a stack file may get
    them from elsewhere (a Pulumi ESC environment, CI), so the offline preflight only notes them."""
    if cfg.security.require_api_key and "api_key" not in secrets_present:
        return [
            ConfigIssue(
                "api_key",
                "is required because security.require_api_key is true, but it is not set.",
                "pulumi config set --secret api_key <key>, or set security.require_api_key: false.",
            )
        ]
    return []
