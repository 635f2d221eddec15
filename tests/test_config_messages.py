"""The designed config messages, word for word: key as typed, the value, the rule, and the fix.

Where a message lists what is allowed (a group's keys, the catalog, the supported versions) or ends with a
key's description, that part is built from the same source the program uses, so adding a key, a model or
a better description does not break the table.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from catalog.gpus import GPUS
from catalog.models import MODELS
from catalog.vllm_versions import SUPPORTED_VERSIONS
from config.engine import EngineConfig
from config.errors import ConfigError, suggest
from config.kubernetes import NamespaceConfig, ServerConfig
from config.model import ModelConfig
from config.sources import split_project_keys
from config.stack import StackConfig
from tests.factories import make_config, raw_config
from validation.keys import validate_config


def meaning(model: type[BaseModel], name: str) -> str:
    """A field's description as messages quote it: ` — text`, with a leading `--flag:` moved to the end."""
    text = (model.model_fields[name].description or "").rstrip(".")
    flag, colon, rest = text.partition(": ")
    return f" — {rest} ({flag})." if colon and flag.startswith("--") and " " not in flag else f" — {text}."


def only_issue(**changes: Any) -> str:
    """The one rendered issue a stack with `changes` has."""
    with pytest.raises(ConfigError) as caught:
        validate_config(raw_config(**changes))
    issues = [issue.render() for issue in caught.value.issues]
    assert len(issues) == 1, issues
    return issues[0]


# name: (changes, the rendered issue up to the field's description, the field whose description ends it)
MESSAGES: dict[str, tuple[dict[str, Any], str, tuple[type[BaseModel], str] | None]] = {
    "out of range above": (
        {"engine": {"gpu_memory_utilization": 1.5}},
        "vllm-serving:engine.gpu_memory_utilization: 1.5 is out of range: must be ≤ 1. Fix: set "
        "engine.gpu_memory_utilization to a number in (0, 1]",
        (EngineConfig, "gpu_memory_utilization"),
    ),
    "out of range below": (
        {"engine": {"gpu_memory_utilization": 0}},
        "vllm-serving:engine.gpu_memory_utilization: 0 is out of range: must be > 0. Fix: set "
        "engine.gpu_memory_utilization to a number in (0, 1]",
        (EngineConfig, "gpu_memory_utilization"),
    ),
    "whole number out of range": (
        {"replicas": 0},
        "vllm-serving:replicas: 0 is out of range: must be ≥ 1. Fix: set replicas to a whole number from 1 to 1000",
        (StackConfig, "replicas"),
    ),
    "whole number with both bounds": (
        {"server": {"port": 70000}},
        "vllm-serving:server.port: 70000 is out of range: must be ≤ 65535. Fix: set server.port to a whole "
        "number from 1 to 65535",
        (ServerConfig, "port"),
    ),
    "null where a string belongs": (
        {"model": {"id": None}},
        "vllm-serving:model.id: expected a string, got None. Fix: set model.id to a string",
        (ModelConfig, "id"),
    ),
    "literal with did-you-mean": (
        {"engine": {"dtype": "bf16"}},
        "vllm-serving:engine.dtype: 'bf16' is not allowed (did you mean `bfloat16`?). Fix: use one of 'auto', "
        "'half', 'float16', 'bfloat16', 'float' or 'float32'.",
        None,
    ),
    "literal without a close match": (
        {"target": "k8s"},
        "vllm-serving:target: 'k8s' is not allowed. Fix: use one of 'kubernetes' or 'docker'.",
        None,
    ),
    "string where a mapping belongs": (
        {"model": "foo"},
        "vllm-serving:model: expected a mapping of keys (model.id, model.revision, model.architecture, "
        "model.config_json, ...), got 'foo'. Fix: write model as a mapping, one `key: value` per line indented "
        "under it.",
        None,
    ),
    "word where a number belongs": (
        {"replicas": "many"},
        "vllm-serving:replicas: expected a whole number, got 'many'. Fix: set replicas to a whole number",
        (StackConfig, "replicas"),
    ),
    "word where true or false belongs": (
        {"engine": {"enforce_eager": "sometimes"}},
        "vllm-serving:engine.enforce_eager: expected true or false, got 'sometimes'. Fix: set "
        "engine.enforce_eager to true or false",
        (EngineConfig, "enforce_eager"),
    ),
    "gpu.count mismatch": (
        {"gpu": {"count": 2}, "engine": {"tensor_parallel_size": 4}},
        "vllm-serving:gpu.count: is 2, but engine.tensor_parallel_size (4) x engine.pipeline_parallel_size (1) "
        "= 4 GPUs per replica. Fix: set gpu.count to 4, or remove it (it defaults to that).",
        None,
    ),
    "unknown GPU": (
        {"gpu": {"product": "A100-80GB"}},
        "vllm-serving:gpu.product: unknown GPU product 'A100-80GB' (did you mean one of `A100-SXM4-80GB`, `A100-80GB-PCIe`?). "
        f"Fix: use one of {', '.join(GPUS)}, or describe it with gpu.memory_gib and gpu.label.",
        None,
    ),
    "unknown model": (
        {"model": {"id": "meta-llama/Llama-3.1-8B"}},
        "vllm-serving:model: 'meta-llama/Llama-3.1-8B' is not in the catalog and no architecture was given "
        "(the catalog's `meta-llama/Llama-3.1-8B-Instruct` is a different model). Fix: use a catalog model "
        f"({', '.join(MODELS)}), or describe it with model.architecture (config.json keys) or model.config_json.",
        None,
    ),
    "unsupported version": (
        {"vllm": {"version": "0.5.0"}},
        "vllm-serving:vllm.version: vLLM '0.5.0' is not a release this program has flag and metric tables "
        f"for ({suggest('0.5.0', list(SUPPORTED_VERSIONS))}). Fix: use a release from {SUPPORTED_VERSIONS[0]} to "
        f"{SUPPORTED_VERSIONS[-1]} (catalog/data/vllm), or generate its table with scripts/vllm_release_tables.py.",
        None,
    ),
    "moving image tag": (
        {"vllm": {"tag": "latest"}},
        "vllm-serving:vllm.tag: tag 'latest' moves under you. Fix: pin a release tag such as v0.33.0.",
        None,
    ),
    "namespace name not a DNS label": (
        {"namespace": {"name": "Inference_Prod"}},
        "vllm-serving:namespace.name: 'Inference_Prod' does not match the pattern ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$. "
        "Fix: set namespace.name to a value that fits",
        (NamespaceConfig, "name"),
    ),
    "empty string": (
        {"model": {"id": ""}},
        "vllm-serving:model.id: must not be empty. Fix: set model.id to a value that fits",
        (ModelConfig, "id"),
    ),
}


