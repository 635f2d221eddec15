"""Every value against the field it lands in, and the rules between values (validation/landing.py, values.py)."""

from __future__ import annotations

import re
import typing
from typing import Any

import pytest

from config.errors import ConfigError, ConfigIssue
from config.messages import nested_model
from config.stack import StackConfig
from tests.factories import make_config, raw_config
from validation import assess
from validation.keys import validate_config
from validation.landing import LANDINGS

MULTINODE = {"engine": {"tensor_parallel_size": 2, "nnodes": 2, "max_model_len": 8192}}


def refusals(**changes: Any) -> list[ConfigIssue]:
    """The issues validate_config raises for the base stack with `changes`; [] when it is accepted."""
    try:
        validate_config(raw_config(**changes))
    except ConfigError as error:
        return error.issues
    return []


def refused_key(key: str, **changes: Any) -> ConfigIssue:
    found = [issue for issue in refusals(**changes) if issue.key == key]
    assert found, f"{key} was not refused: {refusals(**changes)}"
    return found[0]


def test_a_monitoring_release_with_a_space_is_refused_as_a_label_value() -> None:
    issue = refused_key("monitoring.release", monitoring={"release": "Kube Prom"})
    assert "'Kube Prom'" in issue.message and "label value" in issue.message and issue.fix


def test_a_gpu_label_with_spaces_is_refused() -> None:
    issue = refused_key("gpu.label", gpu={"product": "H100-custom", "memory_gib": 79.1, "label": "NVIDIA H100 NVL"})
    assert "label value" in issue.message


def test_a_node_pool_label_key_with_a_space_is_refused_naming_the_pool() -> None:
    pool = {"name": "a100", "labels": {"gke accelerator": "nvidia-a100"}, "gpus": 8}
    issue = refused_key("cluster.node_pools[0].labels", cluster={"node_pools": [pool]})
    assert "label key" in issue.message


def test_a_node_pool_label_value_over_63_characters_is_refused() -> None:
    pool = {"name": "a100", "labels": {"pool": "a" * 64}, "gpus": 8}
    assert "label value" in refused_key("cluster.node_pools[0].labels", cluster={"node_pools": [pool]}).message


def test_a_smoke_test_image_with_a_space_is_refused() -> None:
    issue = refused_key("smoke_test.image", smoke_test={"image": "python 3.11"})
    assert "image reference" in issue.message


def test_a_pinned_smoke_test_image_from_a_registry_with_a_port_is_accepted() -> None:
    image = "registry.example.com:5000/tools/python:3.11-slim@sha256:" + "a" * 64
    assert make_config(smoke_test={"image": image}).smoke_test.image == image


def test_an_inline_gpu_memory_in_mib_is_refused_with_the_gib_figure() -> None:
    issue = refused_key("gpu.memory_gib", gpu={"product": "H100-custom", "memory_gib": 81559, "label": "NVIDIA-H100"})
    assert "79.6" in issue.fix


def test_an_inline_gpu_memory_of_1e30_is_refused() -> None:
    assert refused_key("gpu.memory_gib", gpu={"product": "H100-custom", "memory_gib": 1e30, "label": "NVIDIA-H100"})


def test_more_than_64_nodes_per_replica_are_refused_as_the_docs_say() -> None:
    assert refused_key("engine.nnodes", engine={"nnodes": 1000})


def test_the_server_port_equal_to_the_master_port_is_refused() -> None:
    issue = refused_key("server.port", **MULTINODE, server={"port": 29501})
    assert "multinode.master_port" in issue.message


def test_the_server_port_may_equal_the_master_port_default_with_one_node() -> None:
    assert make_config(server={"port": 29501}).server.port == 29501


def test_an_nccl_variable_in_both_env_groups_is_refused() -> None:
    changes = {**MULTINODE, "multinode": {"nccl_env": {"NCCL_IB_HCA": "mlx5"}}, "vllm": {"extra_env": {"NCCL_IB_HCA": "mlx4"}}}
    assert "NCCL_IB_HCA" in refused_key("multinode.nccl_env", **changes).message


@pytest.mark.parametrize(
    "name",
    ["AWS_ENDPOINT_URL", "RUNAI_STREAMER_LOG_TO_STDERR", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "LWS_WORKER_INDEX"],
)
def test_extra_env_may_not_override_a_variable_the_program_or_the_platform_sets(name: str) -> None:
    issue = refused_key("vllm.extra_env", vllm={"extra_env": {name: "0"}})
    assert name in issue.message and "remove" in issue.fix


