"""The server's render routes, which the router's cache_aware and kv_aware policies tokenize through
(plan/routing.py resolve_scale_out, validation/routing.py): what each release's server is given, and what is refused."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from catalog.vllm_flags import FLAG_TABLES, SCALE_OUT_ENV, SCALE_OUT_FLAG
from catalog.vllm_releases import version_key
from config.errors import ConfigError
from plan.routing import ScaleOut, resolve_scale_out
from plan.vllm_args import vllm_args, vllm_env
from tests.factories import make_config
from tests.kubernetes_fixtures import configured, plan_of

ROUTED: dict[str, Any] = {"routing": {"enabled": True}, "replicas": 2}
FLAG_RELEASES = sorted((v for v in FLAG_TABLES if FLAG_TABLES[v].scale_out_switch == SCALE_OUT_FLAG), key=version_key)
FLEET_MEMBER: dict[str, Any] = {
    "namespace": {"name": "llm"},
    "replicas": 2,
    "security": {"require_api_key": False},
    "routing": {"endpoint": "fleet"},
}


def server_of(**changes: Any) -> tuple[tuple[str, ...], dict[str, str]]:
    server = plan_of(make_config(**changes)).server
    return server.args, server.env


def test_the_releases_with_the_flag_are_0_30_0_and_later() -> None:
    """vLLM PRs #54579 (the routes off by default) and #55176 (--enable-scale-out) both first shipped in 0.30.0."""
    since = [v for v in sorted(FLAG_TABLES, key=version_key) if version_key(v) >= version_key("0.30.0")]
    assert since == FLAG_RELEASES


def test_no_release_table_reads_only_the_environment_variable() -> None:
    assert [v for v in FLAG_TABLES if FLAG_TABLES[v].scale_out_switch == SCALE_OUT_ENV] == []


@pytest.mark.parametrize("version", FLAG_RELEASES)
def test_a_cache_aware_router_gives_the_server_enable_scale_out_on_a_release_with_the_flag(version: str) -> None:
    args, _ = server_of(**ROUTED, vllm={"version": version})
    assert args.count(SCALE_OUT_FLAG) == 1


@pytest.mark.parametrize("version", FLAG_RELEASES)
def test_a_release_with_the_flag_is_not_given_the_environment_variable(version: str) -> None:
    _, env = server_of(**ROUTED, vllm={"version": version})
    assert SCALE_OUT_ENV not in env


def test_a_kv_aware_router_gives_the_server_enable_scale_out() -> None:
    args, _ = server_of(routing={"enabled": True, "policy": "kv_aware"}, replicas=2)
    assert SCALE_OUT_FLAG in args


@pytest.mark.parametrize("policy", ["round_robin", "power_of_two", "consistent_hash", "random", "sticky_least_loaded"])
def test_a_policy_that_needs_no_token_ids_leaves_the_scale_out_routes_off(policy: str) -> None:
    args, env = server_of(routing={"enabled": True, "policy": policy}, replicas=2)
    assert SCALE_OUT_FLAG not in args and SCALE_OUT_ENV not in env


def test_a_server_without_a_router_leaves_the_scale_out_routes_off() -> None:
    args, env = server_of()
    assert SCALE_OUT_FLAG not in args and SCALE_OUT_ENV not in env


def test_a_stack_joining_an_endpoint_gives_its_server_enable_scale_out_for_the_endpoints_router() -> None:
    args, _ = server_of(**FLEET_MEMBER)
    assert SCALE_OUT_FLAG in args


def test_the_flag_comes_before_the_extra_args_so_a_stated_no_enable_scale_out_still_wins() -> None:
    """argparse keeps the last of --enable-scale-out / --no-enable-scale-out: the operator's word is final."""
    args, _ = server_of(**ROUTED, engine={"extra_args": ["--no-enable-scale-out"]})
    assert args.index(SCALE_OUT_FLAG) < args.index("--no-enable-scale-out")


def test_a_release_reading_only_the_environment_variable_gets_it_set_to_1() -> None:
    table = replace(FLAG_TABLES["0.33.0"], scale_out_switch=SCALE_OUT_ENV)
    assert resolve_scale_out(make_config(**ROUTED).routing, table) == ScaleOut(env=((SCALE_OUT_ENV, "1"),))


def test_the_environment_variable_switch_renders_into_the_server_env_and_not_its_args() -> None:
    cfg, report = configured(**ROUTED)
    switch = ScaleOut(env=((SCALE_OUT_ENV, "1"),))
    env = vllm_env(cfg, report.resolved, 900, switch)
    args = vllm_args(cfg, report.resolved, 64.0, 30, switch)
    assert env[SCALE_OUT_ENV] == "1" and SCALE_OUT_FLAG not in args


def test_cache_aware_routing_on_a_release_without_a_switch_is_refused_naming_the_policy_its_value_and_the_fix() -> None:
    with pytest.raises(ConfigError) as error:
        make_config(**ROUTED, vllm={"version": "0.29.0"})
    [issue] = error.value.issues
    assert issue.key == "routing.policy"
    assert "'cache_aware'" in issue.message and "vLLM 0.29.0" in issue.message
    assert "0.30.0 or later" in issue.fix and "round_robin" in issue.fix


def test_a_round_robin_router_on_a_release_without_a_switch_is_accepted() -> None:
    assert make_config(routing={"enabled": True, "policy": "round_robin"}, replicas=2, vllm={"version": "0.29.0"})
