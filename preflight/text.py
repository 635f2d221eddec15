"""The preflight report as text: a table for terminals and pulumi.log, Markdown for CI job summaries."""

from __future__ import annotations

from cluster.report import NOT_CHECKED, ClusterResult
from preflight.report import PreflightReport


def _nodes(report: PreflightReport) -> str:
    nnodes = report.resolved.nnodes
    return f" on {nnodes} nodes x {report.resolved.gpus_per_node} GPUs" if nnodes > 1 else ""


def figures(report: PreflightReport) -> list[tuple[str, str]]:
    """(label, value with unit) rows, in the order vLLM's own start-up log reports them."""
    return [
        (
            "GPU",
            f"{report.gpu} x {report.gpus_per_replica} per replica "
            f"(TP {report.tensor_parallel_size}, PP {report.pipeline_parallel_size}){_nodes(report)}",
        ),
        ("vLLM", f"{report.vllm_version} (memory accounting: {report.memory_era})"),
        (
            "GPU memory",
            f"{report.gpu_memory_gib:.2f} GiB x utilization {report.gpu_memory_utilization} "
            f"= {report.requested_gib:.2f} GiB requested",
        ),
        ("Weights", f"{report.weights_gib_per_gpu:.2f} GiB per GPU ({report.weights_on_disk_gib:.2f} GiB on disk)"),
        ("Draft model weights", f"{report.draft_gib_per_gpu:.2f} GiB per GPU"),
        (
            "Activation peak",
            f"{report.activation_gib:.2f} GiB (max_num_batched_tokens {report.max_num_batched_tokens}, "
            f"max_num_seqs {report.max_num_seqs})",
        ),
        ("Non-torch memory", f"{report.non_torch_gib:.2f} GiB"),
        ("CUDA graphs", f"{report.cuda_graph_gib:.2f} GiB"),
        ("KV cache", f"{report.kv_cache_gib_per_gpu:.2f} GiB per GPU"),
        (
            "KV bytes per token",
            f"{report.per_token_kv_bytes:,} B per GPU ({report.kv_cache_dtype}); "
            f"{report.plain_kv_bytes_per_token:,} B whole model",
        ),
        ("KV blocks", f"{report.num_gpu_blocks:,} x {report.block_size} tokens"),
        ("KV capacity", f"{report.kv_cache_tokens:,} tokens"),
        ("Max concurrency", f"{report.max_concurrency_at_max_model_len:.2f} requests of {report.max_model_len} tokens"),
        (
            "Concurrency target",
            f"{report.target_requests} requests x {report.target_tokens_per_request} tokens "
            f"= {report.target_kv_tokens:,} tokens ({report.plain_kv_gib_for_target:.2f} GiB "
            "whole model)",
        ),
        ("Margin", f"{report.margin_percent:.1f} % of the KV cache left after the target"),
        *startup_rows(report),
    ]


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
    rows += [(f"  {term.name}", term.render().removeprefix(term.name + " ")) for term in budget.terms]
    return rows


def verdict(report: PreflightReport, cluster: ClusterResult = NOT_CHECKED) -> str:
    """BLOCKED when the model does not fit or the cluster cannot run it; a cluster not checked never blocks."""
    return "FITS" if report.fits and not cluster.blocked else "BLOCKED"


def table_text(report: PreflightReport, cluster: ClusterResult = NOT_CHECKED) -> str:
    rows = figures(report)
    width = max(len(label) for label, _ in rows)
    lines = [f"vLLM preflight: {verdict(report, cluster)}", *(f"  {label:<{width}}  {value}" for label, value in rows)]
    lines += _bullets("Blocked because", report.reasons)
    lines += _bullets("Warnings", report.warnings)
    lines += _bullets("What would fit instead", report.suggestions)
    lines += [cluster.headline(), *(f"  {line}" for line in cluster.lines())]
    return "\n".join(lines)


def blocked_text(report: PreflightReport) -> str:
    """The error a blocked `pulumi preview`/`up` stops with: reasons first, then the figures."""
    lines = ["vLLM preflight blocked this stack; nothing was created.", *(f"  - {r}" for r in report.reasons)]
    lines += _bullets("What would fit instead", report.suggestions)
    return "\n".join([*lines, "", table_text(report)])


def markdown_text(report: PreflightReport, title: str, cluster: ClusterResult = NOT_CHECKED) -> str:
    icon = "✅" if verdict(report, cluster) == "FITS" else "⛔"
    lines = [f"### {icon} {title}: {verdict(report, cluster)}", "", "| Figure | Value |", "| --- | --- |"]
    lines += [f"| {label} | {value} |" for label, value in figures(report)]
    for heading, items in (
        ("Blocked because", report.reasons),
        ("Warnings", report.warnings),
        ("What would fit instead", report.suggestions),
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
