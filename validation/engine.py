"""Rules between gpu.count, the engine's parallelism and the draft model's."""

from __future__ import annotations

from config.errors import ConfigIssue
from config.stack import StackConfig


def cross_checks(cfg: StackConfig) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []
    per_replica = cfg.engine.gpus_per_replica
    if cfg.gpu.count is not None and cfg.gpu.count != per_replica:
        issues.append(
            ConfigIssue(
                "gpu.count",
                f"is {cfg.gpu.count}, but engine.tensor_parallel_size ({cfg.engine.tensor_parallel_size}) x "
                f"engine.pipeline_parallel_size ({cfg.engine.pipeline_parallel_size}) = {per_replica} GPUs per replica.",
                f"set gpu.count to {per_replica}, or remove it (it defaults to that).",
            )
        )
    speculative = cfg.engine.speculative
    draft_tp = speculative.draft_tensor_parallel_size if speculative else None
    if draft_tp is not None and draft_tp not in (1, cfg.engine.tensor_parallel_size):
        issues.append(
            ConfigIssue(
                "engine.speculative.draft_tensor_parallel_size",
                f"is {draft_tp}, but vLLM runs a draft model on 1 GPU or on all {cfg.engine.tensor_parallel_size} "
                "of the target's tensor-parallel GPUs.",
                f"set it to 1 or {cfg.engine.tensor_parallel_size}, or remove it (it defaults to the target's).",
            )
        )
    return issues
