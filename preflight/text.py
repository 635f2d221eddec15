"""The preflight report as text: a table for terminals and pulumi.log, Markdown for CI job summaries."""

from __future__ import annotations

from preflight.report import PreflightReport


def figures(report: PreflightReport) -> list[tuple[str, str]]:
    """(label, value with unit) rows, in the order vLLM's own start-up log reports them."""
    return [
        ("GPU", f"{report.gpu} x {report.gpus_per_replica} per replica "
                f"(TP {report.tensor_parallel_size}, PP {report.pipeline_parallel_size})"),
        ("vLLM", f"{report.vllm_version} (memory accounting: {report.memory_era})"),
        ("GPU memory", f"{report.gpu_memory_gib:.2f} GiB x utilization {report.gpu_memory_utilization} "
                       f"= {report.requested_gib:.2f} GiB requested"),
        ("Weights", f"{report.weights_gib_per_gpu:.2f} GiB per GPU ({report.weights_on_disk_gib:.2f} GiB on disk)"),
        ("Draft model weights", f"{report.draft_gib_per_gpu:.2f} GiB per GPU"),
        ("Activation peak", f"{report.activation_gib:.2f} GiB (max_num_batched_tokens {report.max_num_batched_tokens}, "
                            f"max_num_seqs {report.max_num_seqs})"),
        ("Non-torch memory", f"{report.non_torch_gib:.2f} GiB"),
        ("CUDA graphs", f"{report.cuda_graph_gib:.2f} GiB"),
        ("KV cache", f"{report.kv_cache_gib_per_gpu:.2f} GiB per GPU"),
        ("KV bytes per token", f"{report.per_token_kv_bytes:,} B per GPU ({report.kv_cache_dtype}); "
                               f"{report.plain_kv_bytes_per_token:,} B whole model"),
        ("KV blocks", f"{report.num_gpu_blocks:,} x {report.block_size} tokens"),
        ("KV capacity", f"{report.kv_cache_tokens:,} tokens"),
        ("Max concurrency", f"{report.max_concurrency_at_max_model_len:.2f} requests of {report.max_model_len} tokens"),
        ("Concurrency target", f"{report.target_requests} requests x {report.target_tokens_per_request} tokens "
                               f"= {report.target_kv_tokens:,} tokens ({report.plain_kv_gib_for_target:.2f} GiB "
                               "whole model)"),
        ("Margin", f"{report.margin_percent:.1f} % of the KV cache left after the target"),
    ]


def verdict(report: PreflightReport) -> str:
    return "FITS" if report.fits else "BLOCKED"


def table_text(report: PreflightReport) -> str:
    rows = figures(report)
    width = max(len(label) for label, _ in rows)
    lines = [f"vLLM preflight: {verdict(report)}", *(f"  {label:<{width}}  {value}" for label, value in rows)]
    lines += _bullets("Blocked because", report.reasons)
    lines += _bullets("Warnings", report.warnings)
    lines += _bullets("What would fit instead", report.suggestions)
    return "\n".join(lines)


def blocked_text(report: PreflightReport) -> str:
    """The error a blocked `pulumi preview`/`up` stops with: reasons first, then the figures."""
    lines = ["vLLM preflight blocked this stack; nothing was created.", *(f"  - {r}" for r in report.reasons)]
    lines += _bullets("What would fit instead", report.suggestions)
    return "\n".join([*lines, "", table_text(report)])


def markdown_text(report: PreflightReport, title: str) -> str:
    icon = "✅" if report.fits else "⛔"
    lines = [f"### {icon} {title}: {verdict(report)}", "", "| Figure | Value |", "| --- | --- |"]
    lines += [f"| {label} | {value} |" for label, value in figures(report)]
    for heading, items in (("Blocked because", report.reasons), ("Warnings", report.warnings),
                           ("What would fit instead", report.suggestions)):
        if items:
            lines += ["", f"**{heading}**", "", *(f"- {item}" for item in items)]
    return "\n".join(lines)


def _bullets(heading: str, items: tuple[str, ...]) -> list[str]:
    return [f"{heading}:", *(f"  - {item}" for item in items)] if items else []
