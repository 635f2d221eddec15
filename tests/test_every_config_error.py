"""An unknown key does not hide the other problems of the file: every config error is reported at once."""

from __future__ import annotations

import pytest

from config.errors import ConfigError
from tests.factories import make_config


def _keys(**changes: object) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        make_config(**changes)
    return [issue.key for issue in raised.value.issues]


def test_an_unknown_key_and_a_rule_between_keys_are_reported_together() -> None:
    keys = _keys(engine={"tensor_paralel_size": 2}, gpu={"product": "A100-SXM4-80GB", "count": 3})
    assert keys == ["engine.tensor_paralel_size", "gpu.count"]


def test_an_unknown_key_does_not_hide_a_check_of_its_own_group() -> None:
    keys = _keys(model={"id": "meta-llama/Llama-3.1-8B-Instruct", "num_parameters": 8_000_000_000, "revison": "abc"})
    assert keys == ["model.revison", "model"]


def test_unknown_keys_in_two_groups_are_both_reported() -> None:
    assert _keys(engine={"max_modl_len": 4096}, cache={"sise_gib": 10}) == ["engine.max_modl_len", "cache.sise_gib"]
