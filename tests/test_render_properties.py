"""Accepted means deployable: every stack the validation accepts renders objects the API server admits, beyond
the OpenAPI schema (tests/test_k8s_schema.py): object names, label keys and values, annotation keys, unique
container ports and env names per container; and every refusal names a key.

Stacks are drawn from the schema: each drawn key's strategy follows its field's type and bounds. The fast
suite draws a few examples; `HYPOTHESIS_PROFILE=long` draws many (the long run the report quotes).
"""

from __future__ import annotations

import os
import re
import types
import typing
from typing import Any

import annotated_types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli.render import rendered_objects
from config.errors import ConfigError
from config.messages import nested_model
from config.secrets import SECRET_KEYS
from config.stack import StackConfig
from tests import admission
from tests.factories import merge, raw_config
from validation import assess
from validation.keys import validate_config
from validation.landing import IMAGE_REFERENCE

settings.register_profile("fast", max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "fast")

# The keys drawn: every one lands in a rendered field or takes part in a rule between values.
DRAWN_KEYS = (
    "namespace.name",
    "monitoring.release",
    "monitoring.monitor_labels",
    "gpu.node_selector",
    "smoke_test.image",
    "scheduling.priority_class_name",
    "server.port",
    "server.cpu",
    "multinode.master_port",
    "multinode.nccl_env",
    "vllm.extra_env",
    "cache.storage_class_name",
)
# Layouts the drawn keys are merged into: one node, and a two-node group (LeaderWorkerSet) with RWX storage.
LAYOUTS: tuple[dict[str, Any], ...] = (
    {},
    {"engine": {"tensor_parallel_size": 2, "nnodes": 2}, "cache": {"storage_class_name": "efs-sc"}},
)
# Text as a user types it: mostly close to valid (so many stacks are accepted), sometimes anything.
NAMEISH = st.from_regex(r"[a-z0-9]([-a-z0-9.]{0,12}[a-z0-9])?", fullmatch=True)
ANY_TEXT = st.text(alphabet="abzAZ09-._/ :@=", max_size=70)
TEXT = st.one_of(NAMEISH, ANY_TEXT, st.sampled_from(["", "a" * 63, "a" * 64, "system-node-critical", "10.0.0.1"]))
ENV_NAME = st.one_of(
    st.from_regex(r"[A-Z][A-Z0-9_]{0,12}", fullmatch=True),
    st.sampled_from(["NCCL_IB_HCA", "AWS_ENDPOINT_URL", "CUDA_VISIBLE_DEVICES", "HOME", "A=B", "1X"]),
)
PORT_LIKE = st.sampled_from([8000, 29501])


def _bounds(metadata: list[Any]) -> tuple[int, int]:
    low, high = -(2**40), 2**40
    for item in metadata:
        if isinstance(item, annotated_types.Gt):
            low = max(low, int(item.gt) + 1)  # type: ignore[call-overload]
        elif isinstance(item, annotated_types.Ge):
            low = max(low, int(item.ge))  # type: ignore[call-overload]
        elif isinstance(item, annotated_types.Lt):
            high = min(high, int(item.lt) - 1)  # type: ignore[call-overload]
        elif isinstance(item, annotated_types.Le):
            high = min(high, int(item.le))  # type: ignore[call-overload]
    return low, high


def strategy_for(annotation: Any, metadata: list[Any], name: str) -> st.SearchStrategy[Any]:
    """Values within the field's type: its bounds for numbers, text for strings, mappings of text."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return strategy_for(args[0], [*metadata, *annotation.__metadata__], name)
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(strategy_for(arg, metadata, name) for arg in args))
    if annotation is type(None):
        return st.none()
    if annotation is int:
        low, high = _bounds(metadata)
        return st.one_of(PORT_LIKE.filter(lambda port: low <= port <= high), st.integers(low, high))
    if annotation is str:
        return TEXT
    if origin is dict:
        keys = ENV_NAME if name.endswith("env") else st.one_of(NAMEISH, ANY_TEXT)
        return st.dictionaries(keys, TEXT, max_size=3)
    raise NotImplementedError(f"no strategy for {annotation!r} ({name})")


def field_of(dotted: str) -> Any:
    model: Any = StackConfig
    for part in dotted.split("."):
        field = model.model_fields[part]
        model = nested_model(field.annotation)
    return field


def key_strategy(dotted: str) -> st.SearchStrategy[Any]:
    field = field_of(dotted)
    return strategy_for(field.annotation, list(field.metadata), dotted)


def nested(dotted: str, value: Any) -> dict[str, Any]:
    head, _, rest = dotted.partition(".")
    return {head: nested(rest, value) if rest else value}


@st.composite
def stacks(draw: st.DrawFn) -> dict[str, Any]:
    raw = merge(raw_config(), draw(st.sampled_from(LAYOUTS)))
    for dotted in draw(st.lists(st.sampled_from(DRAWN_KEYS), unique=True, max_size=5)):
        raw = merge(raw, nested(dotted, draw(key_strategy(dotted))))
    return raw


# --- The API server's rules for what this program renders: tests/admission.py, and the image references ---------
def admission_problems(obj: dict[str, Any]) -> list[str]:
    """What the API server (not the OpenAPI schema) would refuse in `obj`; [] when it admits it."""
    images = [
        c.get("image", "")
        for _, pod in admission.pod_specs(obj)
        for c in [*pod.get("initContainers", []), *pod.get("containers", [])]
    ]
    return admission.object_problems(obj) + [f"image {image!r}" for image in images if not IMAGE_REFERENCE.check(image)]


def _names_a_key(key: str) -> bool:
    group = re.split(r"[.\[]", key, maxsplit=1)[0]
    return group in StackConfig.model_fields or group in SECRET_KEYS


@settings(settings.get_profile(PROFILE))
@given(stacks())
def test_every_accepted_stack_renders_objects_the_api_server_admits_and_every_refusal_names_a_key(raw: dict[str, Any]) -> None:
    try:
        cfg = validate_config(raw)
    except ConfigError as error:
        assert all(_names_a_key(issue.key) and issue.message for issue in error.issues), error.render()
        return
    verdict = assess(cfg, frozenset(SECRET_KEYS))
    assert all(_names_a_key(issue.key) for issue in verdict.issues), verdict.issues
    if verdict.issues or verdict.plan is None:
        return
    problems = [problem for obj in rendered_objects(verdict.plan) for problem in admission_problems(obj)]
    assert not problems, problems


def test_the_admission_check_finds_a_duplicate_env_name() -> None:
    pod = {
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "a:1", "env": [{"name": "X"}, {"name": "X"}]}]},
    }
    assert admission_problems(pod) == ["Pod 'p' pod container c: env 'X' twice"]


def test_the_admission_check_finds_a_label_value_with_a_space() -> None:
    assert admission_problems({"kind": "ConfigMap", "metadata": {"name": "m", "labels": {"release": "a b"}}})
