"""Numbers from users' files, parsed with bounds: never an OverflowError, an inf, or a 5,000-digit int.

Python's int() refuses strings of more than 4,300 digits with a ValueError (sys.int_info, 3.11), float()
turns "1e400" into inf and int(inf) raises OverflowError, and str.isdigit() accepts superscripts ("²")
that int() refuses. So every number read from a file goes through here: ASCII digits, a digit bound, finite.
"""

from __future__ import annotations

import json
import math
import re

MAX_JSON_INT_DIGITS = 30  # beyond any count or byte size an API object or a config.json holds (int64: 19)
MAX_JSON_FLOAT_CHARS = 64
_WHOLE = re.compile(r"[0-9]+", re.ASCII)


class NumberError(ValueError):
    """A number outside the bounds; the message quotes it (truncated)."""


def preview(text: str, width: int = 24) -> str:
    """`'1111…' (5,000 digits)`: a long number named without printing it."""
    return repr(text) if len(text) <= width else f"{text[:width]!r}… ({len(text):,} characters)"


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_JSON_INT_DIGITS:
        raise NumberError(f"an integer of {digits:,} digits (at most {MAX_JSON_INT_DIGITS} are read)")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text[: MAX_JSON_FLOAT_CHARS + 1])
    if len(text) > MAX_JSON_FLOAT_CHARS or not math.isfinite(value):
        raise NumberError(f"the number {preview(text)} is out of range")
    return value


def _no_constant(text: str) -> float:
    raise NumberError(f"{text} is not a JSON number")


BOUNDED_JSON = json.JSONDecoder(parse_int=_bounded_int, parse_float=_finite_float, parse_constant=_no_constant)
BOUNDED_INTS = json.JSONDecoder(parse_int=_bounded_int)  # NaN and inf kept, for a validator to name the key


def loads(text: str, finite: bool = True) -> object:
    """json.loads with bounded integers, and (finite) floats. Raises json.JSONDecodeError, NumberError or
    RecursionError."""
    return (BOUNDED_JSON if finite else BOUNDED_INTS).decode(text)


def whole_number(text: str, max_digits: int = 18) -> int | None:
    """ "8" -> 8; None for anything but 1 to max_digits ASCII digits (a superscript, "1e400", "-1", "8.5")."""
    if len(text) <= max_digits and _WHOLE.fullmatch(text):
        return int(text)
    return None


def figure(text: str, max_digits: int = 18) -> float:
    """A decimal figure as a log prints it ("476,016", "-1.5"). Raises NumberError past max_digits digits."""
    digits = sum(char.isdigit() for char in text)
    if digits > max_digits:
        raise NumberError(f"the figure {preview(text)} has {digits:,} digits; vLLM prints at most {max_digits}")
    return float(text.replace(",", ""))


_GO_DURATION = re.compile(r"([0-9]+(?:\.[0-9]+)?)(h|ms|m|s)")
_GO_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def go_duration_seconds(text: str) -> float | None:
    """A Go duration (300s, 5m, 1h30m, 850ms, 0s: the kubelet's and the add-on's) in seconds; None when it is
    not one."""
    parts = _GO_DURATION.findall(text.strip())
    if not parts or "".join(a + u for a, u in parts) != text.strip():
        return None
    return sum(float(amount) * _GO_UNITS[unit] for amount, unit in parts)
