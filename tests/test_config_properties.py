"""Property tests over the config schema: any input validates or fails with a clean ConfigError.

Inputs are drawn to resemble the shipped stacks and then broken: values swapped for other types, extreme
numbers and unicode, keys added, misspelled or dropped, groups replaced by scalars or lists.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from config.errors import ConfigError
from config.messages import nested_model
from config.sources import read_stack_file
from config.stack import StackConfig
from tests.factories import load_pulumi_config, load_stack_file
from tests.harness import run_program
from validation.keys import validate_config

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted([*ROOT.glob("stacks/*.yaml"), *ROOT.glob("stacks/examples/*.yaml")])
BOUNDED = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


SHIPPED_RAW = [read_stack_file(path)[0] for path in SHIPPED]


def _field_names(model: type[BaseModel]) -> set[str]:
    names = set(model.model_fields)
    for field in model.model_fields.values():
        nested = nested_model(field.annotation)
        if nested is not None:
            names |= _field_names(nested)
    return names


FIELD_NAMES = sorted(_field_names(StackConfig))
NUMBERS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 1, 0.5, 1.0000001, 65536, 2**63, -(2**63), 1e308, 1e-308]),
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=20), st.sampled_from(["", "latest", "0.33.0"]))
KEYS = st.one_of(st.sampled_from(FIELD_NAMES), st.text(min_size=1, max_size=12))
VALUES = st.recursive(
    SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=4)), max_leaves=8
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a nested dict/list a mutation can land."""
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Callable[[Any], Any]) -> Any:
    if not path:
        return new(value)
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    return [_replace(item, rest, new) if index == head else item for index, item in enumerate(value)]


@st.composite
def mutated_stacks(draw: st.DrawFn) -> dict[str, Any]:
    """A shipped stack with one to four mutations: a value swapped, a key added, renamed or dropped."""
    raw: Any = draw(st.sampled_from(SHIPPED_RAW))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        raw = _mutate(draw, raw)
    return raw if isinstance(raw, dict) else {}


def _mutate(draw: st.DrawFn, raw: Any) -> Any:
    places = _paths(raw)[1:]
    if not places:
        return {draw(KEYS): draw(VALUES)}
    path = draw(st.sampled_from(places))
    kind = draw(st.sampled_from(["swap", "add", "rename", "drop"]))
    if kind == "swap":
        value = draw(VALUES)
        return _replace(raw, path, lambda _old: value)
    if kind == "add":
        key, value = draw(KEYS), draw(VALUES)
        return _replace(raw, path[:-1], lambda parent: _with_key(parent, key, value))
    suffix = draw(st.text(min_size=1, max_size=2)) if kind == "rename" else None
    return _replace(raw, path[:-1], lambda parent: _without(parent, path[-1], suffix))


def _with_key(parent: Any, key: str, value: Any) -> Any:
    return {**parent, key: value} if isinstance(parent, dict) else [*parent, value]


def _without(parent: Any, key: Any, renamed_suffix: str | None) -> Any:
    if not isinstance(parent, dict):
        return [item for index, item in enumerate(parent) if index != key]
    kept = {k: v for k, v in parent.items() if k != key}
    return {**kept, f"{key}{renamed_suffix}": parent[key]} if renamed_suffix else kept


@st.composite
def in_range_stacks(draw: st.DrawFn) -> dict[str, Any]:
    """A shipped stack with engine and vllm settings redrawn inside their documented ranges."""
    raw = dict(draw(st.sampled_from(SHIPPED_RAW)))
    raw.pop("docker", None)
    raw["target"] = "kubernetes"
    engine = {k: v for k, v in dict(raw.get("engine") or {}).items() if k != "speculative"}
    engine.update(
        draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "gpu_memory_utilization": st.floats(min_value=0.01, max_value=1.0),
                    "max_num_seqs": st.integers(min_value=1, max_value=4096),
                    "enforce_eager": st.booleans(),
                    "enable_prefix_caching": st.booleans(),
                    "block_size": st.sampled_from([8, 16, 32, 64, 128]),
                    "dtype": st.sampled_from(["auto", "half", "float16", "bfloat16"]),
                    "served_model_name": st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,29}\Z"),
                },
            )
        )
    )
    raw["engine"] = engine
    scaling = raw.get("autoscaling") or {}
    if scaling.get("enabled"):  # replicas is the starting count inside KEDA's bounds
        low, high = max(1, scaling.get("min_replica_count", 1)), scaling.get("max_replica_count", 4)
    else:
        low, high = 1, 64
    raw["replicas"] = draw(st.integers(min_value=low, max_value=high))
    raw.get("gpu", {}).pop("count", None)
    return raw


