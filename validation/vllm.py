"""Version checks: the config must only ask for flags and values the configured vLLM release accepts."""

from __future__ import annotations

from catalog.vllm_flags import FLAG_ALIASES, FLAG_TABLES, FORBIDDEN_FLAGS, OWNED_FLAGS, FlagTable
from config.errors import ConfigIssue, show
from config.stack import StackConfig
from preflight.resolve import ResolvedEngine

# Which config key renders each owned flag, for collision messages.
FLAG_KEYS: dict[str, str] = {
    "--model": "model.id",
    "--served-model-name": "engine.served_model_name",
    "--port": "server.port",
    "--host": "(the program: binds all interfaces)",
    "--tensor-parallel-size": "engine.tensor_parallel_size",
    "--pipeline-parallel-size": "engine.pipeline_parallel_size",
    "--max-model-len": "engine.max_model_len",
    "--gpu-memory-utilization": "engine.gpu_memory_utilization",
    "--max-num-seqs": "engine.max_num_seqs",
    "--max-num-batched-tokens": "engine.max_num_batched_tokens",
    "--block-size": "engine.block_size",
    "--enable-prefix-caching": "engine.enable_prefix_caching",
    "--no-enable-prefix-caching": "engine.enable_prefix_caching",
    "--dtype": "engine.dtype",
    "--kv-cache-dtype": "engine.kv_cache_dtype",
    "--quantization": "engine.quantization",
    "--enforce-eager": "engine.enforce_eager",
    "--revision": "model.revision",
    "--tokenizer-revision": "model.revision",
    "--trust-remote-code": "model.trust_remote_code",
    "--attention-backend": "engine.attention_backend",
    "--api-key": "security.require_api_key (the key comes from the api_key secret)",
    "--download-dir": "the cache volume (HF_HOME)",
    "--disable-log-requests": "(the program, on 0.7.x)",
    "--nnodes": "engine.nnodes",
    "--node-rank": "engine.nnodes (each pod's rank comes from LWS_WORKER_INDEX)",
    "--master-addr": "engine.nnodes (the leader's address comes from LWS_LEADER_ADDRESS)",
    "--master-port": "multinode.master_port",
    "--headless": "engine.nnodes (workers run headless)",
    "--distributed-executor-backend": "engine.nnodes (mp across nodes)",
    "--shutdown-timeout": "server.termination_grace_period_seconds",
    "--enable-lora": "lora.adapters",
    "--lora-modules": "lora.adapters",
    "--max-loras": "lora.max_loras",
    "--max-lora-rank": "lora.max_lora_rank",
    "--max-cpu-loras": "lora.max_cpu_loras",
}


def canonical_flag(token: str) -> str | None:
    """'--max_num_seqs=8' -> '--max-num-seqs'; '--speculative-config.method' -> '--speculative-config'."""
    if not token.startswith("-") or token == "-" or token[1:2].isdigit():
        return None  # a value, e.g. '8' or '-1'
    name = token.split("=", 1)[0]
    if name.startswith("--"):
        name = "--" + name[2:].replace("_", "-").split(".", 1)[0]
    return FLAG_ALIASES.get(name, name)


def _extra_arg_issue(flag: str, table: FlagTable) -> ConfigIssue | None:
    if flag in FORBIDDEN_FLAGS:
        return ConfigIssue("engine.extra_args", f"contains {flag}: {FORBIDDEN_FLAGS[flag]}.", f"remove {flag}.")
    if flag in table.removed:
        return ConfigIssue(
            "engine.extra_args",
            f"contains {flag}, which vLLM {table.version} does not accept (`unrecognized arguments`).",
            f"remove it; use {table.removed[flag]}.",
        )
    if flag in OWNED_FLAGS:
        owner = FLAG_KEYS.get(flag, "engine.speculative")
        return ConfigIssue(
            "engine.extra_args",
            f"contains {flag}, which the program renders from {owner}.",
            f"remove {flag} from engine.extra_args and set {owner} instead.",
        )
    return None


def check_extra_args(cfg: StackConfig, table: FlagTable) -> list[ConfigIssue]:
    flags = [canonical_flag(token) for token in cfg.engine.extra_args]
    return [issue for flag in dict.fromkeys(f for f in flags if f) if (issue := _extra_arg_issue(flag, table))]


def nvidia_backends(table: FlagTable) -> list[str]:
    """The release's attention backends minus the other platforms' (ROCm, CPU, XPU), for messages."""
    return sorted(b for b in table.attention_backends if not b.startswith(("ROCM_", "CPU_", "XPU_", "AMX_")))


