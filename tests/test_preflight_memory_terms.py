"""The memory terms that depend on the board and the release: TP overhead by interconnect, the sampler vLLM
uses, the MoE forward peak, and what vLLM allocates after profiling (preflight/memory.py)."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from catalog.gpus import GPUS, Interconnect
from catalog.vllm_versions import RELEASES
from plan.sizing import resolve_sizing
from preflight.report import PreflightReport
from tests.factories import make_config

LLAMA_70B = "meta-llama/Llama-3.1-70B-Instruct"
MIXTRAL = "mistralai/Mixtral-8x7B-Instruct-v0.1"


def report(**changes: Any) -> PreflightReport:
    return resolve_sizing(make_config(**changes))


def tp_report(product: str, tp: int, version: str = "0.19.0") -> PreflightReport:
    return report(
        model={"id": LLAMA_70B},
        gpu={"product": product},
        vllm={"version": version},
        engine={"tensor_parallel_size": tp, "max_model_len": 8192},
    )


def test_tensor_parallel_on_nvswitch_boards_charges_the_nvlink_overhead() -> None:
    assert tp_report("H100-80GB-HBM3", 4).memory.non_torch_gib == pytest.approx(2.17)


def test_tensor_parallel_on_pcie_boards_charges_only_the_single_gpu_overhead() -> None:
    assert tp_report("H100-PCIe", 4).memory.non_torch_gib == pytest.approx(0.25)


def test_the_same_gpus_over_pcie_leave_more_kv_cache_than_over_nvswitch() -> None:
    nvswitch, pcie = tp_report("H100-80GB-HBM3", 4), tp_report("H100-PCIe", 4)
    gained = pcie.memory.kv_cache_gib_per_gpu - nvswitch.memory.kv_cache_gib_per_gpu
    assert gained == pytest.approx(2.17 - 0.25, abs=0.01)


def test_a_bridged_pair_is_fully_connected_but_four_bridged_cards_are_not() -> None:
    nvl = GPUS["H100-NVL"]
    assert (nvl.fully_connected(2), nvl.fully_connected(4)) == (True, False)


def test_a_pcie_board_is_never_fully_connected() -> None:
    assert not GPUS["L40S"].fully_connected(2)


def test_a_tensor_parallel_group_across_nodes_is_charged_as_not_fully_connected() -> None:
    spread = report(
        model={"id": "meta-llama/Llama-3.1-405B-Instruct"},
        gpu={"product": "H100-80GB-HBM3"},
        vllm={"version": "0.19.0"},
        engine={"tensor_parallel_size": 16, "nnodes": 2, "max_model_len": 8192},
        cache={"storage_class_name": "efs-sc"},
    )
    assert spread.memory.non_torch_gib == pytest.approx(0.25)


def test_the_eras_before_0_17_keep_their_tensor_parallel_figures_on_any_board() -> None:
    assert tp_report("H100-PCIe", 2, version="0.7.2").memory.non_torch_gib == pytest.approx(3.58)


def test_every_catalog_gpu_names_its_interconnect() -> None:
    assert {gpu.interconnect for gpu in GPUS.values()} <= set(get_args(Interconnect))


def test_release_0_19_samples_with_pytorch_by_default() -> None:
    assert not RELEASES["0.19.0"].flashinfer_sampler_default


def test_release_0_33_samples_with_flashinfer_by_default() -> None:
    assert RELEASES["0.33.0"].flashinfer_sampler_default


def test_the_report_names_the_sampler_the_release_uses() -> None:
    assert (report(vllm={"version": "0.19.0"}).memory.sampler, report().memory.sampler) == ("pytorch", "flashinfer")


def test_vllm_use_flashinfer_sampler_0_in_extra_env_selects_the_pytorch_sampler() -> None:
    chosen = report(vllm={"extra_env": {"VLLM_USE_FLASHINFER_SAMPLER": "0"}})
    assert chosen.memory.sampler == "pytorch"


def test_the_pytorch_sampler_holds_more_warm_up_memory_than_flashinfer() -> None:
    flashinfer = report().memory.activation_gib
    pytorch = report(vllm={"extra_env": {"VLLM_USE_FLASHINFER_SAMPLER": "0"}}).memory.activation_gib
    assert pytorch > flashinfer


def mixtral(tp: int, tokens: int = 8192) -> PreflightReport:
    return report(
        model={"id": MIXTRAL},
        gpu={"product": "H100-80GB-HBM3"},
        vllm={"version": "0.19.0"},
        engine={"tensor_parallel_size": tp, "max_num_batched_tokens": tokens, "max_model_len": 8192},
    )


def test_the_moe_forward_peak_matches_the_mixtral_tp_2_log() -> None:
    assert mixtral(2).memory.activation_gib == pytest.approx(1.21, abs=0.02)  # row T17


def test_the_moe_forward_peak_grows_with_the_batched_tokens() -> None:
    assert mixtral(2, tokens=16384).memory.activation_gib > mixtral(2).memory.activation_gib


def after_profiling(version: str, utilization: float, **engine: Any) -> PreflightReport:
    return report(
        gpu={"product": "H100-80GB-HBM3"},
        vllm={"version": version},
        engine={"gpu_memory_utilization": utilization, "max_model_len": 8192, **engine},
    )


def test_graphs_captured_after_the_kv_cache_block_a_budget_with_no_room_outside_it() -> None:
    blocked = after_profiling("0.19.0", 0.995)
    assert any("captures CUDA graphs outside it" in reason for reason in blocked.verdict.reasons)


def test_the_after_profiling_message_shows_a_positive_shortfall_and_a_utilization_that_fits() -> None:
    reason = next(r for r in after_profiling("0.19.0", 0.995).verdict.reasons if "outside it" in r)
    short = float(reason.split("short by ")[1].split(" GiB")[0])
    suggested = float(reason.split("engine.gpu_memory_utilization ")[2].split(" or lower")[0])
    assert short > 0 and not after_profiling("0.19.0", suggested).verdict.reasons


def test_releases_that_subtract_the_graphs_allocate_nothing_after_profiling() -> None:
    assert after_profiling("0.33.0", 0.995).memory.after_profiling_gib == 0.0


def test_enforce_eager_allocates_no_graphs_after_profiling() -> None:
    assert after_profiling("0.19.0", 0.995, enforce_eager=True).memory.after_profiling_gib == 0.0


def test_release_0_11_0_sampled_with_flashinfer_and_0_11_1_turned_it_off() -> None:
    assert (RELEASES["0.11.0"].flashinfer_sampler_default, RELEASES["0.11.1"].flashinfer_sampler_default) == (True, False)


def test_the_0_8_releases_fall_back_to_pytorch_with_a_recent_flashinfer() -> None:
    assert not RELEASES["0.8.4"].flashinfer_sampler_default


def test_the_v0_engine_samples_with_pytorch_by_default() -> None:
    assert not RELEASES["0.7.2"].flashinfer_sampler_default
