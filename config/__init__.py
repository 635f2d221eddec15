"""The typed stack config: validated once, at the edge, into frozen models. Never imports pulumi."""

from config.errors import ConfigError, ConfigIssue
from config.stack import SECRET_KEYS, StackConfig, validate_config

__all__ = ["SECRET_KEYS", "ConfigError", "ConfigIssue", "StackConfig", "validate_config"]
