"""The preflight report as text: a table for terminals and pulumi.log, Markdown for CI job summaries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cluster.report import NOT_CHECKED, ClusterResult
from preflight.report import PreflightReport


def _nodes(report: PreflightReport) -> str:
    nnodes = report.resolved.nnodes
    return f" on {nnodes} nodes x {report.resolved.gpus_per_node} GPUs" if nnodes > 1 else ""


def _checkpoint_row(data: dict[str, Any]) -> list[tuple[str, str]]:
    """How a checkpoint read from its safetensors headers is stored (none for a catalog model)."""
    checkpoint = data.get("checkpoint")
    if checkpoint is None:
        return []
    return [("Checkpoint", f"{'; '.join(checkpoint['formats'])} (safetensors headers, {checkpoint['source']})")]


def _lora_rows(memory: dict[str, Any]) -> list[tuple[str, str]]:
    lora = memory.get("lora")
    if lora is None:
        return []
    shape = f"max_loras {lora['max_loras']} x max_lora_rank {lora['max_lora_rank']}"
    return [("LoRA buffers", f"{lora['gib_per_gpu']:.2f} GiB per GPU ({shape})")]


def figures(report: PreflightReport) -> list[tuple[str, str]]:
    """(label, value with unit) rows, in the order vLLM's own start-up log reports them."""
    data = report.as_dict()  # the rounded figures, the same the JSON prints
    gpu, engine, memory, capacity, target = (data[k] for k in ("gpu", "engine", "memory", "capacity", "target"))
    return [
        (
            "GPU",
            f"{gpu['name']} x {engine['gpus_per_replica']} per replica "
            f"(TP {engine['tensor_parallel_size']}, PP {engine['pipeline_parallel_size']}){_nodes(report)}",
        ),
        ("vLLM", f"{engine['vllm_version']} (memory accounting: {engine['memory_era']})"),
        (
            "GPU memory",
            f"{gpu['memory_gib']:.2f} GiB x utilization {gpu['gpu_memory_utilization']} "
            f"= {gpu['requested_gib']:.2f} GiB requested",
        ),
        (
            "Weights",
            f"{memory['weights_gib_per_gpu']:.2f} GiB per GPU ({memory['weights_on_disk_gib']:.2f} GiB on disk)",
        ),
        *_checkpoint_row(data),
        ("Draft model weights", f"{memory['draft_gib_per_gpu']:.2f} GiB per GPU"),
        *_lora_rows(memory),
        (
            "Activation peak",
            f"{memory['activation_gib']:.2f} GiB (max_num_batched_tokens {engine['max_num_batched_tokens']}, "
            f"max_num_seqs {engine['max_num_seqs']}, {memory['sampler']} sampler)",
        ),
        ("Non-torch memory", f"{memory['non_torch_gib']:.2f} GiB ({gpu['interconnect']})"),
        ("CUDA graphs", _graphs(memory)),
        ("KV cache", f"{memory['kv_cache_gib_per_gpu']:.2f} GiB per GPU"),
        (
            "KV bytes per token",
            f"{memory['per_token_kv_bytes']:,} B per GPU ({engine['kv_cache_dtype']}); "
            f"{target['plain_kv_bytes_per_token']:,} B whole model",
        ),
        ("KV blocks", f"{capacity['num_gpu_blocks']:,} x {engine['block_size']} tokens"),
        ("KV capacity", _capacity(capacity, engine)),
        (
            "Max concurrency",
            f"{capacity['max_concurrency_at_max_model_len']:.2f} requests of {engine['max_model_len']} tokens "
            f"({capacity['num_gpu_blocks']:,} blocks / blocks of one such request)",
        ),
        (
            "Concurrency target",
            f"{target['requests']} requests x {target['tokens_per_request']} tokens "
            f"= {target['kv_tokens']:,} tokens ({target['plain_kv_gib_for_target']:.2f} GiB "
            "whole model)",
        ),
        ("Margin", f"{target['margin_percent']:.1f} % of the KV cache left after the target"),
        *startup_rows(report),
    ]


