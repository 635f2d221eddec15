"""The catalog's facts agree with each other: shapes with parameter counts, labels with products."""

from __future__ import annotations

import pytest

from catalog.gpus import GPUS
from catalog.models import MODELS
from catalog.vllm_versions import RELEASES, MemoryEra, memory_era, parse_version
from preflight.model_source import estimate_parameters


@pytest.mark.parametrize("model_id", list(MODELS))
def test_each_catalog_shape_adds_up_to_its_published_parameter_count(model_id: str) -> None:
    arch = MODELS[model_id]
    assert estimate_parameters(arch) == pytest.approx(arch.num_parameters, rel=1e-4)


@pytest.mark.parametrize("name", list(GPUS))
def test_each_gpu_reports_less_memory_than_nvidia_smi_shows(name: str) -> None:
    gpu = GPUS[name]
    assert gpu.memory_gib < gpu.nvidia_smi_mib / 1024


@pytest.mark.parametrize("name", list(GPUS))
def test_each_gpu_feature_discovery_label_is_the_sanitised_nvml_name(name: str) -> None:
    label = GPUS[name].gfd_product
    assert label.startswith("NVIDIA-")
    assert " " not in label


def test_a100_has_no_native_fp8_and_h100_has() -> None:
    assert not GPUS["A100-SXM4-80GB"].native_fp8
    assert GPUS["H100-80GB-HBM3"].native_fp8


def test_the_issue_required_gpus_and_models_are_in_the_catalog() -> None:
    assert {
        "A100-SXM4-40GB",
        "A100-SXM4-80GB",
        "A100-PCIE-40GB",
        "A100-80GB-PCIe",
        "H100-80GB-HBM3",
        "H200",
        "L40S",
        "A10G",
        "L4",
    } <= set(GPUS)
    assert {
        "meta-llama/Llama-3.1-8B-Instruct",
        "meta-llama/Llama-3.1-70B-Instruct",
        "meta-llama/Llama-3.1-405B-Instruct",
        "meta-llama/Llama-3.3-70B-Instruct",
        "Qwen/Qwen2.5-7B-Instruct",
        "Qwen/Qwen2.5-14B-Instruct",
        "Qwen/Qwen2.5-32B-Instruct",
        "Qwen/Qwen2.5-72B-Instruct",
        "Qwen/Qwen3-8B",
        "Qwen/Qwen3-14B",
        "Qwen/Qwen3-32B",
        "mistralai/Mistral-7B-Instruct-v0.3",
        "mistralai/Mixtral-8x7B-Instruct-v0.1",
        "google/gemma-2-9b-it",
        "google/gemma-2-27b-it",
    } <= set(MODELS)


@pytest.mark.parametrize(
    ("version", "era"),
    [
        ((0, 6, 4), MemoryEra.V0_LEGACY),
        ((0, 7, 2), MemoryEra.V0),
        ((0, 11, 0), MemoryEra.V1_EARLY),
        ((0, 19, 0), MemoryEra.V1),
        ((0, 21, 0), MemoryEra.V1_CUDAGRAPH),
        ((0, 33, 0), MemoryEra.V1_CUDAGRAPH),
    ],
)
def test_each_version_maps_to_its_memory_accounting_era(version: tuple[int, int, int], era: MemoryEra) -> None:
    assert memory_era(version) is era


def test_release_numbers_parse_and_reject_garbage() -> None:
    assert parse_version("v0.33.0") == (0, 33, 0)
    with pytest.raises(ValueError, match="not a vLLM release number"):
        parse_version("0.33")


def test_the_hand_checked_releases_are_still_deployable() -> None:
    assert {"0.7.2", "0.33.0"} <= set(RELEASES)
