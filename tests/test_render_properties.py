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
from collections.abc import Iterator
from typing import Any

import annotated_types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli.render import rendered_objects
from config.errors import ConfigError
from config.messages import nested_model
from config.secrets import SECRET_KEYS
from config.stack import StackConfig
from config.syntax import check_label, is_dns_subdomain
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


# --- The API server's rules for what this program renders ----------------------------------------------------
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SERVICE_NAME = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")  # DNS-1035 label (validation.go IsDNS1035Label)
_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")


def _labels(labels: dict[str, str] | None, where: str) -> Iterator[str]:
    for key, value in (labels or {}).items():
        try:
            check_label(key, value)
        except ValueError as error:
            yield f"{where}: {error}"


def _pod_specs(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        if isinstance(node.get("containers"), list):
            yield node
        for value in node.values():
            yield from _pod_specs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _pod_specs(item)


def _metadata_and_templates(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        if isinstance(node.get("metadata"), dict):
            yield node["metadata"]
        for key in ("matchLabels", "selector"):
            if isinstance(node.get(key), dict) and all(isinstance(v, str) for v in node[key].values()):
                yield {"labels": node[key]}
        for value in node.values():
            yield from _metadata_and_templates(value)
    elif isinstance(node, list):
        for item in node:
            yield from _metadata_and_templates(item)


def _container_problems(container: dict[str, Any]) -> Iterator[str]:
    where = f"container {container.get('name')}"
    ports = [port["containerPort"] for port in container.get("ports", [])]
    port_names = [port["name"] for port in container.get("ports", []) if "name" in port]
    env_names = [entry["name"] for entry in container.get("env", [])]
    if len(set(ports)) != len(ports) or len(set(port_names)) != len(port_names):
        yield f"{where}: a port twice: {ports} {port_names}"
    if len(set(env_names)) != len(env_names):
        yield f"{where}: an env name twice: {env_names}"
    yield from (f"{where}: env name {name!r}" for name in env_names if not _ENV_NAME.match(name))
    if not IMAGE_REFERENCE.check(container.get("image", "")):
        yield f"{where}: image {container.get('image')!r}"


def admission_problems(obj: dict[str, Any]) -> list[str]:
    """What the API server (not the OpenAPI schema) would refuse in `obj`; [] when it admits it."""
    meta, kind = obj.get("metadata", {}), obj.get("kind")
    problems = []
    name = meta.get("name", "")
    if not is_dns_subdomain(name) or (kind in ("Service", "Namespace") and not (len(name) <= 63 and _SERVICE_NAME.match(name))):
        problems.append(f"{kind} name {name!r}")
    if "namespace" in meta and not (len(meta["namespace"]) <= 63 and _DNS_LABEL.match(meta["namespace"])):
        problems.append(f"{kind} namespace {meta['namespace']!r}")
    for found in _metadata_and_templates(obj):
        problems += _labels(found.get("labels"), f"{kind} labels")
        problems += _labels(dict.fromkeys(found.get("annotations") or {}, ""), f"{kind} annotation keys")
    for pod in _pod_specs(obj):
        for container in [*pod.get("initContainers", []), *pod["containers"]]:
            problems += _container_problems(container)
    return problems


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
    assert admission_problems(pod) == ["container c: an env name twice: ['X', 'X']"]


def test_the_admission_check_finds_a_label_value_with_a_space() -> None:
    assert admission_problems({"kind": "ConfigMap", "metadata": {"name": "m", "labels": {"release": "a b"}}})
