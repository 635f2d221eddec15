"""build_stack: the one wiring function, from the plan."""

from __future__ import annotations

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
