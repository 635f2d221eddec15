"""Pydantic's validation errors turned into ConfigIssues that name the key as the user typed it.

Every message has the same shape: the key, what was wrong with the value, and a fix that says what to
write and what the key means (from the field's description).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any, Literal

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from config.errors import ConfigIssue, show, suggest

Loc = tuple[Any, ...]

# What a value of each pydantic type error should have been, in the words of a stack file.
_EXPECTED: dict[str, str] = {
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "list_type": "a list",
    "tuple_type": "a list",
    "set_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}
_BOUNDS = {"gt": ">", "ge": "≥", "lt": "<", "le": "≤"}
_LISTED_KEYS = 4  # keys named in "expected a mapping of keys (...)" before the ellipsis


def issue_from_pydantic(root: type[BaseModel], error: Mapping[str, Any]) -> ConfigIssue:
    """One pydantic error as an issue naming the key path as typed, the value and the fix."""
    loc = tuple(error["loc"])
    key = _dotted(loc)
    kind = str(error["type"])
    value = error.get("input")
    ctx = error.get("ctx") or {}
    if kind == "extra_forbidden":
        return _unknown_key_issue(root, loc)
    if kind == "missing":
        return ConfigIssue(key, "is required but missing.", f"add {key}{_meaning(root, loc)}.")
    if kind in ("literal_error", "enum"):
        return _not_allowed_issue(root, loc, value, str(ctx.get("expected", "")))
    if kind == "value_error":
        text, _, fix = str(error["msg"]).removeprefix("Value error, ").partition(" Fix: ")
        return ConfigIssue(key or "(stack)", text, fix)
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        return _range_issue(root, loc, value, ctx)
    if kind in ("string_pattern_mismatch", "string_too_short", "string_too_long"):
        return _string_issue(root, loc, value, kind, ctx)
    if kind == "invalid_key":
        return _non_text_key_issue(root, loc, value)
    if kind in _EXPECTED:
        return _type_issue(root, loc, value, _EXPECTED[kind])
    rule = str(error["msg"])
    rule = rule[:1].lower() + rule[1:]
    return ConfigIssue(key, f"{show(value)} is invalid: {rule}.", f"set {key}{_meaning(root, loc)}.")


def _dotted(loc: Loc) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


# Where vllm serve flags go, for the keys people reach for first (`vllm.extra_args`, `vllm.args`).
FLAGS_GO = (
    "vllm serve flags go in the engine.* keys (engine.max_model_len, engine.dtype, ...) or, for a flag with no "
    "key, in engine.extra_args"
)
FLAG_LIKE_KEYS = frozenset({"extra_args", "args", "flags", "extra_flags", "serve_args"})


def _unknown_key_issue(root: type[BaseModel], loc: Loc) -> ConfigIssue:
    known = _fields_at(root, loc[:-1])
    name = str(loc[-1])
    if name in FLAG_LIKE_KEYS and _dotted(loc) != "engine.extra_args":
        fix = "move the flags to their engine.* keys or engine.extra_args."
        return ConfigIssue(_dotted(loc), f"unknown key: {FLAGS_GO}.", fix)
    elsewhere = [group for group in _fields_at(root, ()) if name in _fields_at(root, (group,))] if len(loc) == 2 else []
    if elsewhere:
        groups, keys = " or ".join(elsewhere), " or ".join(f"{group}.{name}" for group in elsewhere)
        return ConfigIssue(_dotted(loc), f"unknown key: {name} is a key of {groups}, not of {loc[0]}.", f"move it to {keys}.")
    hint = suggest(name, known)
    where = _dotted(loc[:-1]) or "the vllm-serving namespace"
    message = f"unknown key{' (' + hint + ')' if hint else ''}."
    return ConfigIssue(_dotted(loc), message, f"correct or remove it; keys allowed in {where}: {', '.join(sorted(known))}.")


def _non_text_key_issue(root: type[BaseModel], loc: Loc, value: Any) -> ConfigIssue:
    known = ", ".join(sorted(_fields_at(root, loc[:-1]))) or "text keys"
    return ConfigIssue(
        _dotted(loc[:-1]),
        f"has the key {show(value)}, which is not a name.",
        f"use keys allowed there ({known}); quote keys meant as text.",
    )


def _not_allowed_issue(root: type[BaseModel], loc: Loc, value: Any, allowed: str) -> ConfigIssue:
    hint = suggest(str(value), _literal_choices(root, loc))
    return ConfigIssue(
        _dotted(loc), f"{show(value)} is not allowed{' (' + hint + ')' if hint else ''}.", f"use one of {allowed}."
    )


def _range_issue(root: type[BaseModel], loc: Loc, value: Any, ctx: Mapping[str, Any]) -> ConfigIssue:
    """`1.5 is out of range: must be ≤ 1.` with the field's whole range and meaning in the fix."""
    key = _dotted(loc)
    field = _field_info(root, loc)
    whole = int in _base_types(field.annotation if field else None)
    bounds = _closed_if_whole({**{name: ctx[name] for name in _BOUNDS if name in ctx}, **_bounds(field)}, whole)
    broken = [
        f"{symbol} {_number(limit)}"
        for name, symbol in _BOUNDS.items()
        if (limit := bounds.get(name)) is not None and not _holds(name, value, limit)
    ]
    rule = " and ".join(broken) or _range_text(bounds, whole)
    kind = "a whole number" if whole else "a number"
    shown = value if isinstance(value, str) else show(value)  # Pulumi hands numbers over as text
    return ConfigIssue(
        key,
        f"{shown} is out of range: must be {rule}.",
        f"set {key} to {kind} {_range_text(bounds, whole)}{_meaning(root, loc)}.",
    )


