"""engine.quantization awq/gptq on a GPU Marlin runs on forces vLLM's slow kernel: the preflight says so."""

from __future__ import annotations

from typing import Any

from catalog.gpus import GPUS
from preflight.checks import MARLIN_FAMILIES
from tests.factories import make_config
from validation import assess

AWQ_8B = "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4"


def _kernel_warnings(quantization: str, product: str = "L40S", **changes: Any) -> list[str]:
    cfg = make_config(model={"id": AWQ_8B}, gpu={"product": product}, engine={"quantization": quantization}, **changes)
    report = assess(cfg).report
    assert report is not None
    return [w for w in report.verdict.warnings if "slow" in w and "kernel" in w]


def test_awq_on_ada_warns_and_names_awq_marlin() -> None:
    (warning,) = _kernel_warnings("awq")
    assert (warning.startswith("engine.quantization awq forces"), "engine.quantization awq_marlin" in warning) == (True, True)


def test_awq_on_ampere_warns() -> None:
    assert len(_kernel_warnings("awq", "A100-SXM4-80GB")) == 1


def test_awq_on_hopper_warns() -> None:
    assert len(_kernel_warnings("awq", "H100-80GB-HBM3")) == 1


def test_awq_marlin_does_not_warn() -> None:
    assert _kernel_warnings("awq_marlin") == []


def test_every_catalog_gpu_family_is_one_marlin_runs_on() -> None:
    """A new family (an older one without Marlin) must be placed: the warning is only as right as this set."""
    assert {gpu.family for gpu in GPUS.values()} <= MARLIN_FAMILIES
