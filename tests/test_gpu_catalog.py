"""The open GPU catalog: the products issue 12 named, and a GPU described in the stack."""

from __future__ import annotations

import pytest

from catalog.gpus import GPUS
from config.errors import ConfigError
from plan.sizing import resolve_sizing
from tests.factories import make_config


def test_the_gpus_issue_12_named_are_in_the_catalog() -> None:
    assert {"B200", "H100-NVL", "H100-PCIe", "GH200-480GB", "L40", "A40", "RTX-6000-Ada"} <= set(GPUS)


def test_a_gpu_described_inline_is_sized_with_its_own_memory() -> None:
    cfg = make_config(gpu={"product": "MyGPU-96GB", "memory_gib": 94.5, "label": "NVIDIA-MyGPU-96GB"})
    report = resolve_sizing(cfg)
    assert (report.resolved.gpu.name, report.resolved.gpu.memory_gib, report.verdict.fits) == ("MyGPU-96GB", 94.5, True)


def test_a_gpu_described_inline_is_scheduled_on_its_label() -> None:
    cfg = make_config(gpu={"product": "MyGPU-96GB", "memory_gib": 94.5, "label": "NVIDIA-MyGPU-96GB"})
    from tests.kubernetes_fixtures import placement_of

    assert list(placement_of(cfg).affinity_terms) == [
        {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-MyGPU-96GB"]}]}
    ]


def test_a_gpu_described_inline_uses_the_node_size_given() -> None:
    cfg = make_config(
        gpu={"product": "MyGPU", "memory_gib": 40.0, "label": "NVIDIA-MyGPU", "gpus_per_node": 2},
        engine={"tensor_parallel_size": 4},
    )
    assert any("node has 2" in reason for reason in resolve_sizing(cfg).verdict.reasons)


def test_an_inline_gpu_without_a_label_is_refused_naming_the_key() -> None:
    with pytest.raises(ConfigError) as caught:
        make_config(gpu={"product": "MyGPU", "memory_gib": 40.0})
    assert caught.value.issues[0].key == "gpu.product"


def test_a_label_without_memory_is_refused_naming_the_key() -> None:
    with pytest.raises(ConfigError) as caught:
        make_config(gpu={"product": "A100-SXM4-80GB", "label": "x"})
    assert caught.value.issues[0].key == "gpu.label"


def test_a_catalog_gpu_with_inline_memory_overrides_the_catalog_figure() -> None:
    report = resolve_sizing(make_config(gpu={"product": "A100-SXM4-80GB", "memory_gib": 79.0}))
    assert report.resolved.gpu.memory_gib == 79.0


def test_a_stated_gpu_runs_the_whole_program_and_schedules_on_its_label() -> None:
    from tests.program import run_main

    registered, error = run_main(
        {
            "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
            "engine": {"max_model_len": 8192},
            "gpu": {"product": "MyGPU-96GB", "memory_gib": 94.5, "label": "NVIDIA-MyGPU-96GB"},
            "security": {"require_api_key": False},
        }
    )
    assert error is None
    spec = registered.one("kubernetes:apps/v1:Deployment")["spec"]["template"]["spec"]
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][0]["values"] == ["NVIDIA-MyGPU-96GB"]
