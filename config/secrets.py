"""The stack's credentials, as Pulumi secret Outputs. They never enter the config model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the preflight imports config; only the Pulumi program holds real Outputs
    import pulumi

# Keys that hold credentials: only ever set with `pulumi config set --secret`.
SECRET_KEYS: tuple[str, ...] = ("hf_token", "api_key", "api_key_previous")


@dataclass(frozen=True)
class StackSecrets:
    hf_token: pulumi.Output[str] | None = None  # Hugging Face token, for gated models
    api_key: pulumi.Output[str] | None = None  # OpenAI API key vLLM requires on /v1
    api_key_previous: pulumi.Output[str] | None = None  # accepted beside api_key while clients move (a rotation)

    @property
    def present(self) -> frozenset[str]:
        """Names of the secrets that are set."""
        return frozenset(name for name in SECRET_KEYS if getattr(self, name) is not None)
