"""Config errors as data: each issue names the key as typed, the value, the rule and the fix."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

PROJECT = "vllm-serving"


@dataclass(frozen=True)
class ConfigIssue:
    """One problem with one config key."""

    key: str  # dotted path as typed in the stack file, without the project prefix
    message: str  # the rule that was broken, naming the value
    fix: str = ""

    def render(self) -> str:
        text = f"{PROJECT}:{self.key}: {self.message}" if self.key else self.message
        return f"{text} Fix: {self.fix}" if self.fix else text


class ConfigError(ValueError):
    """Every problem found in a stack's config, reported together."""

    def __init__(self, issues: list[ConfigIssue]) -> None:
        self.issues = list(issues)
        super().__init__(self.render())

    def render(self) -> str:
        count = len(self.issues)
        header = f"Invalid stack config ({count} problem{'s' if count != 1 else ''}):"
        return "\n".join([header, *(f"  - {issue.render()}" for issue in self.issues)])


def suggest(word: str, choices: list[str] | tuple[str, ...]) -> str:
    """A "did you mean" hint for a misspelled key or value, or an empty string."""
    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean `{matches[0]}`?" if matches else ""


def show(value: Any) -> str:
    """A value as the user typed it, short enough for one line."""
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 80 else text[:77] + "..."
