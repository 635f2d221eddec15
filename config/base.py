"""The base every config group derives from: frozen, unknown keys rejected."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ConfigGroup(BaseModel):
    """A group of stack-file keys. Keys are spelled as the upstream tool spells them, in snake_case."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True, allow_inf_nan=False)
