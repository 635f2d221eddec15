"""GPU and model "did you mean" hints only for near-identical spellings: the numbers in a name are the product."""

from __future__ import annotations

import pytest

from catalog.gpus import GPUS
from catalog.models import MODELS
from config.errors import ConfigError, model_hint, suggest_name
from tests.factories import make_config
from validation import assess


@pytest.mark.parametrize("typed", ["A100", "H100", "H100-80GB"])
def test_a_gpu_with_other_numbers_is_never_suggested(typed: str) -> None:
    wrong = {"A100": "A10G", "H100": "H200", "H100-80GB": "GH200-480GB"}[typed]
    assert f"`{wrong}`" not in suggest_name(typed, list(GPUS))


def test_a_gpu_family_name_lists_its_variants() -> None:
    assert suggest_name("H100", list(GPUS)) == "did you mean one of `H100-80GB-HBM3`, `H100-NVL`, `H100-PCIe`?"


def test_a_gpu_name_typed_in_lower_case_suggests_the_catalog_spelling() -> None:
    assert suggest_name("a100-sxm4-80gb", list(GPUS)) == "did you mean `A100-SXM4-80GB`?"


def test_a_gpu_name_short_of_its_suffix_suggests_it() -> None:
    assert suggest_name("H100-80GB", list(GPUS)) == "did you mean `H100-80GB-HBM3`?"


def test_a_model_of_another_size_is_never_suggested() -> None:
    assert suggest_name("meta-llama/Llama-3.1-7B-Instruct", list(MODELS)) == ""


def test_a_model_of_another_release_is_never_suggested() -> None:
    assert suggest_name("meta-llama/Llama-3.2-8B-Instruct", list(MODELS)) == ""


def test_a_typo_in_a_model_id_is_suggested() -> None:
    assert suggest_name("meta-llama/Llama-3.1-8B-Instrcut", list(MODELS)) == "did you mean `meta-llama/Llama-3.1-8B-Instruct`?"


def test_a_model_id_without_its_organisation_suggests_the_whole_id() -> None:
    assert suggest_name("Llama-3.1-70B-Instruct", list(MODELS)) == "did you mean `meta-llama/Llama-3.1-70B-Instruct`?"


def test_an_unknown_gpu_product_in_a_stack_suggests_only_its_own_variants() -> None:
    with pytest.raises(ConfigError) as raised:
        make_config(gpu={"product": "A100"})
    message = raised.value.issues[0].message  # the fix lists the whole catalog, A10G included
    assert ("`A10G`" in message, "`A100-SXM4-80GB`" in message) == (False, True)


def test_an_awq_checkpoint_of_a_catalog_model_is_named_as_a_different_model() -> None:
    hint = model_hint("Qwen/Qwen2.5-7B-Instruct-AWQ", list(MODELS))
    assert hint == "the catalog's `Qwen/Qwen2.5-7B-Instruct` is a different model"


def test_a_base_model_is_not_offered_its_instruct_fine_tune_as_a_spelling() -> None:
    assert "did you mean" not in model_hint("google/gemma-2-27b", list(MODELS))


def test_gemma_3_gets_no_hint_of_gemma_2() -> None:
    assert model_hint("google/gemma-3-27b-it", list(MODELS)) == ""


def test_a_misspelled_part_of_a_model_id_is_suggested() -> None:
    assert model_hint("meta-llama/Llama-3.1-8B-Instrcut", list(MODELS)) == "did you mean `meta-llama/Llama-3.1-8B-Instruct`?"


def test_a_model_id_typed_in_lower_case_is_suggested_in_the_catalog_spelling() -> None:
    assert model_hint("qwen/qwen2.5-7b-instruct", list(MODELS)) == "did you mean `Qwen/Qwen2.5-7B-Instruct`?"


def test_a_relative_of_another_organisation_is_not_named() -> None:
    assert "hugging-quants" not in model_hint("meta-llama/Llama-3.1-8B", list(MODELS))


def test_an_unknown_awq_model_in_a_stack_names_the_bf16_model_as_different() -> None:
    verdict = assess(make_config(model={"id": "Qwen/Qwen2.5-7B-Instruct-AWQ"}))  # the Hub is unreachable in tests
    message = verdict.issues[0].message
    assert "is a different model" in message and "did you mean" not in message
