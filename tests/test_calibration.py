"""The estimator against real vLLM start-up logs (tests/data/vllm-startup-memory.csv).

The rows are public logs collected in the project's shared calibration folder; `source`/`url` name each.
Coefficients were fitted on R01, R21, R28 and R37 (one per memory era); every other row is out of sample.
Rows not claimed, and why: R27 (multimodal Mistral-Small-3.2; its vision encoder changes the activation
peak), R52 (v0.8.4, the pre-#19312 V1 formula, not modelled), R08-R13 (no KV figure logged; weights and
non-torch are checked instead).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from catalog.models import MODELS
from catalog.vllm_versions import default_batch_limits, memory_era
from preflight.kv_cache import kv_capacity
from preflight.memory import MemoryInputs, estimate_memory

ROWS = {row["row_id"]: row for row in csv.DictReader((Path(__file__).parent / "data/vllm-startup-memory.csv").open())}

# row -> vLLM version the log came from (the CSV's text, made exact): "~0.11" rows use 0.11.0, "~0.6.4" 0.6.4.
VERSIONS = {
    "R01": (0, 19, 0), "R03": (0, 19, 0), "R04": (0, 19, 0), "R05": (0, 19, 0), "R08": (0, 19, 0),
    "R09": (0, 19, 0), "R10": (0, 19, 0), "R11": (0, 19, 0), "R12": (0, 19, 0), "R13": (0, 19, 0),
    "R14": (0, 16, 0), "R15": (0, 17, 0), "R16": (0, 18, 0), "R21": (0, 11, 0), "R22": (0, 11, 0),
    "R28": (0, 6, 4), "R29": (0, 6, 4), "R37": (0, 6, 5),
}
KV_ROWS = ["R01", "R03", "R04", "R05", "R14", "R15", "R16", "R21", "R22", "R28", "R37"]
TOKEN_ROWS = ["R01", "R03", "R04", "R05"]
COMPONENT_ROWS = ["R08", "R09", "R10", "R11", "R12", "R13"]


def inputs_for(row_id: str) -> MemoryInputs:
    row = ROWS[row_id]
    model = row["model"].replace("meta-llama/Meta-Llama-3-8B", "meta-llama/Llama-3.1-8B-Instruct")
    version = VERSIONS[row_id]
    total = float(row["gpu_total_gib"])
    max_model_len = int(row["max_model_len"]) if row["max_model_len"].isdigit() else 8192
    seqs, tokens = default_batch_limits(version, total, gpu_is_a100=False, max_model_len=max_model_len)
    return MemoryInputs(
        arch=MODELS[model], era=memory_era(version), version=version, gpu_memory_gib=total,
        gpu_memory_utilization=float(row["gpu_memory_utilization"]),
        tensor_parallel_size=int(row["tensor_parallel_size"]), pipeline_parallel_size=int(row["pipeline_parallel_size"]),
        max_model_len=max_model_len, max_num_seqs=seqs, max_num_batched_tokens=tokens,
        block_size=int((row["block_size"] or "16").split()[0]), dtype="auto", quantization=None,
        kv_cache_dtype=row["kv_cache_dtype"] or "auto", enforce_eager=False,
    )


@pytest.mark.parametrize("row_id", KV_ROWS)
def test_kv_cache_gib_is_within_five_percent_of_the_logged_value(row_id: str) -> None:
    estimate = estimate_memory(inputs_for(row_id)).kv_cache_gib_per_gpu
    logged = float(ROWS[row_id]["kv_cache_gib"])
    assert abs(estimate / logged - 1) < 0.05, f"{row_id}: estimated {estimate:.2f} GiB, vLLM logged {logged} GiB"


@pytest.mark.parametrize("row_id", TOKEN_ROWS)
def test_kv_cache_tokens_are_within_five_percent_of_the_logged_value(row_id: str) -> None:
    inputs = inputs_for(row_id)
    tokens = kv_capacity(inputs, estimate_memory(inputs).kv_cache_gib_per_gpu).kv_cache_tokens
    logged = int(ROWS[row_id]["gpu_kv_cache_tokens"])
    assert abs(tokens / logged - 1) < 0.05, f"{row_id}: estimated {tokens} tokens, vLLM logged {logged}"


@pytest.mark.parametrize("row_id", COMPONENT_ROWS)
def test_weights_per_gpu_match_the_logged_split_over_tensor_and_pipeline_parallel(row_id: str) -> None:
    weights = estimate_memory(inputs_for(row_id)).weights_gib_per_gpu
    assert weights == pytest.approx(float(ROWS[row_id]["weights_gib"]), rel=0.02)


@pytest.mark.parametrize("row_id", ["R08", "R09", "R10", "R11"])
def test_non_torch_memory_with_tensor_parallel_matches_the_logs(row_id: str) -> None:
    assert estimate_memory(inputs_for(row_id)).non_torch_gib == pytest.approx(float(ROWS[row_id]["non_torch_gib"]),
                                                                              abs=0.1)


def test_the_failure_row_is_refused_like_vllm_refused_it() -> None:
    inputs = inputs_for("R29")  # "max seq len (29000) is larger than ... KV cache (23648)"
    capacity = kv_capacity(inputs, estimate_memory(inputs).kv_cache_gib_per_gpu)
    assert ROWS["R29"]["outcome"].startswith("fail")
    assert capacity.kv_cache_tokens < inputs.max_model_len


def test_the_neighbouring_success_row_starts_like_vllm_started() -> None:
    inputs = inputs_for("R28")  # the same setup at max_model_len 20000 started
    capacity = kv_capacity(inputs, estimate_memory(inputs).kv_cache_gib_per_gpu)
    assert ROWS["R28"]["outcome"] == "ok"
    assert capacity.kv_cache_tokens >= inputs.max_model_len


def test_fp8_kv_cache_doubles_the_tokens_of_the_same_pool() -> None:
    auto, fp8 = inputs_for("R03"), inputs_for("R04")
    tokens = [kv_capacity(i, estimate_memory(i).kv_cache_gib_per_gpu).kv_cache_tokens for i in (auto, fp8)]
    assert tokens[1] == pytest.approx(2 * tokens[0], rel=0.001)
