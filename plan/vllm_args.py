"""`vllm serve` arguments and environment for the configured vLLM release, decided once (plan/server.py). Pure;
Kubernetes and Docker serve with the same arguments.

The container command is ["vllm", "serve"] and the model is the first, positional argument: 0.7.2 rejects
`--model` with `vllm serve` (scripts.py:34-41) and current images changed ENTRYPOINT (docs/sources.md §A.1, §A.6).
Every resolved engine value is rendered explicitly so vLLM, the preflight and the dashboards agree.
"""

from __future__ import annotations

import json
import posixpath

from catalog.vllm_flags import FLAG_TABLES, FlagTable
from config.kubernetes import ServerConfig
from config.stack import StackConfig
from plan.lora import lora_env, lora_flags, resolve_lora
from plan.names import HF_HOME, HOME
from plan.routing import ScaleOut
from preflight.resolve import ResolvedEngine

STREAMER_BUFFER_SHARE = 0.25  # of the server's memory limit, for the Run:ai streamer's CPU buffer
# Kept of the grace period after the drain: the engine's processes exit and free the GPUs before the kubelet's
# SIGKILL (vLLM's own process manager allows 15 s on ROCm, vllm/v1/engine/utils.py).
ENGINE_TEARDOWN_SECONDS = 15


def model_argument(cfg: StackConfig, cache_dir: str = HF_HOME) -> str:
    """The positional model: a Hugging Face id served from the offline cache, a path on the cache volume, or
    the bucket folder vLLM streams from (delivery.mode object_storage)."""
    bucket = cfg.delivery.object_storage
    if bucket is not None and cfg.delivery.mode == "object_storage":
        return bucket.model_uri(cfg.model.revision)
    local = cfg.model.local_path
    if local is None:
        return cfg.model.id
    return local if local.startswith("/") else posixpath.join(cache_dir, local)


def vllm_args(
    cfg: StackConfig,
    resolved: ResolvedEngine,
    memory_limit_gib: float,
    drain: int,
    scale_out: ScaleOut,
    cache_dir: str = HF_HOME,
) -> list[str]:
    """Arguments after `vllm serve`; validation checks them against the release's flag table.
    `memory_limit_gib`: the server container's memory limit (the streamer's CPU buffer is a share of it);
    `drain`: the plan's drain_seconds; `scale_out`: plan/routing.py resolve_scale_out."""
    table = FLAG_TABLES[resolved.release.version]
    model_flags = _model_flags(cfg, resolved, table, memory_limit_gib)
    args = [model_argument(cfg, cache_dir), *_core_flags(cfg, resolved, table, drain), *model_flags]
    args += _speculative_flags(cfg, table)
    args += lora_flags(cfg.lora, resolve_lora(cfg.lora, cfg.delivery.mode, cache_dir))
    return [*args, *scale_out.flags, *cfg.engine.extra_args]


def _core_flags(cfg: StackConfig, resolved: ResolvedEngine, table: FlagTable, drain: int) -> list[str]:
    prefix = "--enable-prefix-caching" if resolved.enable_prefix_caching else "--no-enable-prefix-caching"
    # Releases before the BooleanOptionalAction form (0.6.x: store_true, off by default) take no negative flag.
    prefix_flags = [prefix] if prefix in table.flags else []
    return [
        "--served-model-name",
        resolved.served_model_name,
        "--port",
        str(cfg.server.port),
        "--tensor-parallel-size",
        str(resolved.tensor_parallel_size),
        "--pipeline-parallel-size",
        str(resolved.pipeline_parallel_size),
        "--max-model-len",
        str(resolved.max_model_len),
        "--gpu-memory-utilization",
        f"{resolved.gpu_memory_utilization:g}",
        "--max-num-seqs",
        str(resolved.max_num_seqs),
        "--max-num-batched-tokens",
        str(resolved.max_num_batched_tokens),
        *(["--block-size", str(cfg.engine.block_size)] if cfg.engine.block_size else []),  # else vLLM chooses
        *prefix_flags,
        "--dtype",
        cfg.engine.dtype,
        "--kv-cache-dtype",
        cfg.engine.kv_cache_dtype,
        *(["--shutdown-timeout", str(drain)] if "--shutdown-timeout" in table.flags else []),
    ]


def drain_seconds(server: ServerConfig, target: str) -> int:
    """vLLM's --shutdown-timeout: how long answers in flight may finish after SIGTERM (0, vLLM's default, aborts
    them at once: docs/sources.md §A.7), the grace period less the preStop sleep (Kubernetes) and the teardown.
    Decided once (plan.resolve): the server's flag and a multi-node worker's preStop read it."""
    pre_stop = server.pre_stop_sleep_seconds if target == "kubernetes" else 0  # Docker runs no preStop
    return max(1, server.termination_grace_period_seconds - pre_stop - ENGINE_TEARDOWN_SECONDS)


