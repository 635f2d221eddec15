"""`vllm serve` arguments and environment per vLLM version (plan/vllm_args.py, as the plan holds them)."""

from __future__ import annotations

import json

import pytest

from catalog.vllm_flags import FLAG_TABLES
from plan.names import HF_HOME
from plan.routing import resolve_scale_out
from plan.vllm_args import vllm_env
from tests.kubernetes_fixtures import configured, flag_value, plan_of, stack
from validation.vllm import check_vllm_config

VERSIONS = ("0.7.2", "0.33.0")


def args_for(**changes: object) -> list[str]:
    cfg, _ = configured(**changes)
    return list(plan_of(cfg).server.args)


def env_for(startup: int = 900, **changes: object) -> dict[str, str]:
    cfg, report = configured(**changes)
    return vllm_env(cfg, report.resolved, startup, resolve_scale_out(cfg.routing, FLAG_TABLES[report.resolved.release.version]))


def test_model_is_the_first_positional_argument():
    assert args_for()[0] == "meta-llama/Llama-3.1-8B-Instruct"


def test_model_is_never_passed_with_the_model_flag():
    assert "--model" not in args_for()


@pytest.mark.parametrize("version", VERSIONS)
def test_every_emitted_flag_is_accepted_by_the_configured_version(version: str):
    args = args_for(
        vllm={"version": version},
        engine={"max_model_len": 8192, "enforce_eager": True, "quantization": "fp8", "attention_backend": "FLASHINFER"},
        model={"id": "meta-llama/Llama-3.1-8B-Instruct", "revision": "abc123", "trust_remote_code": True},
    )
    flags = [arg for arg in args if arg.startswith("--")]
    assert set(flags) <= FLAG_TABLES[version].flags


@pytest.mark.parametrize("version", VERSIONS)
def test_every_emitted_speculative_flag_is_accepted_by_the_configured_version(version: str):
    args = args_for(
        vllm={"version": version},
        engine={
            "max_model_len": 8192,
            "speculative": {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4, "prompt_lookup_min": 2},
        },
    )
    assert {arg for arg in args if arg.startswith("--")} <= FLAG_TABLES[version].flags


@pytest.mark.parametrize("version", VERSIONS)
def test_no_flag_is_both_accepted_and_removed_in_a_version(version: str):
    table = FLAG_TABLES[version]
    assert table.flags.isdisjoint(table.removed)


def test_prod_stack_renders_every_resolved_engine_value():
    cfg, _ = stack("prod")
    args = list(plan_of(cfg).server.args)
    expected = {
        "--served-model-name": "llama-70b",
        "--tensor-parallel-size": "4",
        "--pipeline-parallel-size": "1",
        "--max-model-len": "8192",
        "--gpu-memory-utilization": "0.9",
        "--max-num-seqs": "256",
        "--max-num-batched-tokens": "2048",
        "--dtype": "auto",
        "--kv-cache-dtype": "auto",
        "--port": "8000",
    }
    assert {flag: flag_value(args, flag) for flag in expected} == expected


def test_the_block_size_is_left_to_vllm_unless_set():
    assert "--block-size" not in args_for()
    assert flag_value(args_for(engine={"block_size": 32}), "--block-size") == "32"


def test_prod_stack_turns_prefix_caching_on_explicitly():
    cfg, _ = stack("prod")
    args = list(plan_of(cfg).server.args)
    assert "--enable-prefix-caching" in args and "--no-enable-prefix-caching" not in args


def test_prefix_caching_off_by_default_on_0_7_2_is_rendered_as_the_negative_flag():
    args = args_for(vllm={"version": "0.7.2"})
    assert "--no-enable-prefix-caching" in args and "--enable-prefix-caching" not in args


def test_default_max_num_seqs_is_rendered_from_the_resolved_engine():
    cfg, report = configured()
    assert flag_value(list(plan_of(cfg).server.args), "--max-num-seqs") == str(report.resolved.max_num_seqs)


@pytest.mark.parametrize("version", VERSIONS)
def test_disable_log_stats_is_never_rendered(version: str):
    assert "--disable-log-stats" not in args_for(vllm={"version": version})


def test_request_logging_is_turned_off_on_0_7_2():
    assert "--disable-log-requests" in args_for(vllm={"version": "0.7.2"})


def test_disable_log_requests_is_absent_on_0_33_0():
    assert "--disable-log-requests" not in args_for(vllm={"version": "0.33.0"})


def test_swap_space_is_never_rendered():
    assert not any(arg.startswith("--swap-space") for v in VERSIONS for arg in args_for(vllm={"version": v}))


def test_enforce_eager_flag_appears_only_when_configured():
    assert "--enforce-eager" in args_for(engine={"max_model_len": 8192, "enforce_eager": True})
    assert "--enforce-eager" not in args_for()


def test_quantization_is_rendered_when_set():
    assert flag_value(args_for(engine={"max_model_len": 8192, "quantization": "fp8"}), "--quantization") == "fp8"


def test_quantization_is_absent_when_unset():
    assert "--quantization" not in args_for()