def _closed_if_whole(bounds: dict[str, Any], whole: bool) -> dict[str, Any]:
    """For whole numbers, `> 0` reads better as `≥ 1`."""
    if not whole:
        return bounds
    closed = {name: limit for name, limit in bounds.items() if name in ("ge", "le")}
    if "gt" in bounds:
        closed["ge"] = int(bounds["gt"]) + 1
    if "lt" in bounds:
        closed["le"] = int(bounds["lt"]) - 1
    return closed


def _string_issue(root: type[BaseModel], loc: Loc, value: Any, kind: str, ctx: Mapping[str, Any]) -> ConfigIssue:
    key = _dotted(loc)
    if kind == "string_pattern_mismatch":
        message = f"{show(value)} does not match the pattern {ctx.get('pattern')}."
    elif kind == "string_too_short":
        message = (
            "must not be empty."
            if ctx.get("min_length") == 1
            else f"{show(value)} is too short: must have at least {ctx.get('min_length')} characters."
        )
    else:
        message = f"{show(value)} is too long: must have at most {ctx.get('max_length')} characters."
    return ConfigIssue(key, message, f"set {key} to a value that fits{_meaning(root, loc)}.")


def _type_issue(root: type[BaseModel], loc: Loc, value: Any, expected: str) -> ConfigIssue:
    """`expected a mapping of keys (model.id, ...), got 'foo'.` and the like."""
    key = _dotted(loc)
    nested = _model_at(root, loc) if expected == "a mapping" else None
    if nested is not None:
        names = [f"{key}.{name}" for name in _key_order(nested)]
        shown = ", ".join(names[:_LISTED_KEYS]) + (", ..." if len(names) > _LISTED_KEYS else "")
        return ConfigIssue(
            key,
            f"expected a mapping of keys ({shown}), got {show(value)}.",
            f"write {key} as a mapping, one `key: value` per line indented under it.",
        )
    return ConfigIssue(key, f"expected {expected}, got {show(value)}.", f"set {key} to {expected}{_meaning(root, loc)}.")


def _key_order(model: type[BaseModel]) -> list[str]:
    """Required keys first, then the rest, each in declaration order."""
    fields = model.model_fields
    return sorted(fields, key=lambda name: not fields[name].is_required())


