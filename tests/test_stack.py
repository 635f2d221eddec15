"""build_stack: the one wiring function, from the plan."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi

from components.stack import build_stack
from config.secrets import StackSecrets
from plan import resolve
from plan.names import instance_name
from tests.factories import make_config
from tests.harness import run_program_catching


def test_the_instance_is_named_after_the_stack_as_a_dns_label() -> None:
    assert instance_name("Prod_EU.1") == "vllm-prod-eu-1"


def test_a_long_stack_name_is_cut_to_38_characters_without_a_trailing_dash() -> None:
    name = instance_name("a" * 33 + "-b")
    assert len(name) <= 38 and not name.endswith("-")


def test_a_stack_name_with_nothing_usable_falls_back_to_vllm() -> None:
    assert instance_name("___") == "vllm"


def test_a_docker_stack_with_its_api_key_builds() -> None:
    cfg = make_config(target="docker", docker={}, security={"require_api_key": True})
    secrets = StackSecrets(api_key=pulumi.Output.secret("sk-test"))
    registered, error = run_program_catching(lambda: build_stack(resolve(cfg, "vllm-test"), secrets))
    assert error is None
    assert "vllm-serving:index:DockerHost" in registered.types


# A small model the catalog does not list, described by its config.json keys.
UNLISTED = {
    "id": "acme/unlisted-1b",
    "architecture": {
        "num_hidden_layers": 16,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "hidden_size": 2048,
        "intermediate_size": 8192,
        "vocab_size": 32000,
        "max_position_embeddings": 8192,
    },
}


def token_warnings(model: Mapping[str, object], monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    """The warnings build_stack logs about the hf_token, for a stack serving `model` without one."""
    warned: list[str] = []
    monkeypatch.setattr(pulumi.log, "warn", lambda message, *_, **__: warned.append(message))
    cfg = make_config(model=model)
    run_program_catching(lambda: build_stack(resolve(cfg, "vllm-test"), StackSecrets()))
    return [message for message in warned if "hf_token" in message]


def test_a_public_catalog_model_gets_no_token_warning(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert token_warnings({"id": "Qwen/Qwen2.5-7B-Instruct"}, monkeypatch) == []


def test_a_model_the_catalog_does_not_know_is_warned_about_the_token(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (warning,) = token_warnings(UNLISTED, monkeypatch)
    assert warning.startswith("no hf_token secret: downloading acme/unlisted-1b works only if the repository is public")
