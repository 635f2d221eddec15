"""Open a user's file only if it is a regular file, read it with a size cap, decode it with a clear message.

A FIFO, a character device (/dev/zero), a socket or a directory given where a file is expected would hang
or flood an unbounded `open().read()`; each is refused naming what the path is. The type is checked twice:
before opening (so a FIFO is never opened, which would block until a writer appears) and on the open
descriptor (so a path swapped for a FIFO between the two is refused too; O_NONBLOCK keeps that open from
blocking).
"""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Iterator
from pathlib import Path

CHUNK_BYTES = 1024 * 1024


class FileReadError(ValueError):
    """A file that cannot be read as asked; the message names the path and what it is."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path, self.reason = path, reason
        super().__init__(f"{path}: {reason}")


def describe_mode(mode: int) -> str:
    """What a non-regular path is, in words a user recognises."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _refuse_non_regular(path: Path, mode: int) -> None:
    if not stat.S_ISREG(mode):
        raise FileReadError(Path(path), f"is {describe_mode(mode)}, not a regular file")


def _open_regular(path: Path) -> int:
    """A read-only descriptor of the regular file at `path`. Raises FileReadError."""
    try:
        _refuse_non_regular(path, os.stat(path).st_mode)
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise FileReadError(Path(path), "no such file") from None
    except NotADirectoryError:
        raise FileReadError(Path(path), "no such file (a parent of it is not a directory)") from None
    except OSError as error:  # permission denied, a loop of symlinks, a broken mount, a name too long
        raise FileReadError(Path(path), f"cannot be read ({error.strerror or type(error).__name__})") from None
    try:
        _refuse_non_regular(path, os.fstat(descriptor).st_mode)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def read_bytes(path: str | Path, limit: int, too_large: str) -> bytes:
    """The whole file, at most `limit` bytes. `too_large`: the sentence that follows "larger than N" (the fix)."""
    file = Path(path)
    with os.fdopen(_open_regular(file), "rb") as stream:
        try:
            data = stream.read(limit + 1)
        except OSError as error:
            raise FileReadError(file, f"cannot be read ({error.strerror or type(error).__name__})") from None
    if len(data) > limit:
        raise FileReadError(file, f"is larger than {show_size(limit)}; {too_large}")
    return data


def read_text(path: str | Path, limit: int, too_large: str) -> str:
    """The file as UTF-8 text (a byte-order mark dropped). Raises FileReadError, naming the first bad byte."""
    return decode_utf8(read_bytes(path, limit, too_large), Path(path))


def read_text_prefix(path: str | Path, limit: int) -> str:
    """The first `limit` bytes as text, undecodable bytes replaced: for logs, whose start is what counts."""
    with os.fdopen(_open_regular(Path(path)), "rb") as stream:
        try:
            data = stream.read(limit)
        except OSError as error:
            raise FileReadError(Path(path), f"cannot be read ({error.strerror or type(error).__name__})") from None
    return data.decode("utf-8", errors="replace")


def iter_text_chunks(path: str | Path, limit: int, too_large: str, chunk: int = CHUNK_BYTES) -> Iterator[str]:
    """The file as UTF-8 text in pieces of about `chunk` bytes, for files parsed incrementally (memory stays
    at one chunk). Raises FileReadError past `limit` bytes or at the first byte that is not UTF-8."""
    file = Path(path)
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    total = 0
    with os.fdopen(_open_regular(file), "rb") as stream:
        while True:
            try:
                data = stream.read(chunk)
            except OSError as error:
                raise FileReadError(file, f"cannot be read ({error.strerror or type(error).__name__})") from None
            total += len(data)
            if total > limit:
                raise FileReadError(file, f"is larger than {show_size(limit)}; {too_large}")
            try:
                text = decoder.decode(data, final=not data)
            except UnicodeDecodeError as error:
                raise FileReadError(
                    file, f"is not UTF-8 text (byte {total - len(data) + error.start:,}); save it as UTF-8"
                ) from None
            if text:
                yield text
            if not data:
                return


def decode_utf8(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise FileReadError(Path(path), f"is not UTF-8 text (byte {error.start:,}); save it as UTF-8") from None


def show_size(size: int) -> str:
    return f"{size // 2**20} MiB" if size >= 2**20 else f"{size // 1024} KiB"
