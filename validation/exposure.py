"""An exposed server without an API key would serve anyone the gateway lets in."""

from __future__ import annotations

from config.errors import ConfigIssue
from config.stack import StackConfig


def cross_checks(cfg: StackConfig) -> list[ConfigIssue]:
    """An exposed server without a key would serve anyone the gateway lets in."""
    if cfg.exposure.kind == "none" or cfg.security.require_api_key:
        return []
    return [
        ConfigIssue(
            f"exposure.{cfg.exposure.kind}",
            "exposes the API outside the namespace, but security.require_api_key is false: anyone the "
            f"{cfg.exposure.kind} admits could run inference.",
            "set security.require_api_key: true (and pulumi config set --secret api_key <key>).",
        )
    ]