def _validate_or_config_error(raw: dict[str, Any]) -> StackConfig | ConfigError:
    try:
        return validate_config(raw)
    except ConfigError as error:
        return error


def _assert_clean(error: ConfigError) -> None:
    assert error.issues, "a ConfigError must name at least one problem"
    for issue in error.issues:
        text = issue.render()
        assert isinstance(issue.key, str) and text.strip() and "Traceback" not in text, text


@BOUNDED
@given(mutated_stacks())
def test_any_mutated_stack_validates_or_fails_with_a_clean_config_error(raw: dict[str, Any]) -> None:
    outcome = _validate_or_config_error(raw)
    if isinstance(outcome, ConfigError):
        _assert_clean(outcome)


@BOUNDED
@given(st.dictionaries(KEYS, VALUES, max_size=6))
def test_any_random_mapping_validates_or_fails_with_a_clean_config_error(raw: dict[str, Any]) -> None:
    outcome = _validate_or_config_error(raw)
    if isinstance(outcome, ConfigError):
        _assert_clean(outcome)


@BOUNDED
@given(mutated_stacks())
def test_validation_gives_the_same_outcome_twice(raw: dict[str, Any]) -> None:
    first, second = _validate_or_config_error(raw), _validate_or_config_error(raw)
    if isinstance(first, ConfigError):
        assert isinstance(second, ConfigError) and first.render() == second.render()
    else:
        assert isinstance(second, StackConfig) and first.model_dump_json() == second.model_dump_json()


@BOUNDED
@given(in_range_stacks())
def test_a_stack_with_settings_inside_their_documented_ranges_validates_deterministically(raw: dict[str, Any]) -> None:
    first, second = validate_config(raw), validate_config(raw)
    assert first == second and first.model_dump_json() == second.model_dump_json()


@pytest.fixture(scope="module")
def stack_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One file every example overwrites (a module-scoped folder: hypothesis reruns the test, not the fixture)."""
    return tmp_path_factory.mktemp("properties") / "Pulumi.generated.yaml"


@settings(max_examples=60, deadline=None)
@given(document=st.one_of(mutated_stacks(), VALUES))
def test_any_stack_file_on_disk_loads_or_fails_with_a_clean_config_error(stack_file: Path, document: Any) -> None:
    path = stack_file
    body = {"config": {f"vllm-serving:{k}": v for k, v in document.items()}} if isinstance(document, dict) else document
    path.write_text(yaml.safe_dump(body, allow_unicode=True), encoding="utf-8")
    try:
        load_stack_file(path)
    except ConfigError as error:
        _assert_clean(error)


def _pulumi_safe(raw: dict[str, Any]) -> dict[str, Any]:
    """Pulumi config holds text and JSON; NaN and infinity are not JSON, so they travel as text."""

    def scrub(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return str(value)
        if isinstance(value, dict):
            return {str(k): scrub(v) for k, v in value.items()}
        return [scrub(v) for v in value] if isinstance(value, list) else value

    return {str(k): scrub(v) for k, v in raw.items()}


@settings(max_examples=40, deadline=None)
@given(mutated_stacks())
def test_any_pulumi_config_loads_or_fails_with_a_clean_config_error(raw: dict[str, Any]) -> None:
    try:
        run_program(load_pulumi_config, _pulumi_safe(raw))
    except ConfigError as error:
        _assert_clean(error)


@pytest.mark.parametrize("path", SHIPPED, ids=[path.stem for path in SHIPPED])
def test_every_shipped_stack_is_a_valid_seed_for_the_mutations(path: Path) -> None:
    assert isinstance(validate_config(read_stack_file(path)[0]), StackConfig)