def _model_flags(cfg: StackConfig, resolved: ResolvedEngine, table: FlagTable, memory_limit_gib: float) -> list[str]:
    engine = cfg.engine
    flags: list[str] = []
    if engine.quantization:
        flags += ["--quantization", engine.quantization]
    if resolved.enforce_eager:
        flags.append("--enforce-eager")
    if cfg.delivery.mode == "object_storage":
        # Run:ai Model Streamer (vllm/transformers_utils/runai_utils.py); the bucket holds one revision. Its CPU
        # buffer (`memory_limit`, runai_streamer_loader.py) is each worker's own: every rank in the pod (one per
        # GPU) streams with one, so the quarter of the container's limit is shared among the pod's ranks.
        buffer = int(memory_limit_gib * STREAMER_BUFFER_SHARE / resolved.gpus_per_node * 2**30)
        flags += [
            "--load-format",
            "runai_streamer",
            "--model-loader-extra-config",
            json.dumps({"memory_limit": buffer}, separators=(",", ":")),
        ]
    elif cfg.model.revision and cfg.model.local_path is None:
        # Offline loads resolve this snapshot; without it vLLM looks for refs/main, absent for a sha download.
        flags += ["--revision", cfg.model.revision, "--tokenizer-revision", cfg.model.revision]
    if cfg.model.trust_remote_code:
        flags.append("--trust-remote-code")
    if engine.attention_backend and not table.attention_backend_env:
        flags += ["--attention-backend", engine.attention_backend]
    if "--disable-log-requests" in table.flags:
        flags.append("--disable-log-requests")  # 0.7.x logs every prompt by default; current releases do not
    return flags


def _speculative_flags(cfg: StackConfig, table: FlagTable) -> list[str]:
    spec = cfg.engine.speculative
    if spec is None:
        return []
    if "--speculative-config" in table.flags:
        return ["--speculative-config", json.dumps(_speculative_config(cfg), separators=(",", ":"))]
    flags = [
        "--speculative-model",
        "[ngram]" if spec.method == "ngram" else str(spec.model),
        "--num-speculative-tokens",
        str(spec.num_speculative_tokens),
    ]
    if spec.prompt_lookup_max is not None:
        flags += ["--ngram-prompt-lookup-max", str(spec.prompt_lookup_max)]
    if spec.prompt_lookup_min is not None:
        flags += ["--ngram-prompt-lookup-min", str(spec.prompt_lookup_min)]
    if spec.draft_tensor_parallel_size is not None:
        flags += ["--speculative-draft-tensor-parallel-size", str(spec.draft_tensor_parallel_size)]
    return flags


def _speculative_config(cfg: StackConfig) -> dict[str, object]:
    """SpeculativeConfig keys (0.33.0 config/speculative.py:405-660); unset keys are left to vLLM."""
    spec = cfg.engine.speculative
    assert spec is not None
    data: dict[str, object] = {"method": spec.method, "num_speculative_tokens": spec.num_speculative_tokens}
    optional = {
        "model": spec.model,
        "revision": spec.revision,
        "prompt_lookup_max": spec.prompt_lookup_max,
        "prompt_lookup_min": spec.prompt_lookup_min,
        "draft_tensor_parallel_size": spec.draft_tensor_parallel_size,
    }
    data.update({key: value for key, value in optional.items() if value is not None})
    return data


def vllm_env(
    cfg: StackConfig,
    resolved: ResolvedEngine,
    startup_seconds: int,
    scale_out: ScaleOut,
    home: str = HOME,
    cache_dir: str = HF_HOME,
) -> dict[str, str]:
    """Environment of the server container (secrets excluded: the caller adds VLLM_API_KEY by reference);
    `scale_out`: plan/routing.py resolve_scale_out."""
    table = FLAG_TABLES[resolved.release.version]
    env = {
        "HOME": home,
        "USER": "vllm",  # torch inductor calls getpass.getuser(); a UID without a passwd entry would fail
        "HF_HOME": cache_dir,
        "HF_HUB_OFFLINE": "1",  # load only from the pre-filled cache, never race other replicas downloading
        "VLLM_CACHE_ROOT": f"{home}/.cache/vllm",
        "TRITON_CACHE_DIR": f"{home}/.triton/cache",
        "TORCHINDUCTOR_CACHE_DIR": f"{home}/.cache/torchinductor",
        "VLLM_LOGGING_LEVEL": cfg.vllm.logging_level,
    }
    if table.engine_ready_timeout_env:
        # Default 600 s (envs.py:811-815) is shorter than a large model's load; match the startup probe.
        env["VLLM_ENGINE_READY_TIMEOUT_S"] = str(startup_seconds)
    if cfg.engine.attention_backend and table.attention_backend_env:
        env["VLLM_ATTENTION_BACKEND"] = cfg.engine.attention_backend
    env.update(lora_env(resolve_lora(cfg.lora, cfg.delivery.mode, cache_dir)))
    env.update(scale_out.env)
    env.update(cfg.vllm.extra_env)
    return env


OWNED_ENV: frozenset[str] = frozenset(
    {
        "HOME",
        "USER",
        "HF_HOME",
        "HF_HUB_OFFLINE",
        "HF_TOKEN",
        "HF_TOKEN_PATH",
        "VLLM_CACHE_ROOT",
        "TRITON_CACHE_DIR",
        "TORCHINDUCTOR_CACHE_DIR",
        "VLLM_LOGGING_LEVEL",
        "VLLM_ENGINE_READY_TIMEOUT_S",
        "VLLM_ATTENTION_BACKEND",
        "VLLM_API_KEY",
        "VLLM_PORT",
        "VLLM_ALLOW_RUNTIME_LORA_UPDATING",
    }
)