def test_pinned_revision_is_passed_for_offline_loading():
    args = args_for(model={"id": "meta-llama/Llama-3.1-8B-Instruct", "revision": "0e9e39f"})
    assert flag_value(args, "--revision") == "0e9e39f" and flag_value(args, "--tokenizer-revision") == "0e9e39f"


def test_no_revision_flag_without_a_pinned_revision():
    assert "--revision" not in args_for()


def test_local_path_becomes_the_positional_model_on_the_cache_volume():
    args = args_for(
        model={"id": "meta-llama/Llama-3.1-8B-Instruct", "local_path": "models/llama-8b"}, cache={"existing_claim": "models"}
    )
    assert args[0] == f"{HF_HOME}/models/llama-8b"


def test_attention_backend_is_a_flag_on_0_33_0():
    args = args_for(engine={"max_model_len": 8192, "attention_backend": "FLASHINFER"})
    assert flag_value(args, "--attention-backend") == "FLASHINFER"


def test_attention_backend_is_not_a_flag_on_0_7_2():
    args = args_for(vllm={"version": "0.7.2"}, engine={"max_model_len": 8192, "attention_backend": "XFORMERS"})
    assert "--attention-backend" not in args


def test_attention_backend_is_an_environment_variable_on_0_7_2():
    env = env_for(vllm={"version": "0.7.2"}, engine={"max_model_len": 8192, "attention_backend": "XFORMERS"})
    assert env["VLLM_ATTENTION_BACKEND"] == "XFORMERS"


def test_attention_backend_environment_variable_is_absent_on_0_33_0():
    env = env_for(engine={"max_model_len": 8192, "attention_backend": "FLASHINFER"})
    assert "VLLM_ATTENTION_BACKEND" not in env


def test_ngram_speculation_is_one_json_config_on_0_33_0():
    args = args_for(
        engine={"max_model_len": 8192, "speculative": {"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 4}}
    )
    config = json.loads(flag_value(args, "--speculative-config"))
    assert config == {"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 4}


def test_ngram_speculation_uses_the_legacy_flags_on_0_7_2():
    args = args_for(
        vllm={"version": "0.7.2"},
        engine={"max_model_len": 8192, "speculative": {"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 4}},
    )
    legacy = {
        flag: flag_value(args, flag)
        for flag in ("--speculative-model", "--num-speculative-tokens", "--ngram-prompt-lookup-max")
    }
    assert legacy == {"--speculative-model": "[ngram]", "--num-speculative-tokens": "5", "--ngram-prompt-lookup-max": "4"}


def test_speculative_config_is_absent_on_0_7_2():
    args = args_for(
        vllm={"version": "0.7.2"},
        engine={"max_model_len": 8192, "speculative": {"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 4}},
    )
    assert "--speculative-config" not in args


def test_draft_model_speculation_names_the_draft_on_0_33_0():
    args = args_for(
        model={"id": "meta-llama/Llama-3.1-70B-Instruct"},
        gpu={"product": "A100-SXM4-80GB"},
        engine={
            "max_model_len": 8192,
            "tensor_parallel_size": 4,
            "speculative": {"method": "draft_model", "model": "meta-llama/Llama-3.1-8B-Instruct", "num_speculative_tokens": 4},
        },
    )
    config = json.loads(flag_value(args, "--speculative-config"))
    assert config["model"] == "meta-llama/Llama-3.1-8B-Instruct" and config["method"] == "draft_model"


def test_extra_args_are_appended_last():
    args = args_for(engine={"max_model_len": 8192, "extra_args": ["--disable-custom-all-reduce"]})
    assert args[-1] == "--disable-custom-all-reduce"


def test_server_loads_offline_from_the_cache():
    env = env_for()
    assert env["HF_HUB_OFFLINE"] == "1" and env["HF_HOME"] == HF_HOME


def test_compile_caches_live_under_the_writable_home():
    env = env_for()
    caches = [env[key] for key in ("VLLM_CACHE_ROOT", "TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR")]
    assert all(path.startswith(env["HOME"] + "/") for path in caches)


def test_engine_ready_timeout_matches_the_startup_budget_on_0_33_0():
    assert env_for(startup=1740)["VLLM_ENGINE_READY_TIMEOUT_S"] == "1740"


def test_engine_ready_timeout_is_absent_on_0_7_2():
    assert "VLLM_ENGINE_READY_TIMEOUT_S" not in env_for(vllm={"version": "0.7.2"})


def test_logging_level_comes_from_config():
    assert env_for(vllm={"logging_level": "DEBUG"})["VLLM_LOGGING_LEVEL"] == "DEBUG"


def test_hugging_face_token_is_never_in_the_server_environment():
    env = env_for()
    assert "HF_TOKEN" not in env and "HF_TOKEN_PATH" not in env


def test_a_block_size_above_32_is_refused_on_vllm_0_7_2() -> None:
    cfg, report = configured(vllm={"version": "0.7.2"}, engine={"block_size": 64})
    issues = check_vllm_config(cfg, report.resolved)
    assert [(i.key, i.message) for i in issues] == [("engine.block_size", "is 64, but vLLM 0.7.2 on CUDA accepts at most 32.")]