def test_an_extra_env_entry_without_a_value_is_refused() -> None:
    assert "empty" in refused_key("vllm.extra_env", vllm={"extra_env": {"VLLM_USE_V1": ""}}).message


def test_an_extra_env_name_with_an_equals_sign_is_refused() -> None:
    assert "environment variable name" in refused_key("vllm.extra_env", vllm={"extra_env": {"A=B": "1"}}).message


@pytest.mark.parametrize("name", ["system-node-critical", "system-cluster-critical"])
def test_a_reserved_priority_class_is_refused(name: str) -> None:
    assert refused_key("scheduling.priority_class_name", scheduling={"priority_class_name": name})


def test_keda_1_is_refused() -> None:
    issue = refused_key("autoscaling.keda_version", autoscaling={"enabled": True, "keda_version": "1.5.0"})
    assert "keda.sh" in issue.message


def test_a_smoke_test_asking_more_tokens_than_the_context_is_refused() -> None:
    cfg = make_config(engine={"max_model_len": 2048}, smoke_test={"max_tokens": 4096})
    keys = [issue.key for issue in assess(cfg).issues]
    assert keys == ["smoke_test.max_tokens"]


@pytest.mark.parametrize("host", ["10.0.0.1", "192.168.1.20"])
def test_an_ingress_host_that_is_an_ip_address_is_refused(host: str) -> None:
    ingress = {"class_name": "nginx", "host": host, "controller_namespace": "ingress-nginx"}
    assert "not an IP address" in refused_key("exposure.ingress.host", exposure={"ingress": ingress}).message


def test_a_tls_secret_name_with_dots_is_accepted() -> None:
    ingress = {"class_name": "nginx", "host": "llm.example.com", "controller_namespace": "ingress-nginx"}
    ingress["tls_secret_name"] = "llm.example.com-tls"
    cfg = make_config(exposure={"ingress": ingress}, security={"require_api_key": True})
    assert cfg.exposure.ingress is not None and cfg.exposure.ingress.tls_secret_name == "llm.example.com-tls"


def test_a_63_character_namespace_is_accepted() -> None:
    assert make_config(namespace={"name": "n" * 63}).namespace.name == "n" * 63


def test_a_maximal_label_is_accepted() -> None:
    key = ".".join(["p" * 63] * 3) + "." + "q" * 61 + "/" + "n" * 63  # a 253-character prefix and a 63-character name
    labels = {key: "v" * 63}
    assert make_config(monitoring={"monitor_labels": labels}).monitoring.monitor_labels == labels


def test_a_long_refused_value_is_shown_truncated() -> None:
    issue = refused_key("monitoring.release", monitoring={"release": "X" * 5000})
    assert len(issue.message) < 300


def _field_at(dotted: str) -> Any:
    model: Any = StackConfig
    field = None
    for part in dotted.split("."):
        field = model.model_fields[part]
        args = typing.get_args(field.annotation) or (field.annotation,)
        model = next((found for arg in args if (found := nested_model(arg)) is not None), None)
    return field


@pytest.mark.parametrize("landing", LANDINGS, ids=[landing.key for landing in LANDINGS])
def test_every_landing_names_a_key_of_the_schema(landing: Any) -> None:
    assert _field_at(re.sub(r"\[\]|\{\}=?", "", landing.key)) is not None


def _bucket_annotations(annotations: dict[str, str]) -> dict[str, Any]:
    bucket = {"uri": "s3://models/llama-8b/", "service_account_annotations": annotations}
    return {"mode": "object_storage", "object_storage": bucket}


def test_service_account_annotations_beyond_the_api_servers_total_are_refused() -> None:
    annotations = {f"example.com/note-{index}": "x" * 4000 for index in range(70)}  # 280 KB > 256 KiB
    issue = refused_key("delivery.object_storage.service_account_annotations", delivery=_bucket_annotations(annotations))
    assert "262,144 bytes" in issue.message


def test_service_account_annotations_just_under_the_total_are_accepted() -> None:
    annotations = {f"example.com/note-{index}": "x" * 4000 for index in range(60)}  # 241 KB
    assert not [
        issue
        for issue in refusals(delivery=_bucket_annotations(annotations))
        if issue.key == "delivery.object_storage.service_account_annotations"
    ]
