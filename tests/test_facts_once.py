"""Facts that more than one module needs hold one value: each test fails when the copies drift."""

from __future__ import annotations

import typing

from catalog.vllm_flags import FLAG_TABLES
from components.render import manifests
from components.render.docker import shm_size_mib
from components.render.resources import shm_size_gib
from config.engine import Quantization
from preflight.memory import QUANTIZED_LINEAR_BYTES
from tests.factories import make_config


def test_every_quantization_the_config_accepts_has_a_weight_size_and_no_more() -> None:
    assert set(typing.get_args(Quantization)) == set(QUANTIZED_LINEAR_BYTES)


def test_every_quantization_the_config_accepts_is_one_the_newest_release_offers() -> None:
    # The release tables (catalog/data/vllm) list every method vLLM offers; the config accepts the ones the
    # preflight can size, and validation/vllm.py refuses one the stack's own release lacks.
    assert set(typing.get_args(Quantization)) - {"bitsandbytes"} <= FLAG_TABLES["0.33.0"].quantizations


def test_docker_and_kubernetes_size_dev_shm_alike() -> None:
    cfg = make_config(engine={"tensor_parallel_size": 2, "max_model_len": 8192})
    assert shm_size_mib(cfg) == shm_size_gib(cfg) * 1024 == 4096


def test_the_namespace_comes_from_one_renderer() -> None:
    namespace = manifests.render_manifests(make_config(), _report(), "llama")[0]
    assert namespace == manifests.namespace_manifest(make_config(), "llama")


def _report():  # type: ignore[no-untyped-def]
    from plan.sizing import resolve_sizing

    return resolve_sizing(make_config())
