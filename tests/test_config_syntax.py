"""Target syntax (config/syntax.py): every value that lands in a Kubernetes or Docker object, container args or
PromQL is refused with the key and the fix when the target would reject or misread it."""

from __future__ import annotations

from typing import Any

import pytest

from components.render.pod import kubelet_literal
from config.errors import ConfigError
from tests.factories import make_config

LOCAL = {"model": {"id": "meta-llama/Llama-3.1-8B-Instruct", "local_path": "llama"}, "cache": {"existing_claim": "c"}}

# name: (changes, the key the issue names, a fragment of its message)
REFUSED: dict[str, tuple[dict[str, Any], str, str]] = {
    "node selector key with a space": (
        {"gpu": {"product": "A100-SXM4-80GB", "node_selector": {"a b": "x"}}},
        "gpu.node_selector",
        "is not a Kubernetes label key",
    ),
    "node selector value over 63 characters": (
        {"gpu": {"product": "A100-SXM4-80GB", "node_selector": {"pool": "a" * 64}}},
        "gpu.node_selector",
        "is not a Kubernetes label value",
    ),
    "dashboard namespace not a DNS label": (
        {"monitoring": {"dashboard_namespace": "Grafana_Dash"}},
        "monitoring.dashboard_namespace",
        "does not match the pattern",
    ),
    "image tag with a space": ({"vllm": {"tag": "v0.33 .0"}}, "vllm.tag", "is not an image tag"),
    "upper-case image repository": ({"vllm": {"image": "VLLM/vllm-openai"}}, "vllm.image", "is not an image repository"),
    "model id climbing out": ({"model": {"id": "../../etc"}}, "model.id", "is not a Hugging Face repository id"),
    "model id with shell characters": ({"model": {"id": "org/x;rm -rf"}}, "model.id", "is not a Hugging Face repository id"),
    "model id as a URL": ({"model": {"id": "https://huggingface.co/x/y"}}, "model.id", "is not a Hugging Face repository id"),
    "local path leaving its mount": (
        {**LOCAL, "model": {**LOCAL["model"], "local_path": "a/../../etc"}},
        "model.local_path",
        "is not a path inside its volume",
    ),
    "replicas of ten to the thirty": ({"replicas": 10**30}, "replicas", "must be ≤ 1000"),
    "replicas of a million": ({"replicas": 10**6}, "replicas", "must be ≤ 1000"),
    "KEDA maximum of a million": (
        {"autoscaling": {"enabled": True, "max_replica_count": 10**6}},
        "autoscaling.max_replica_count",
        "must be ≤ 1000",
    ),
    "a count beyond int32": (
        {"engine": {"max_model_len": 8192, "max_num_seqs": 2**31}},
        "engine.max_num_seqs",
        "must be ≤ 2147483647",
    ),
    "served model name with a newline": (
        {"engine": {"max_model_len": 8192, "served_model_name": "a\nb"}},
        "engine.served_model_name",
        "not a name safe in container args and PromQL",
    ),
    "served model name expanding a variable": (
        {"engine": {"max_model_len": 8192, "served_model_name": "$(HOME)"}},
        "engine.served_model_name",
        "not a name safe in container args and PromQL",
    ),
    "served model name with a quote": (
        {"engine": {"max_model_len": 8192, "served_model_name": 'a"b'}},
        "engine.served_model_name",
        "not a name safe",
    ),
    "extra arg holding a flag and its value": (
        {"engine": {"max_model_len": 8192, "extra_args": ["--max-num-seqs 64"]}},
        "engine.extra_args[0]",
        "is not one command-line item",
    ),
    "extra arg with a newline": (
        {"engine": {"max_model_len": 8192, "extra_args": ["--x=a\nb"]}},
        "engine.extra_args[0]",
        "is not one command-line item",
    ),
    "storage class not a name": (
        {"cache": {"storage_class_name": "Fast SSD"}},
        "cache.storage_class_name",
        "is not a Kubernetes object name",
    ),
    "revision with a space": (
        {"model": {"id": "meta-llama/Llama-3.1-8B-Instruct", "revision": "main branch"}},
        "model.revision",
        "is not a git revision",
    ),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_value_the_target_would_reject_is_refused_naming_the_key(name: str) -> None:
    changes, key, fragment = REFUSED[name]
    with pytest.raises(ConfigError) as caught:
        make_config(**changes)
    assert [(i.key, fragment in i.message) for i in caught.value.issues] == [(key, True)], caught.value.render()


ACCEPTED: dict[str, dict[str, Any]] = {
    "a registry with a port": {"vllm": {"image": "registry.example.com:5000/team/vllm-openai"}},
    "a GKE node selector": {
        "gpu": {"product": "A100-SXM4-80GB", "node_selector": {"cloud.google.com/gke-accelerator": "nvidia-a100-80gb"}}
    },
    "a flag with its value after =": {"engine": {"max_model_len": 8192, "extra_args": ["--seed=7"]}},
    "a flag and its value as two items": {"engine": {"max_model_len": 8192, "extra_args": ["--seed", "7"]}},
    "a value holding spaces after its flag": {
        "engine": {"max_model_len": 8192, "extra_args": ["--chat-template", "{{ a }} b"]}
    },
    "a served name with a slash and a colon": {"engine": {"max_model_len": 8192, "served_model_name": "org/model:v2"}},
    "a nested local path": {**LOCAL, "model": {**LOCAL["model"], "local_path": "models/llama-8b"}},
}


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_a_value_the_target_accepts_passes(name: str) -> None:
    make_config(**ACCEPTED[name])


def test_a_literal_dollar_parenthesis_in_container_args_is_escaped_for_the_kubelet() -> None:
    assert kubelet_literal(["--chat-template", "$(HOME) and $HOME"]) == ["--chat-template", "$$(HOME) and $HOME"]


def test_pods_run_as_a_uid_of_ten_thousand_or_more_by_default() -> None:
    security = make_config().security
    assert min(security.run_as_user, security.run_as_group, security.fs_group) >= 10000