def _model_at(root: type[BaseModel], loc: Loc) -> type[BaseModel] | None:
    model = root
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        nested = nested_model(field.annotation) if field is not None else None
        if nested is None:
            return None
        model = nested
    return model


def nested_model(annotation: Any) -> type[BaseModel] | None:
    """The config group inside a field's annotation (`DockerConfig | None` -> DockerConfig), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = nested_model(arg)
            if found is not None:
                return found
    return None


def _fields_at(root: type[BaseModel], loc: Loc) -> list[str]:
    model = _model_at(root, loc)
    return list(model.model_fields) if model else []


def _field_info(root: type[BaseModel], loc: Loc) -> FieldInfo | None:
    parent = _model_at(root, loc[:-1]) if loc else None
    return parent.model_fields.get(str(loc[-1])) if parent else None


def _meaning(root: type[BaseModel], loc: Loc) -> str:
    """` — ` and the field's description, a leading flag moved to the end: ` — share of ... (--gpu-memory-utilization)`."""
    field = _field_info(root, loc)
    text = (field.description or "").strip().rstrip(".") if field else ""
    flag, colon, rest = text.partition(": ")
    if colon and flag.startswith("--") and " " not in flag:
        text = f"{rest} ({flag})"
    return f" — {text}" if text else ""


def _bounds(field: FieldInfo | None) -> dict[str, Any]:
    """gt/ge/lt/le from Field(...) and from constrained types such as `PositiveInt | None`."""
    if field is None:
        return {}
    metadata = [*field.metadata, *_annotated_metadata(field.annotation)]
    found: dict[str, Any] = {}
    for item in metadata:
        if isinstance(item, annotated_types.BaseMetadata):
            found.update({name: getattr(item, name) for name in _BOUNDS if getattr(item, name, None) is not None})
    return found


def _annotated_metadata(annotation: Any) -> list[Any]:
    if typing.get_origin(annotation) is typing.Annotated:
        return list(annotation.__metadata__)
    return [item for arg in typing.get_args(annotation) for item in _annotated_metadata(arg)]


def _base_types(annotation: Any) -> list[Any]:
    """The plain types inside Optional/Union/Annotated: `PositiveInt | None` -> [int, NoneType]."""
    if typing.get_origin(annotation) is typing.Annotated:
        return _base_types(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [base for arg in typing.get_args(annotation) for base in _base_types(arg)]
    return [annotation]


def _range_text(bounds: Mapping[str, Any], whole: bool) -> str:
    """`in (0, 1]`, `from 1 to 65535` (whole numbers), `≥ 1`, `≤ 100`."""
    low = ("(", bounds["gt"]) if "gt" in bounds else ("[", bounds["ge"]) if "ge" in bounds else None
    high = (")", bounds["lt"]) if "lt" in bounds else ("]", bounds["le"]) if "le" in bounds else None
    if low and high:
        if whole:
            return f"from {_number(low[1])} to {_number(high[1])}"
        return f"in {low[0]}{_number(low[1])}, {_number(high[1])}{high[0]}"
    if low:
        return f"{'>' if low[0] == '(' else '≥'} {_number(low[1])}"
    if high:
        return f"{'<' if high[0] == ')' else '≤'} {_number(high[1])}"
    return "in range"


def _holds(name: str, value: Any, limit: Any) -> bool:
    try:
        return bool({"gt": value > limit, "ge": value >= limit, "lt": value < limit, "le": value <= limit}[name])
    except TypeError:
        return False


def _number(limit: Any) -> str:
    return str(int(limit)) if isinstance(limit, float) and limit.is_integer() else str(limit)


def _literal_choices(root: type[BaseModel], loc: Loc) -> list[str]:
    field = _field_info(root, loc)
    return [str(arg) for arg in _literal_args(field.annotation)] if field else []


def _literal_args(annotation: Any) -> list[Any]:
    if typing.get_origin(annotation) is Literal:
        return list(typing.get_args(annotation))
    return [arg for sub in typing.get_args(annotation) for arg in _literal_args(sub)]
