"""Which `vllm serve` flags, values and environment variables each deployable vLLM release accepts.

Read from the released wheels (shared reference "vllm-kubernetes-facts.md" §A):
0.7.2 `engine/arg_utils.py` (add_cli_args 224-980), `entrypoints/openai/cli_args.py`, `envs.py`,
`platforms/interface.py:27-40`; 0.33.0 `engine/arg_utils.py` (add_cli_args 959-1970),
`entrypoints/common/cli_args.py`, `config/speculative.py:405-660`, `v1/attention/backends/registry.py`.
Only flags this program renders or guards are listed; the table is what render and checks consult.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FlagTable:
    version: str
    flags: frozenset[str]  # long flags accepted by `vllm serve` that this program may emit
    removed: dict[str, str]  # flags gone in this version -> what replaced them
    attention_backend_env: bool  # VLLM_ATTENTION_BACKEND is read (else --attention-backend)
    attention_backends: frozenset[str]
    quantizations: frozenset[str]
    speculative_methods: frozenset[str]
    speculative_draft_revision: bool  # a draft model revision can be given
    engine_ready_timeout_env: bool  # VLLM_ENGINE_READY_TIMEOUT_S exists


# Flags this program renders from typed config (both spellings vLLM accepts map to one canonical flag).
_COMMON = frozenset({
    "--served-model-name", "--host", "--port", "--tensor-parallel-size", "--pipeline-parallel-size",
    "--max-model-len", "--gpu-memory-utilization", "--max-num-seqs", "--max-num-batched-tokens", "--block-size",
    "--enable-prefix-caching", "--no-enable-prefix-caching", "--dtype", "--kv-cache-dtype", "--quantization",
    "--enforce-eager", "--revision", "--tokenizer-revision", "--trust-remote-code",
})

V0_7_2 = FlagTable(
    version="0.7.2",
    flags=_COMMON | {
        "--disable-log-requests",  # request logging is on by default in 0.7.2 (arg_utils.py:1347)
        "--speculative-model", "--num-speculative-tokens", "--ngram-prompt-lookup-max", "--ngram-prompt-lookup-min",
        "--speculative-draft-tensor-parallel-size",  # arg_utils.py:719-834
    },
    removed={"--attention-backend": "the VLLM_ATTENTION_BACKEND environment variable (engine.attention_backend)",
             "--speculative-config": "--speculative-model (engine.speculative)",
             "--enable-log-requests": "request logging is on unless --disable-log-requests"},
    attention_backend_env=True,
    # _Backend enum, platforms/interface.py:27-40 (those usable on NVIDIA GPUs).
    attention_backends=frozenset({"FLASH_ATTN", "FLASH_ATTN_VLLM_V1", "XFORMERS", "FLASHINFER", "TORCH_SDPA",
                                  "TRITON_MLA", "BLOCK_SPARSE_FLASH_ATTN"}),
    # model_executor/layers/quantization/__init__.py:8-33 (the subset config.engine can size).
    quantizations=frozenset({"fp8", "awq", "awq_marlin", "gptq", "gptq_marlin", "bitsandbytes"}),
    speculative_methods=frozenset({"ngram", "draft_model"}),  # "[ngram]" or a draft name in --speculative-model
    speculative_draft_revision=False,  # config.py: "draft_revision = None ... not currently supported"
    engine_ready_timeout_env=False,  # V0 engine runs in-process; no engine-core handshake timeout
)

V0_33_0 = FlagTable(
    version="0.33.0",
    # Native multi-node (mp executor): arg_utils.py:1162-1300 (ParallelConfig group), --headless in
    # entrypoints/common/cli_args.py:445; docs/multinode.md.
    flags=_COMMON | {"--attention-backend", "--speculative-config", "--distributed-executor-backend", "--nnodes",
                     "--node-rank", "--master-addr", "--master-port", "--headless"},
    removed={"--disable-log-requests": "--enable-log-requests (off by default); removed by vLLM PR #29402",
             "--swap-space": "nothing (V1 does not swap); removed in 0.18 (vLLM PR #36216)",
             "--speculative-model": "--speculative-config (engine.speculative)",
             "--num-speculative-tokens": "--speculative-config (engine.speculative)",
             "--ngram-prompt-lookup-max": "--speculative-config prompt_lookup_max",
             "--ngram-prompt-lookup-min": "--speculative-config prompt_lookup_min",
             "--speculative-draft-tensor-parallel-size": "--speculative-config draft_tensor_parallel_size",
             "--use-v2-block-manager": "nothing", "--num-scheduler-steps": "nothing",
             "--preemption-mode": "nothing", "--guided-decoding-backend": "nothing",
             "--enable-reasoning": "nothing", "--task": "--runner / --convert",
             "--max-seq-len-to-capture": "nothing"},
    attention_backend_env=False,  # VLLM_ATTENTION_BACKEND absent from 0.33.0 envs.py: silently ignored
    # AttentionBackendEnum names for NVIDIA GPUs (v1/attention/backends/registry.py). XFORMERS removed (PR #29262).
    attention_backends=frozenset({"FLASH_ATTN", "TRITON_ATTN", "FLASHINFER", "FLASHMLA", "CUTLASS_MLA"}),
    # bitsandbytes, gguf, aqlm, marlin, hqq, qqq moved out of core into plugins.
    quantizations=frozenset({"fp8", "awq", "awq_marlin", "gptq", "gptq_marlin"}),
    speculative_methods=frozenset({"ngram", "draft_model", "suffix", "eagle", "eagle3", "mtp"}),
    speculative_draft_revision=True,  # SpeculativeConfig.revision
    engine_ready_timeout_env=True,  # envs.py:811-815, default 600 s
)

FLAG_TABLES: dict[str, FlagTable] = {table.version: table for table in (V0_7_2, V0_33_0)}

# Flags the program owns in every version, with the short and legacy aliases vLLM accepts for them
# (FlexibleArgumentParser also accepts underscores; callers normalise those first).
OWNED_FLAGS: frozenset[str] = _COMMON | V0_7_2.flags | V0_33_0.flags | {
    "--model", "--api-key", "--download-dir", "--spec-method", "--spec-model", "--spec-tokens",
}
FLAG_ALIASES: dict[str, str] = {
    "-tp": "--tensor-parallel-size", "-pp": "--pipeline-parallel-size", "-q": "--quantization",
    "-sc": "--speculative-config", "-spec-draft-tp": "--speculative-draft-tensor-parallel-size",
    "--device-memory-utilization": "--gpu-memory-utilization",
    "-n": "--nnodes", "-r": "--node-rank",  # 0.33.0 arg_utils.py ParallelConfig group (docs/multinode.md)
}
# Never passed: it turns off every vllm:* Prometheus series (llm_engine.py:359-380; async_llm.py:204-214).
FORBIDDEN_FLAGS: dict[str, str] = {
    "--disable-log-stats": "it disables vLLM's Prometheus metrics too, which autoscaling and alerts read",
}
