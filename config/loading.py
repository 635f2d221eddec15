"""Bounded reading of a stack file: no input costs more than a few milliseconds per kilobyte.

A stack file is a few kilobytes that `pulumi config set` wrote: no anchors or aliases, a handful of levels.
So the loader refuses aliases (an alias bomb expands to gigabytes), and limits the file size, the nesting,
a scalar's length and an integer's digits while parsing, before any of it is turned into Python values.
Duplicate keys are an error naming the key path (YAML's spec forbids them; PyYAML keeps the last one).
Every problem names the line and column. The same bounds apply to values the Pulumi engine hands over.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from config.errors import ConfigError, ConfigIssue, show

MAX_FILE_BYTES = 64 * 1024  # a stack file with every key set is under 10 KB; PyYAML scans ~0.2 MB/s
MAX_DEPTH = 24  # the deepest config key (engine.speculative.*) sits at depth 4 under `config:`
MAX_SCALAR_CHARS = 4096  # longer than any id, path, PromQL selector or image reference the config takes
MAX_INT_DIGITS = 20  # beyond int64; every count has a far smaller bound in the config models
MAX_NODES = 2_000  # a stack file with every key set has about 150
# The only tag a value may carry: `!!str` keeps a string a string in every reader. Others (`!!binary`,
# `!!timestamp`, `!!set`, `!!python/...`) build values that no setting takes.
_ALLOWED_TAG = "tag:yaml.org,2002:str"
# YAML 1.2's core schema (yaml.org/spec/1.2.2 10.3.2): how a plain scalar reads in YAML 1.2. PyYAML reads
# YAML 1.1, where `010` is octal 8, `1_000` is 1000, `1:30` is 90, `yes`/`off` are booleans and `2024-01-01`
# is a date; Go's yaml.v3 (the Pulumi engine) and Pulumi's string-typed top-level values read them otherwise.
# A plain scalar PyYAML types as one of these, but whose text YAML 1.2 reads differently, is refused.
_CORE_READING = {
    "tag:yaml.org,2002:bool": re.compile(r"true|True|TRUE|false|False|FALSE"),
    "tag:yaml.org,2002:int": re.compile(r"[-+]?(0|[1-9][0-9]*)|0x[0-9a-fA-F]+"),
    "tag:yaml.org,2002:float": re.compile(
        r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.nan|\.NaN|\.NAN"
    ),
}
_WHAT_YAML_11_READ = {
    "tag:yaml.org,2002:bool": "a boolean",
    "tag:yaml.org,2002:int": "an integer",
    "tag:yaml.org,2002:float": "a number",
    "tag:yaml.org,2002:timestamp": "a date",
}


class LoadLimitError(yaml.MarkedYAMLError):
    """A limit of the bounded loader, with where it was hit."""


class BoundedLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases and counts depth, nodes, scalar length and integer digits."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._nodes = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise LoadLimitError(
                problem=f"an alias (*{event.anchor}) is not allowed in a stack file; write the value out",
                problem_mark=event.start_mark,
            )
        if isinstance(event, yaml.ScalarEvent) and len(event.value) > MAX_SCALAR_CHARS:
            raise LoadLimitError(
                problem=f"a value of {len(event.value)} characters is longer than the {MAX_SCALAR_CHARS} a stack file allows",
                problem_mark=event.start_mark,
            )
        _refuse_explicit_tag(event)
        self._depth, self._nodes = self._depth + 1, self._nodes + 1
        if self._depth > MAX_DEPTH or self._nodes > MAX_NODES:
            what = f"nesting deeper than {MAX_DEPTH} levels" if self._depth > MAX_DEPTH else f"over {MAX_NODES} values"
            raise LoadLimitError(problem=f"{what}; a stack file is a few shallow mappings", problem_mark=event.start_mark)
        try:
            node: yaml.Node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        _refuse_ambiguous_scalar(node)
        return node

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        digits = sum(char.isalnum() for char in str(node.value)) - str(node.value).count("0x")
        if digits > MAX_INT_DIGITS:
            raise LoadLimitError(
                problem=f"an integer of {digits} digits; no setting takes more than {MAX_INT_DIGITS}",
                problem_mark=node.start_mark,
            )
        return super().construct_yaml_int(node)  # type: ignore[no-any-return]


BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)


def _refuse_explicit_tag(event: yaml.Event) -> None:
    tag = getattr(event, "tag", None)
    implicit = getattr(event, "implicit", True)
    explicit = tag not in (None, "!") and (implicit is False or implicit == (False, False))
    if explicit and tag != _ALLOWED_TAG:
        raise LoadLimitError(
            problem=f"the tag {show(str(tag).replace('tag:yaml.org,2002:', '!!'))} is not allowed in a stack file; "
            "write the value without a tag (quote it to keep it a string)",
            problem_mark=event.start_mark,
        )


def _refuse_ambiguous_scalar(node: yaml.Node) -> None:
    """A plain scalar YAML 1.1 types (PyYAML, this check) while YAML 1.2 (the Pulumi engine) reads it otherwise."""
    if node.tag == "tag:yaml.org,2002:merge":
        raise LoadLimitError(
            problem="a merge key (<<) is not allowed in a stack file; write the keys out", problem_mark=node.start_mark
        )
    if not isinstance(node, yaml.ScalarNode) or node.style is not None or node.tag not in _WHAT_YAML_11_READ:
        return
    core = _CORE_READING.get(node.tag)
    if core is not None and core.fullmatch(node.value):
        return
    raise LoadLimitError(
        problem=f"{show(node.value)} is {_WHAT_YAML_11_READ[node.tag]} in YAML 1.1 but another value in YAML 1.2, "
        "so YAML readers (this check, the Pulumi engine) disagree on it; quote it for a string, or write a plain "
        "decimal number, true or false",
        problem_mark=node.start_mark,
    )


def read_stack_text(file: Path) -> str:
    """The file's text: a regular file of at most MAX_FILE_BYTES, UTF-8. Raises ConfigError naming the file."""
    from reading.files import FileReadError, read_text

    try:
        return read_text(file, MAX_FILE_BYTES, "a stack file is a few kilobytes")
    except FileReadError as error:
        raise ConfigError([ConfigIssue("", f"{error}.", "pass a Pulumi stack file, e.g. stacks/Pulumi.prod.yaml.")]) from None