def check_engine_values(cfg: StackConfig, table: FlagTable) -> list[ConfigIssue]:
    engine, issues = cfg.engine, []
    version = table.version
    if engine.attention_backend and engine.attention_backend not in table.attention_backends:
        how = "VLLM_ATTENTION_BACKEND" if table.attention_backend_env else "--attention-backend"
        issues.append(
            ConfigIssue(
                "engine.attention_backend",
                f"is {show(engine.attention_backend)}, which vLLM {version} does not offer through {how}.",
                f"use one of {', '.join(nvidia_backends(table))}, or remove it.",
            )
        )
    if table.version == "0.7.2" and (engine.block_size or 16) > 32:  # 0.7.2 arg_utils: "CUDA supports <= 32"
        issues.append(
            ConfigIssue(
                "engine.block_size",
                f"is {engine.block_size}, but vLLM 0.7.2 on CUDA accepts at most 32.",
                "use 8, 16 or 32, or vllm.version 0.33.0.",
            )
        )
    if engine.quantization and engine.quantization not in table.quantizations:
        issues.append(
            ConfigIssue(
                "engine.quantization",
                f"is {show(engine.quantization)}, which vLLM {version} does not accept in core "
                "(moved to a plugin or not yet added).",
                f"use one of {', '.join(sorted(table.quantizations))}, or another vllm.version.",
            )
        )
    return issues + _speculative_issues(cfg, table)


def _speculative_issues(cfg: StackConfig, table: FlagTable) -> list[ConfigIssue]:
    spec, version = cfg.engine.speculative, table.version
    if spec is None:
        return []
    issues: list[ConfigIssue] = []
    if spec.method not in table.speculative_methods:
        issues.append(
            ConfigIssue(
                "engine.speculative.method",
                f"is {show(spec.method)}, which vLLM {version} does not support.",
                f"use one of {', '.join(sorted(table.speculative_methods))}, or vllm.version 0.33.0.",
            )
        )
    if spec.revision and not table.speculative_draft_revision:
        issues.append(
            ConfigIssue(
                "engine.speculative.revision",
                f"is {show(spec.revision)}, but vLLM {version} always loads the draft "
                "model's default branch (no draft revision flag).",
                "remove it, or use vllm.version 0.33.0.",
            )
        )
    if spec.method == "ngram" and "--ngram-prompt-lookup-max" in table.flags and spec.prompt_lookup_max is None:
        issues.append(
            ConfigIssue(
                "engine.speculative.prompt_lookup_max",
                f'is unset, but vLLM {version} requires it for ngram ("ngram_prompt_lookup_max=None must be > 0").',
                "set it, e.g. prompt_lookup_max: 4.",
            )
        )
    return issues


def check_env(cfg: StackConfig) -> list[ConfigIssue]:
    from plan.vllm_args import OWNED_ENV

    clashes = sorted(set(cfg.vllm.extra_env) & OWNED_ENV)
    if not clashes:
        return []
    return [
        ConfigIssue(
            "vllm.extra_env",
            f"sets {', '.join(clashes)}, which the program sets itself.",
            "remove them; use the typed keys (engine.*, vllm.logging_level, security.*) instead.",
        )
    ]


def flag_values(args: list[str] | tuple[str, ...]) -> list[tuple[str, str | None]]:
    """(canonical flag, its value or None) for each flag of a rendered command line, in order: the value after
    `=` or the next argument unless that is a flag."""
    found = []
    for index, token in enumerate(args):
        flag = canonical_flag(token) if token.startswith("--") or token in FLAG_ALIASES else None
        if flag is None:
            continue
        following = args[index + 1] if index + 1 < len(args) else None
        value = token.split("=", 1)[1] if "=" in token else following
        found.append((flag, None if value is None or value.startswith("-") else value))
    return found


def check_rendered_args(args: list[str], table: FlagTable) -> list[ConfigIssue]:
    """The finished command line against the release's own table (catalog/data/vllm/<version>.json): every
    flag must be one `vllm serve` of that release accepts, and the values of flags with choices among them."""
    issues: list[ConfigIssue] = []
    for flag, value in flag_values(args):
        key = FLAG_KEYS.get(flag, "engine.speculative" if "spec" in flag or "ngram" in flag else "engine.extra_args")
        if flag not in table.flags:
            issues.append(
                ConfigIssue(
                    key,
                    f"renders {flag}, which vLLM {table.version} does not accept (`unrecognized arguments`).",
                    f"remove it or use a vllm.version that has {flag}.",
                )
            )
            continue
        choices = table.choices.get(flag)
        if choices and value is not None and value not in {str(choice) for choice in choices}:
            issues.append(
                ConfigIssue(
                    key,
                    f"renders {flag} {value}, which vLLM {table.version} does not accept.",
                    f"use one of {', '.join(map(str, choices))}.",
                )
            )
    return issues


def check_vllm_config(cfg: StackConfig, resolved: ResolvedEngine) -> list[ConfigIssue]:
    """Every flag/version problem in the config, in key order."""
    table = FLAG_TABLES[resolved.release.version]
    return check_engine_values(cfg, table) + check_extra_args(cfg, table) + check_env(cfg)
