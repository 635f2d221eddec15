"""The stack's credentials, as Pulumi secret Outputs. They never enter the config model."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi


@dataclass(frozen=True)
class StackSecrets:
    hf_token: pulumi.Output[str] | None = None  # Hugging Face token, for gated models
    api_key: pulumi.Output[str] | None = None  # OpenAI API key vLLM requires on /v1


def read_secrets() -> StackSecrets:
    config = pulumi.Config()
    return StackSecrets(hf_token=config.get_secret("hf_token"), api_key=config.get_secret("api_key"))
