"""Hostile and malformed stack files for the fuzz tests: random structures, unicode, huge and non-finite
numbers, deep nesting, alias bombs, and plain garbage text. Each case is the text of one stack file."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

BASE: dict[str, Any] = {
    "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
    "gpu": {"product": "A100-SXM4-40GB"},
    "engine": {"max_model_len": 16384, "max_num_seqs": 128, "served_model_name": "llama-8b"},
    "vllm": {"version": "0.33.0"},
    "replicas": 1,
}

numbers = st.one_of(
    st.integers(),
    st.integers(min_value=10**18, max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 2**31, 2**63, 10**30, float("nan"), float("inf"), -float("inf"), 1e308]),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    numbers,
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=8).map(lambda s: s * 50),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=12,
)
KEYS = [
    "model",
    "model.id",
    "model.local_path",
    "gpu",
    "gpu.product",
    "gpu.node_selector",
    "engine",
    "engine.max_model_len",
    "engine.max_num_batched_tokens",
    "engine.extra_args",
    "engine.served_model_name",
    "engine.gpu_memory_utilization",
    "vllm",
    "vllm.tag",
    "replicas",
    "target",
    "namespace",
    "namespace.name",
    "monitoring",
    "autoscaling",
    "cache",
    "cache.size_gib",
    "server.port",
    "docker",
    "probes",
    "made_up",
]


def _set(config: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    config = json.loads(json.dumps(config))
    *parents, leaf = dotted.split(".")
    node = config
    for part in parents:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[leaf] = value
    return config


def _as_yaml(config: dict[str, Any]) -> str:
    import yaml

    return yaml.safe_dump({"config": {f"vllm-serving:{k}": v for k, v in config.items()}}, allow_unicode=True)


mutated = st.builds(_set, st.just(BASE), st.sampled_from(KEYS), values).map(_as_yaml)
random_config = st.dictionaries(st.sampled_from([*KEYS, "vllm_serving:model", "config"]), values, max_size=5).map(
    lambda d: _as_yaml(d)
)
garbage = st.text(max_size=200)


def deep(levels: int) -> str:
    return "config:\n  vllm-serving:model: " + "[" * levels + "]" * levels + "\n"


def alias_bomb(levels: int) -> str:
    lines = ['a0: &a0 ["xxxxxxxxxxxxxxxxxxxxxxx", "xxxxxxxxxxxxxxxxxxxxxxx"]']
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, levels)]
    lines += ["config:", f"  vllm-serving:model: {{id: *a{levels - 1}}}", "  vllm-serving:gpu: {product: A100-SXM4-40GB}"]
    return "\n".join(lines) + "\n"


def huge_scalar(kind: str, size: int) -> str:
    text = _as_yaml(BASE)
    if kind == "int":
        return text.replace("max_num_seqs: 128", "max_num_seqs: " + "9" * size)
    return text.replace("id: meta-llama/Llama-3.1-8B-Instruct", "id: " + "a" * size)


hostile = st.one_of(
    st.integers(10, 3000).map(deep),
    st.integers(2, 12).map(alias_bomb),
    st.tuples(st.sampled_from(["int", "str"]), st.integers(100, 200_000)).map(lambda t: huge_scalar(*t)),
)
stack_files = st.one_of(mutated, random_config, garbage, hostile)
