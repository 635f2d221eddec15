"""Config that the configured vLLM version cannot run is refused with the key, the value and the fix."""

from __future__ import annotations

import pytest

from config.engine import SpeculativeConfig
from config.errors import ConfigIssue
from tests.kubernetes_fixtures import configured
from validation.vllm import canonical_flag, check_vllm_config


def issues_for(**changes: object) -> list[ConfigIssue]:
    cfg, report = configured(**changes)
    return check_vllm_config(cfg, report.resolved)


def extra(*args: str, version: str = "0.33.0") -> list[ConfigIssue]:
    return issues_for(vllm={"version": version}, engine={"max_model_len": 8192, "extra_args": list(args)})


def test_shipped_defaults_have_no_issues():
    assert issues_for() == []


@pytest.mark.parametrize(
    ("token", "flag"),
    [
        ("--max_num_seqs=8", "--max-num-seqs"),
        ("-tp", "--tensor-parallel-size"),
        ("--speculative-config.method", "--speculative-config"),
        ("8", None),
        ("-1", None),
    ],
)
def test_flags_are_normalised_the_way_vllm_parses_them(token: str, flag: str | None):
    assert canonical_flag(token) == flag


def test_extra_arg_colliding_with_an_owned_flag_names_the_config_key():
    assert extra("--max-model-len", "4096") == [
        ConfigIssue(
            "engine.extra_args",
            "contains --max-model-len, which the program renders from engine.max_model_len.",
            "remove --max-model-len from engine.extra_args and set engine.max_model_len instead.",
        )
    ]


def test_shutdown_timeout_in_extra_args_is_refused_naming_the_grace_period_it_is_rendered_from():
    assert [i.render() for i in extra("--shutdown-timeout", "600")] == [
        "vllm-serving:engine.extra_args: contains --shutdown-timeout, which the program renders from "
        "server.termination_grace_period_seconds. Fix: remove --shutdown-timeout from engine.extra_args and set "
        "server.termination_grace_period_seconds instead."
    ]


def test_extra_arg_collision_is_found_through_the_short_alias():
    assert [i.message for i in extra("-tp", "2")] == [
        "contains --tensor-parallel-size, which the program renders from engine.tensor_parallel_size."
    ]


def test_extra_arg_collision_is_found_through_the_underscore_spelling():
    assert len(extra("--gpu_memory_utilization=0.5")) == 1


def test_disable_log_stats_is_refused_because_it_removes_the_metrics():
    assert extra("--disable-log-stats")[0].message.startswith("contains --disable-log-stats: it disables vLLM's Prometheus")


def test_flag_removed_in_0_33_0_is_refused_with_its_replacement():
    issue = extra("--swap-space", "4")[0]
    assert "vLLM 0.33.0 does not accept" in issue.message and "PR #36216" in issue.fix


def test_disable_log_requests_is_refused_on_0_33_0():
    assert "vLLM 0.33.0 does not accept" in extra("--disable-log-requests")[0].message


def test_an_unowned_extra_flag_is_accepted():
    assert extra("--disable-custom-all-reduce") == []


def test_xformers_attention_backend_is_refused_on_0_33_0():
    issues = issues_for(engine={"max_model_len": 8192, "attention_backend": "XFORMERS"})
    assert [(i.key, i.message) for i in issues] == [
        ("engine.attention_backend", "is 'XFORMERS', which vLLM 0.33.0 does not offer through --attention-backend.")
    ]
    assert "FLASH_ATTN, " in issues[0].fix and "TRITON_ATTN, " in issues[0].fix and "ROCM" not in issues[0].fix


def test_xformers_attention_backend_is_accepted_on_0_7_2():
    assert issues_for(vllm={"version": "0.7.2"}, engine={"max_model_len": 8192, "attention_backend": "XFORMERS"}) == []


def test_bitsandbytes_is_refused_on_0_33_0():
    issues = issues_for(engine={"max_model_len": 8192, "quantization": "bitsandbytes"})
    assert [i.key for i in issues] == ["engine.quantization"]


def test_speculative_method_unsupported_by_0_7_2_is_refused():
    cfg, report = configured(vllm={"version": "0.7.2"})
    spec = SpeculativeConfig.model_construct(method="eagle", num_speculative_tokens=3, model="some/eagle-head")  # type: ignore[arg-type]
    cfg = cfg.model_copy(update={"engine": cfg.engine.model_copy(update={"speculative": spec})})
    issue = check_vllm_config(cfg, report.resolved)[0]
    assert (issue.key, issue.message) == ("engine.speculative.method", "is 'eagle', which vLLM 0.7.2 does not support.")


def test_draft_revision_is_refused_on_0_7_2():
    issues = issues_for(
        vllm={"version": "0.7.2"},
        engine={
            "max_model_len": 8192,
            "speculative": {
                "method": "draft_model",
                "model": "Qwen/Qwen3-0.6B",
                "revision": "main",
                "num_speculative_tokens": 3,
            },
        },
    )
    assert [i.key for i in issues] == ["engine.speculative.revision"]


def test_ngram_without_lookup_max_is_refused_on_0_7_2():
    issues = issues_for(
        vllm={"version": "0.7.2"},
        engine={"max_model_len": 8192, "speculative": {"method": "ngram", "num_speculative_tokens": 3}},
    )
    assert [i.key for i in issues] == ["engine.speculative.prompt_lookup_max"]


def test_ngram_without_lookup_max_is_accepted_on_0_33_0():
    assert issues_for(engine={"max_model_len": 8192, "speculative": {"method": "ngram", "num_speculative_tokens": 3}}) == []


def test_a_batch_smaller_than_one_request_on_0_7_2_is_left_to_the_preflight_which_blocks_it():
    # One rule in one place: tests/test_preflight_verdicts.py pins the preflight's message.
    assert issues_for(vllm={"version": "0.7.2"}, engine={"max_model_len": 8192, "max_num_batched_tokens": 4096}) == []


def test_extra_env_overriding_an_owned_variable_is_refused():
    issues = issues_for(vllm={"extra_env": {"HF_HUB_OFFLINE": "0", "NCCL_DEBUG": "INFO"}})
    assert [(i.key, i.message) for i in issues] == [("vllm.extra_env", "sets HF_HUB_OFFLINE, which the program sets itself.")]
