"""Facts that more than one module needs hold one value: each test fails when the copies drift."""

from __future__ import annotations

import typing

from catalog.vllm_flags import FLAG_TABLES
from components.render import manifests
from components.render.docker import render_container
from config.engine import Quantization
from preflight.memory import QUANTIZED_LINEAR_BYTES
from tests.factories import make_config
from tests.kubernetes_fixtures import manifests as server_manifests
from tests.kubernetes_fixtures import one, plan_of


def test_every_quantization_the_config_accepts_has_a_weight_size_and_no_more() -> None:
    assert set(typing.get_args(Quantization)) == set(QUANTIZED_LINEAR_BYTES)


def test_every_quantization_the_config_accepts_is_one_the_newest_release_offers() -> None:
    # The release tables (catalog/data/vllm) list every method vLLM offers; the config accepts the ones the
    # preflight can size, and validation/vllm.py refuses one the stack's own release lacks.
    assert set(typing.get_args(Quantization)) - {"bitsandbytes"} <= FLAG_TABLES["0.33.0"].quantizations


def test_docker_and_kubernetes_size_dev_shm_alike() -> None:
    engine = {"tensor_parallel_size": 2, "max_model_len": 8192}
    kubernetes, docker = make_config(engine=engine), make_config(target="docker", docker={}, engine=engine)
    pod = one(server_manifests(kubernetes, _report()), "Deployment")["spec"]["template"]["spec"]
    dshm = next(volume for volume in pod["volumes"] if volume["name"] == "dshm")
    shm_mib = render_container(plan_of(docker).server, with_hf_token=False)["shm_size"]
    assert (dshm["emptyDir"]["sizeLimit"], shm_mib) == ("4Gi", 4096)


def test_the_namespace_comes_from_one_renderer() -> None:
    plan = plan_of(make_config())
    namespace = manifests.render_manifests(plan)[0]
    assert namespace == manifests.namespace_manifest(plan.identity, plan.pod_security)


def _report():  # type: ignore[no-untyped-def]
    from plan.sizing import resolve_sizing

    return resolve_sizing(make_config())
