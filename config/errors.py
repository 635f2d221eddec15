"""Config errors as data: each issue names the key as typed, the value, the rule and the fix."""

from __future__ import annotations

import difflib
import re
import reprlib
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


MAX_NAMES_SUGGESTED = 4
NEAR_SPELLING = 0.8  # difflib ratio of the folded names: one or two characters off in a product or model name


def suggest_name(word: str, choices: list[str] | tuple[str, ...]) -> str:
    """A "did you mean" hint for a GPU product or model id, only for a near-identical spelling.

    In these names the numbers are the product or the size (A100 and A10G, H100 and H200, 8B and 70B are
    different things), so a suggestion keeps every number typed, in order, and either starts with what was
    typed (`A100` -> the A100 variants, all named) or differs by a typo once case and separators are folded.
    """
    typed, numbers = _folded(word), _numbers(word)
    same = [choice for choice in choices if _folded(choice) == typed]
    near = same or [
        choice
        for choice in choices
        if _keeps_numbers(numbers, _numbers(choice)) and any(_near(typed, name) for name in _spellings(choice))
    ]
    if not near:
        return ""
    if len(near) == 1:
        return f"did you mean `{near[0]}`?"
    return f"did you mean one of {', '.join(f'`{name}`' for name in near[:MAX_NAMES_SUGGESTED])}?"


TOKEN_TYPO = 0.75  # difflib ratio of two name parts: a transposed or missing letter, not another word


def model_hint(typed: str, choices: list[str] | tuple[str, ...]) -> str:
    """The hint for a model id the catalog does not hold: "did you mean" only for a misspelling of a catalog id
    (every part of the name there, each at most a typo away); a catalog model that differs by whole parts (an
    `-AWQ` checkpoint of it, its base model without `-it`) is named as the different model it is."""
    typo = [choice for choice in choices if _model_typo(typed, choice)]
    if typo:
        return f"did you mean `{typo[0]}`?"
    related = [choice for choice in choices if _model_relative(typed, choice)][:MAX_NAMES_SUGGESTED]
    if not related:
        return ""
    names = ", ".join(f"`{name}`" for name in related)
    return f"the catalog's {names} {'is a different model' if len(related) == 1 else 'are different models'}"


def _name_parts(typed: str, choice: str) -> tuple[list[str], list[str]]:
    """The parts of both names (split at - _ . /), the organisation left out when it was not typed."""
    mine = choice if "/" in typed else choice.rsplit("/", 1)[-1]
    return re.split(r"[-_./\s]+", typed.casefold().strip()), re.split(r"[-_./\s]+", mine.casefold())


def _model_typo(typed: str, choice: str) -> bool:
    if _folded(typed) in (_folded(choice), _folded(choice.rsplit("/", 1)[-1])):
        return True
    mine, theirs = _name_parts(typed, choice)
    return len(mine) == len(theirs) and all(_part_typo(a, b) for a, b in zip(mine, theirs, strict=True))


def _part_typo(typed: str, part: str) -> bool:
    if typed == part:
        return True
    return _numbers(typed) == _numbers(part) and difflib.SequenceMatcher(None, typed, part).ratio() >= TOKEN_TYPO


def _model_relative(typed: str, choice: str) -> bool:
    """The same name with whole parts added or dropped: a checkpoint or variant of a catalog model (of the
    organisation typed, if one was)."""
    if "/" in typed and typed.split("/", 1)[0].casefold() != choice.split("/", 1)[0].casefold():
        return False
    mine, theirs = _name_parts(typed, choice)
    opcodes = difflib.SequenceMatcher(None, mine, theirs, autojunk=False).get_opcodes()
    kinds = {tag for tag, *_ in opcodes}
    shared = sum(i2 - i1 for tag, i1, i2, _, _ in opcodes if tag == "equal")
    return kinds <= {"equal", "insert", "delete"} and kinds != {"equal"} and shared >= 2


def _folded(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.casefold())


def _numbers(name: str) -> list[str]:
    return re.findall(r"\d+", name)


def _spellings(choice: str) -> tuple[str, ...]:
    """The whole name, and a model id without its organisation (`Llama-3.1-8B-Instruct`)."""
    return (_folded(choice), _folded(choice.rsplit("/", 1)[-1]))


def _near(typed: str, name: str) -> bool:
    prefix = len(typed) >= 3 and name.startswith(typed)
    return prefix or difflib.SequenceMatcher(None, typed, name).ratio() >= NEAR_SPELLING


def _keeps_numbers(typed: list[str], choice: list[str]) -> bool:
    remaining = iter(choice)
    return all(number in remaining for number in typed)  # a subsequence: every typed number, in order


SHOWN_CHARS = 80  # the longest a quoted value gets in any message


class _BoundedRepr(reprlib.Repr):
    """reprlib's bounded walk (levels, items, string length), with integers too large to print named by size."""

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 256:  # str() of a 5,000-digit int raises ValueError; its size is what matters
            return f"<an integer of {x.bit_length()} bits>"
        return super().repr_int(x, level)


_REPR = _BoundedRepr()
_REPR.maxlevel, _REPR.maxdict, _REPR.maxlist, _REPR.maxtuple, _REPR.maxset = 3, 6, 6, 6, 6
_REPR.maxstring = _REPR.maxlong = _REPR.maxother = SHOWN_CHARS


def show(value: Any) -> str:
    """A value as the user typed it, short enough for one line. Bounded work: an alias-expanded structure or a
    10 MB string costs no more to show than a short one. The one truncation helper every message uses."""
    text = repr(value[: SHOWN_CHARS + 1]) if isinstance(value, str) else _REPR.repr(value)
    if isinstance(value, bool | float) or value is None:
        text = str(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."
