"""Cross-key rules that block the Kubernetes target before anything is registered."""

from __future__ import annotations

import dataclasses

import pytest

from config.errors import ConfigError, ConfigIssue
from tests.factories import make_config
from tests.kubernetes_fixtures import configured, stack
from validation.kubernetes import check_kubernetes


def test_shipped_stacks_pass_every_kubernetes_check():
    assert check_kubernetes(*stack("prod")) == [] and check_kubernetes(*stack("dev")) == []


def test_cache_smaller_than_the_weights_blocks_with_the_numbers():
    assert check_kubernetes(*configured(cache={"size_gib": 10})) == [
        ConfigIssue(
            "cache.size_gib",
            "is 10 GiB, smaller than the 15.0 GiB of meta-llama/Llama-3.1-8B-Instruct weights.",
            "set cache.size_gib to at least 15 (recommended 20), or remove it to size the volume automatically.",
        )
    ]


def test_cache_exactly_the_weights_size_is_accepted():
    cfg, report = configured()
    cfg = make_config(cache={"size_gib": report.weights_on_disk_gib})
    assert check_kubernetes(cfg, report) == []


def test_cache_too_small_for_the_draft_model_counts_it_too():
    issues = check_kubernetes(
        *configured(
            cache={"size_gib": 15.5},
            engine={
                "max_model_len": 8192,
                "speculative": {"method": "draft_model", "model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 3},
            },
        )
    )
    assert [i.key for i in issues] == ["cache.size_gib"] and "draft model" in issues[0].message


def test_a_report_for_another_gpu_is_refused():
    cfg, report = configured()
    gpu = dataclasses.replace(report.resolved.gpu, name="A100-SXM4-40GB", memory_gib=39.49)
    other = dataclasses.replace(report, resolved=dataclasses.replace(report.resolved, gpu=gpu))
    assert [i.key for i in check_kubernetes(cfg, other)] == ["gpu.product"]


def test_local_path_outside_the_cache_volume_is_refused():
    issues = check_kubernetes(
        *configured(
            model={"id": "meta-llama/Llama-3.1-8B-Instruct", "local_path": "/models/x"}, cache={"existing_claim": "models"}
        )
    )
    assert [i.key for i in issues] == ["model.local_path"]


def test_read_write_once_cache_with_two_replicas_is_refused():
    with pytest.raises(ConfigError) as error:
        make_config(replicas=2, cache={"access_mode": "ReadWriteOnce"}, delivery={"mode": "shared_volume"})
    assert error.value.issues == [
        ConfigIssue(
            "cache.access_mode",
            "is ReadWriteOnce, but up to 2 replicas can land on different nodes and a ReadWriteOnce "
            "volume attaches to one node only (the others stay Pending with Multi-Attach errors).",
            "set cache.access_mode: ReadWriteMany with a storage class that supports it, set "
            "delivery.mode: per_replica_volume, or run 1 replica.",
        )
    ]


def test_read_write_once_cache_with_autoscaling_above_one_is_refused():
    with pytest.raises(ConfigError, match=r"cache\.access_mode"):
        make_config(
            cache={"access_mode": "ReadWriteOnce", "storage_class_name": "efs-sc"},
            autoscaling={"enabled": True, "max_replica_count": 3},
        )


def test_read_write_once_cache_with_one_replica_is_accepted():
    assert make_config(cache={"access_mode": "ReadWriteOnce"}).cache.access_mode == "ReadWriteOnce"


def test_local_path_without_an_existing_claim_is_refused():
    with pytest.raises(ConfigError, match=r"model.local_path: is 'llama', but a new cache volume would be empty"):
        make_config(model={"id": "meta-llama/Llama-3.1-8B-Instruct", "local_path": "llama"})


def test_size_with_an_existing_claim_is_refused():
    with pytest.raises(ConfigError, match=r"cache.size_gib: is set together with cache.existing_claim"):
        make_config(cache={"existing_claim": "models", "size_gib": 100})


def test_grace_period_shorter_than_the_pre_stop_sleep_is_refused():
    with pytest.raises(ConfigError, match=r"server.termination_grace_period_seconds: \(10\) must exceed"):
        make_config(server={"termination_grace_period_seconds": 10, "pre_stop_sleep_seconds": 10})


def test_readiness_timeout_below_five_seconds_is_refused():
    with pytest.raises(ConfigError, match=r"probes\.readiness_timeout_seconds"):
        make_config(probes={"readiness_timeout_seconds": 1})