def _graphs(memory: dict[str, Any]) -> str:
    if memory["after_profiling_gib"]:
        return f"{memory['after_profiling_gib']:.2f} GiB captured after the KV cache, outside the budget"
    return f"{memory['cuda_graph_gib']:.2f} GiB"


def _capacity(capacity: dict[str, Any], engine: dict[str, Any]) -> str:
    """vLLM's logged token count, and for a hybrid model why a request can be longer: one pool, two readings."""
    tokens = f"{capacity['kv_cache_tokens']:,} tokens"
    if capacity["kv_groups"] == 1:
        return tokens
    return (
        f'{tokens} if every layer kept the whole context (vLLM\'s "GPU KV cache size": {capacity["num_gpu_blocks"]:,} '
        f"blocks / {capacity['kv_groups']} KV groups x {engine['block_size']}); sliding-window layers keep only "
        f"their window, so one request can hold up to {capacity['longest_request_tokens']:,} tokens"
    )


def startup_rows(report: PreflightReport) -> list[tuple[str, str]]:
    """The delivery mode and the startup budget, one row per term of the sum."""
    budget = report.startup
    if budget is None:
        return []
    rows = [
        (
            "Model delivery",
            f"{budget.mode}, reading {budget.throughput.mib_per_s:g} MiB/s per replica ({budget.throughput.source})",
        )
    ]
    rows.append(("Startup budget", budget.first_start_sum()))
    rows.append(("Startup probe", budget.probe.explain()))
    rows.append(("New replica", budget.new_replica_sum()))
    rows += [(f"  {term.name}", term.render().removeprefix(term.name + " ")) for term in budget.terms]
    return rows


def verdict(report: PreflightReport, cluster: ClusterResult = NOT_CHECKED) -> str:
    """BLOCKED when the model does not fit or the cluster cannot run it; a cluster not checked never blocks."""
    return "FITS" if report.verdict.fits and not cluster.blocked else "BLOCKED"


Rows = Sequence[tuple[str, str]]


def table_text(report: PreflightReport, cluster: ClusterResult = NOT_CHECKED, more: Rows = ()) -> str:
    """`more`: rows the plan adds after the preflight's figures (its cost, plan/cost.py)."""
    rows = [*figures(report), *more]
    width = max(len(label) for label, _ in rows)
    lines = [f"vLLM preflight: {verdict(report, cluster)}", *(f"  {label:<{width}}  {value}" for label, value in rows)]
    lines += _bullets("Blocked because", report.verdict.reasons)
    lines += _bullets("Warnings", report.verdict.warnings)
    lines += _bullets("What would fit instead", report.verdict.suggestions)
    lines += [cluster.headline(), *(f"  {line}" for line in cluster.lines())]
    return "\n".join(lines)


def blocked_text(report: PreflightReport) -> str:
    """The error a blocked `pulumi preview`/`up` stops with: reasons first, then the figures."""
    lines = ["vLLM preflight blocked this stack; nothing was created.", *(f"  - {r}" for r in report.verdict.reasons)]
    lines += _bullets("What would fit instead", report.verdict.suggestions)
    return "\n".join([*lines, "", table_text(report)])


def markdown_text(report: PreflightReport, title: str, cluster: ClusterResult = NOT_CHECKED, more: Rows = ()) -> str:
    icon = "✅" if verdict(report, cluster) == "FITS" else "⛔"
    lines = [f"### {icon} {title}: {verdict(report, cluster)}", "", "| Figure | Value |", "| --- | --- |"]
    lines += [f"| {label} | {value} |" for label, value in [*figures(report), *more]]
    for heading, items in (
        ("Blocked because", report.verdict.reasons),
        ("Warnings", report.verdict.warnings),
        ("What would fit instead", report.verdict.suggestions),
    ):
        if items:
            lines += ["", f"**{heading}**", "", *(f"- {item}" for item in items)]
    headline = cluster.headline()
    lines += ["", f"**{headline[0].upper()}{headline[1:]}**"]
    if cluster.findings:
        lines += ["", *(f"- {line}" for line in cluster.lines())]
    return "\n".join(lines)


def _bullets(heading: str, items: tuple[str, ...]) -> list[str]:
    return [f"{heading}:", *(f"  - {item}" for item in items)] if items else []
