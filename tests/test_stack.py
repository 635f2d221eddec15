"""build_stack: the one wiring function, and the narrow preflight -> components seam (preflight.report.Sizing)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pytest

from components.stack import build_stack, instance_name
from config.secrets import StackSecrets
from config.sources import load_stack_file
from preflight import run_preflight
from preflight.report import Sizing
from preflight.resolve import ResolvedEngine
from tests.factories import STACKS, make_config
from tests.harness import run_program, run_program_catching


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
    registered, error = run_program_catching(lambda: build_stack(cfg, run_preflight(cfg), secrets))
    assert error is None
    assert "vllm-serving:index:DockerHost" in registered.types


@dataclass(frozen=True)
class OnlySizing:
    """The four figures of preflight.report.Sizing and nothing else."""

    resolved: ResolvedEngine
    weights_on_disk_gib: float
    kv_cache_tokens: int
    target_tokens_per_request: int


SHIPPED = sorted(STACKS.glob("Pulumi.*.yaml"))


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_components_need_only_the_sizing_figures_of_the_report(path) -> None:  # type: ignore[no-untyped-def]
    cfg = load_stack_file(path)
    report = run_preflight(cfg)
    narrow = OnlySizing(
        report.resolved, report.weights_on_disk_gib, report.capacity.kv_cache_tokens, report.target.tokens_per_request
    )
    secrets = StackSecrets(api_key=pulumi.Output.secret("sk"))

    def registered(sizing: Sizing) -> list[tuple[str, str, dict]]:
        def build() -> None:
            build_stack(cfg, sizing, secrets)

        return sorted(((r.typ, r.name, r.inputs) for r in run_program(build).resources), key=lambda r: r[:2])

    assert registered(narrow) == registered(report)
