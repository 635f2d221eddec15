"""A closed stdout (`python -m preflight STACK | head -1`) ends the command quietly, as Unix tools do."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

# A Unix tool killed by SIGPIPE is reported by the shell as 128 + 13; we exit with the same status.
EXIT_CLOSED_PIPE = 141


def quiet_on_closed_pipe(run: Callable[[], int]) -> int:
    """run(), with stdout flushed inside; a reader that went away is no error to report (exit 141, silent).

    The Python docs' recipe (library/signal.html, "Note on SIGPIPE"): point stdout at devnull so the
    interpreter's final flush does not raise again and print "Exception ignored".
    """
    try:
        code = run()
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_CLOSED_PIPE


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout replaced by an object without a descriptor (tests)
        pass
