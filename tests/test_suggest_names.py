"""GPU and model "did you mean" hints only for near-identical spellings: the numbers in a name are the product."""

from __future__ import annotations

import pytest

from catalog.gpus import GPUS
from catalog.models import MODELS
from config.errors import ConfigError, suggest_name
from tests.factories import make_config


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
