"""`preflight`: what concurrency the stack must sustain, and whether a shortfall blocks or warns."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from config.base import ConfigGroup
from config.syntax import PositiveInt


class ConcurrencyTarget(ConfigGroup):
    """The load the KV cache must hold at once."""

    requests: PositiveInt | None = Field(None, description="Concurrent requests to hold; defaults to max_num_seqs.")
    mode: Literal["average", "strict"] = Field(
        "average", description="average: requests x average_request_tokens; strict: requests x max_model_len."
    )
    average_request_tokens: PositiveInt = Field(
        1024, description="Average prompt + output tokens per request, for mode average."
    )
    policy: Literal["block", "warn"] | None = Field(
        None,
        description=(
            "What a shortfall does to the stack. Defaults to block when you asked for the concurrency "
            "(preflight.concurrency.requests or engine.max_num_seqs), else warn: vLLM itself starts either way."
        ),
    )


class PreflightConfig(ConfigGroup):
    """Preflight policies. Weights, KV memory, max_model_len and parallelism checks always block."""

    concurrency: ConcurrencyTarget = Field(default_factory=ConcurrencyTarget, description="Concurrency target.")
    min_margin_percent: float = Field(
        5.0, ge=0, le=100, description="Warn when the KV cache left after the target is below this share."
    )
