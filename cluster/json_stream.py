"""Parse one big JSON object, `{"kind": "List", "items": [...]}`, yielding the items one at a time.

The standard json module parses a whole document at once: a 108 MB `kubectl get nodes -o json` becomes
about a gigabyte of Python objects. Here the top level is walked by hand and each value is parsed on its
own with json's raw_decode (in C), from a buffer that holds one value plus a chunk, so memory follows the
largest item, not the file. Numbers are bounded (reading/numbers.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from reading.files import show_size
from reading.numbers import BOUNDED_JSON, NumberError

_WHITESPACE = re.compile(r"[ \t\n\r]*")


class JsonStreamError(ValueError):
    """Not JSON, nested too deeply, a number out of bounds, or an item over the cap."""


class _Buffer:
    """The unparsed text: what is left of the chunks read so far."""

    def __init__(self, chunks: Iterable[str], max_value_chars: int) -> None:
        self._chunks = iter(chunks)
        self._max = max_value_chars
        self.text, self.pos, self.offset, self.eof = "", 0, 0, False

    def _more(self) -> bool:
        piece = next(self._chunks, None) if not self.eof else None
        if piece is None:
            self.eof = True
            return False
        self.text, self.offset, self.pos = self.text[self.pos :] + piece, self.offset + self.pos, 0
        return True

    def peek(self) -> str:
        """The next character that is not whitespace ("" at the end)."""
        while True:
            self.pos = _WHITESPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self._more():
                return ""

    def take(self, expected: str, where: str) -> None:
        found = self.peek()
        if found != expected:
            raise JsonStreamError(f"not JSON (expected {expected!r} {where}, found {found[:1]!r} at character {self.where:,})")
        self.pos += 1

    @property
    def where(self) -> str | int:
        return self.offset + self.pos

    def value(self, where: str) -> Any:
        """The JSON value at the cursor. Reads more text until it is complete (doubling, so linear)."""
        self.peek()
        while True:
            try:
                found, end = BOUNDED_JSON.raw_decode(self.text, self.pos)
                if end < len(self.text) or self.eof:  # a number may go on in the next chunk
                    self.pos = end
                    return found
                error = None
            except json.JSONDecodeError as failure:
                error = failure
            except RecursionError:
                raise JsonStreamError(f"JSON nested too deeply ({where})") from None
            except NumberError as failure:  # final once the whole value is read: a number may be cut here
                if self.eof or len(self.text) - self.pos > self._max:
                    raise JsonStreamError(f"{where}: {failure}") from None
                error = None
            self._grow(where, error)

    def _grow(self, where: str, error: json.JSONDecodeError | None) -> None:
        pending = len(self.text) - self.pos
        if error is not None and (self.eof or pending > self._max):
            truncated = error.pos >= len(self.text) - 1 or error.msg.startswith("Unterminated")
            if pending > self._max and truncated:
                raise JsonStreamError(f"{where} is larger than {show_size(self._max)}, more than any object the checks read")
            raise JsonStreamError(f"not JSON ({error.msg} at character {self.offset + error.pos:,})")
        while len(self.text) - self.pos < 2 * max(pending, 1) and self._more():
            pass


class ListStream:
    """Iterate for (index, item) of the list under `key`; then `value` holds the other top-level keys (and
    `key` mapped to [] when it was a list). A document that is not an object leaves `value` empty."""

    def __init__(self, chunks: Iterable[str], key: str, max_value_chars: int) -> None:
        self._buffer = _Buffer(chunks, max_value_chars)
        self._key = key
        self.value: dict[str, Any] = {}

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        buffer = self._buffer
        if buffer.peek() != "{":
            buffer.value("the document")
        else:
            buffer.pos += 1
            yield from self._members(buffer)
        if buffer.peek():
            raise JsonStreamError(f"not JSON (extra data at character {buffer.where:,})")

    def _members(self, buffer: _Buffer) -> Iterator[tuple[int, Any]]:
        if buffer.peek() == "}":
            buffer.pos += 1
            return
        while True:
            if buffer.peek() != '"':
                raise JsonStreamError(f"not JSON (expected a key in double quotes at character {buffer.where:,})")
            name = str(buffer.value("a key"))
            buffer.take(":", f"after the key {name[:40]!r}")
            if name == self._key and buffer.peek() == "[":
                buffer.pos += 1
                self.value[name] = []
                yield from self._items(buffer)
            else:
                self.value[name] = buffer.value(name[:40])
            if buffer.peek() == ",":
                buffer.pos += 1
                continue
            buffer.take("}", "to close the document")
            return

    def _items(self, buffer: _Buffer) -> Iterator[tuple[int, Any]]:
        if buffer.peek() == "]":
            buffer.pos += 1
            return
        index = 0
        while True:
            yield index, buffer.value(f"{self._key}[{index}]")
            index += 1
            if buffer.peek() == ",":
                buffer.pos += 1
                continue
            buffer.take("]", f"after {self._key}[{index - 1}]")
            return


def stream_list(chunks: Iterable[str], key: str, max_value_chars: int) -> ListStream:
    return ListStream(chunks, key, max_value_chars)