@pytest.mark.parametrize(("changes", "expected", "field"), MESSAGES.values(), ids=MESSAGES.keys())
def test_designed_message_reads_word_for_word(
    changes: dict[str, Any], expected: str, field: tuple[type[BaseModel], str] | None
) -> None:
    assert only_issue(**changes) == expected + (meaning(*field) if field else "")


def test_range_message_ends_with_what_the_key_means() -> None:
    assert only_issue(engine={"gpu_memory_utilization": 1.5}).endswith(
        " — share of each GPU's memory vLLM may use (--gpu-memory-utilization)."
    )


def test_unknown_key_suggests_the_closest_key_and_lists_the_group() -> None:
    allowed = ", ".join(sorted(EngineConfig.model_fields))
    assert only_issue(engine={"tensor_paralel_size": 2}) == (
        "vllm-serving:engine.tensor_paralel_size: unknown key (did you mean `tensor_parallel_size`?). "
        f"Fix: correct or remove it; keys allowed in engine: {allowed}."
    )


def test_unknown_top_level_key_names_the_project_namespace() -> None:
    assert only_issue(replica=2).startswith(
        "vllm-serving:replica: unknown key (did you mean `replicas`?). Fix: correct or remove it; keys allowed "
        "in the vllm-serving namespace: "
    )


def test_missing_required_group_says_what_to_add() -> None:
    raw = raw_config()
    del raw["gpu"]
    with pytest.raises(ConfigError) as caught:
        validate_config(raw)
    assert [issue.render() for issue in caught.value.issues] == [
        "vllm-serving:gpu: is required but missing. Fix: add gpu" + meaning(StackConfig, "gpu")
    ]


def test_missing_required_nested_key_says_what_to_add() -> None:
    raw = raw_config()
    raw["model"] = {"revision": "main"}
    with pytest.raises(ConfigError) as caught:
        validate_config(raw)
    assert caught.value.issues[0].render() == (
        "vllm-serving:model.id: is required but missing. Fix: add model.id" + meaning(ModelConfig, "id")
    )


def test_plain_text_secret_says_how_to_store_it_encrypted() -> None:
    _raw, _secrets, issues = split_project_keys([("vllm-serving:hf_token", "hf_abc")], is_secret=lambda _k, _v: False)
    assert [issue.render() for issue in issues] == [
        "vllm-serving:hf_token: is stored in plain text; credentials must be Pulumi secrets. Fix: pulumi config rm "
        "hf_token && pulumi config set --secret hf_token <value>."
    ]


def test_error_header_counts_every_problem_found_together() -> None:
    with pytest.raises(ConfigError) as caught:
        validate_config(raw_config(replicas=0, engine={"gpu_memory_utilization": 2}))
    assert caught.value.render().splitlines()[0] == "Invalid stack config (2 problems):"


def test_vllm_extra_args_names_where_flags_go_not_extra_env() -> None:
    with pytest.raises(ConfigError) as raised:
        make_config(vllm={"extra_args": ["--max-model-len", "4096"]})
    issue = raised.value.issues[0]
    assert (issue.key, "extra_env" in issue.render(), "engine.extra_args" in issue.message) == ("vllm.extra_args", False, True)


def test_a_key_of_another_group_names_that_group() -> None:
    with pytest.raises(ConfigError) as raised:
        make_config(vllm={"max_model_len": 4096})
    assert raised.value.issues[0].render() == (
        "vllm-serving:vllm.max_model_len: unknown key: max_model_len is a key of engine, not of vllm. "
        "Fix: move it to engine.max_model_len."
    )
