"""The base every config group derives from: frozen, unknown keys rejected, no booleans for numbers."""

from __future__ import annotations

import functools
import types
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError


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


def boolean_error(kind: type) -> PydanticCustomError:
    """Pydantic reads `true` as 1 for a number; in a stack file that is always a mistake (`replicas: yes`).

    Numbers given as text stay accepted: the Pulumi engine hands every scalar over as a string ("2").
    """
    if kind is int:
        return PydanticCustomError("int_type", "Input should be a valid integer")
    return PydanticCustomError("float_type", "Input should be a valid number")


def refuse_bool(value: Any, kind: type | None) -> Any:
    if kind is not None and isinstance(value, bool):
        raise boolean_error(kind)
    return value


@functools.cache
def number_fields(group: type[BaseModel]) -> dict[str, type]:
    """The fields of a group that hold a number and no boolean, with their kind (int or float)."""
    kinds = {name: number_kind(field.annotation) for name, field in group.model_fields.items()}
    return {name: kind for name, kind in kinds.items() if kind is not None}


class ConfigGroup(BaseModel):
    """A group of stack-file keys. Keys are spelled as the upstream tool spells them, in snake_case."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True, allow_inf_nan=False)

    # One check per group rather than a validator on every field: a "*" field validator costs pydantic a
    # signature read and a wrapped validator per field, about 40 ms of every preflight's start. The errors
    # keep each field's location, as a field validator's would.
    @model_validator(mode="before")
    @classmethod
    def _no_bool_for_numbers(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not any(isinstance(value, bool) for value in data.values()):
            return data
        kinds = number_fields(cls)
        errors = [
            InitErrorDetails(type=boolean_error(kinds[key]), loc=(key,), input=value)
            for key, value in data.items()
            if isinstance(value, bool) and key in kinds
        ]
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        return data