def parse_stack_yaml(text: str) -> Any:
    """The document in `text`. Raises yaml.YAMLError (with a mark) on bad syntax, a limit or a duplicate key.

    A text read before gives a copy of its document (the caller may change it): PyYAML's pure-Python parser
    takes milliseconds a file, and one process may read the same file many times (a render reads Pulumi.yaml
    and the stack file, the test suite reads each shipped stack hundreds of times). A text that fails is
    parsed again each time, so each error is a fresh one."""
    return copy.deepcopy(_parsed_stack_yaml(text))


@lru_cache(maxsize=256)  # a stack file is at most MAX_FILE_BYTES: the cache stays under 16 MB
def _parsed_stack_yaml(text: str) -> Any:
    _refuse_deep_brackets(text)
    loader = BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _refuse_duplicate_keys(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _refuse_deep_brackets(text: str) -> None:
    """PyYAML's scanner is quadratic in flow nesting (`[[[[...`): refuse it before scanning. Brackets inside
    quotes count too, which only matters for values no setting takes."""
    depth = 0
    for found in re.finditer(r"[\[\]{}]", text):
        depth += 1 if found.group() in "[{" else -1
        if depth > 4 * MAX_DEPTH:
            line = text.count("\n", 0, found.start())
            mark = yaml.Mark(
                "<stack file>", found.start(), line, found.start() - text.rfind("\n", 0, found.start()) - 1, None, None
            )
            raise LoadLimitError(problem=f"brackets nested deeper than {4 * MAX_DEPTH} levels", problem_mark=mark)


def _refuse_duplicate_keys(root: yaml.Node) -> None:
    for path, mapping in _mappings(root, ()):
        seen: dict[Any, yaml.Node] = {}
        for key_node, _value in mapping.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else id(key_node)
            if key in seen:
                first = seen[key].start_mark.line + 1
                raise LoadLimitError(
                    problem=f"the key {_key_path((*path, str(key)))} appears twice (first on "
                    f"line {first}); YAML keeps only the last",
                    problem_mark=key_node.start_mark,
                )
            seen[key] = key_node


def _mappings(node: yaml.Node, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], yaml.MappingNode]]:
    if isinstance(node, yaml.MappingNode):
        yield path, node
        for key_node, value in node.value:
            yield from _mappings(value, (*path, str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else "?"))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from _mappings(item, (*path, f"[{index}]"))


def _key_path(parts: tuple[str, ...]) -> str:
    """`config.vllm-serving:engine.dtype` as the user reads it: `vllm-serving:engine.dtype`."""
    shown = parts[1:] if parts[:1] == ("config",) and len(parts) > 1 else parts
    return show(".".join(shown).replace(".[", "["))


def yaml_issue(file: object, error: yaml.YAMLError) -> ConfigIssue:
    """A YAML problem as one issue with its line and column."""
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return ConfigIssue(
        "",
        f"{file}: not a valid stack file{where}: {problem}.",
        "correct the YAML there; a stack file is what `pulumi config set` writes.",
    )


def check_bounds(raw: dict[str, Any]) -> list[ConfigIssue]:
    """The loader's limits on values from elsewhere (the Pulumi engine's JSON): depth, length, digits."""
    issues: list[ConfigIssue] = []
    stack: list[tuple[str, Any, int]] = [(key, value, 1) for key, value in raw.items()]
    while stack and len(issues) < 10:
        key, value, depth = stack.pop()
        if depth > MAX_DEPTH:
            issues.append(ConfigIssue(key, f"nests deeper than {MAX_DEPTH} levels.", "flatten it."))
        elif isinstance(value, str) and len(value) > MAX_SCALAR_CHARS:
            issues.append(
                ConfigIssue(
                    key,
                    f"is {show(value)} ({len(value)} characters), longer than the {MAX_SCALAR_CHARS} allowed.",
                    "shorten it.",
                )
            )
        elif isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 3.33 * MAX_INT_DIGITS:
            issues.append(ConfigIssue(key, f"is {show(value)}, over {MAX_INT_DIGITS} digits.", "use a smaller number."))
        elif isinstance(value, dict):
            stack += [(f"{key}.{k}", v, depth + 1) for k, v in value.items()]
        elif isinstance(value, list):
            stack += [(f"{key}[{i}]", v, depth + 1) for i, v in enumerate(value)]
    return issues
