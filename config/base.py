"""The base every config group derives from: frozen, unknown keys rejected, no booleans for numbers."""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError


def number_kind(annotation: Any) -> type | None:
    """int or float when a field holds a number and no boolean (`PositiveInt | None` -> int), else None."""
    if typing.get_origin(annotation) is typing.Annotated:
        return number_kind(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        kinds = [number_kind(arg) for arg in typing.get_args(annotation)]
        if bool in typing.get_args(annotation):
            return None
        return next((kind for kind in kinds if kind is not None), None)
    return annotation if annotation in (int, float) else None


def refuse_bool(value: Any, kind: type | None) -> Any:
    """Pydantic reads `true` as 1 for a number; in a stack file that is always a mistake (`replicas: yes`).

    Numbers given as text stay accepted: the Pulumi engine hands every scalar over as a string ("2").
    """
    if kind is not None and isinstance(value, bool):
        if kind is int:
            raise PydanticCustomError("int_type", "Input should be a valid integer")
        raise PydanticCustomError("float_type", "Input should be a valid number")
    return value


class ConfigGroup(BaseModel):
    """A group of stack-file keys. Keys are spelled as the upstream tool spells them, in snake_case."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, bool):  # most values: no need to read the field's annotation
            return value
        field = cls.model_fields.get(info.field_name or "")
        return refuse_bool(value, number_kind(field.annotation) if field else None)
