"""`python -m cli.pr_comment --base BASE_DIR [--head HEAD_DIR] [--out FILE] [STACK_FILE ...]`: the pull request's
preflight comment.

For each stack file (default: every stacks/Pulumi.*.yaml of the base or the head), the preflight's `--json`
report is computed twice: by the base's own code on the base's file (`python -m preflight` run in BASE_DIR), and
by the head's code on the head's file `--against` the base's. The comment is one Markdown table of what changed
per stack (verdict, cost at the minimum and maximum replicas, KV tokens, max concurrency, the startup budget: first
start and startup probe), then
per stack what a vLLM upgrade changes (cli/upgrade.py) and the head's errors. A value that did not change is
shown once, a changed one as `base → head`; a figure a report does not carry (cost, from a base without it) is `—`.
.github/workflows/preview.yml posts the file; docs/ci-and-gitops.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cli.upgrade import markdown_lines

# The first line of the comment: the workflow finds its own earlier comment by it and edits it.
MARKER = "<!-- vllm-serving preflight comment -->"
STACK_GLOB = "stacks/Pulumi.*.yaml"
NONE = "—"
COLUMNS = (
    "Stack",
    "Verdict",
    "Cost at min replicas",
    "Cost at max replicas",
    "KV tokens",
    "Max concurrency",
    "First start",
    "Startup probe",
)

Report = dict[str, Any]
Runner = Callable[[Path, str, str | None], Report]  # (checkout, stack file, base file for --against) -> report


@dataclass(frozen=True)
class StackReports:
    stack_file: str  # relative to both checkouts, e.g. stacks/Pulumi.prod.yaml
    base: Report | None  # None: the file is new in the pull request
    head: Report | None  # None: the pull request removes it

    @property
    def name(self) -> str:
        return Path(self.stack_file).name.removeprefix("Pulumi.").removesuffix(".yaml")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cli.pr_comment", description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, type=Path, help="a checkout of the pull request's base")
    parser.add_argument("--head", default=Path("."), type=Path, help="a checkout of its head (default: .)")
    parser.add_argument("--out", type=Path, help="write the comment here (default: stdout)")
    parser.add_argument("stack_files", nargs="*", help=f"stack files relative to both checkouts (default: {STACK_GLOB})")
    args = parser.parse_args(argv)
    for flag, folder in (("--base", args.base), ("--head", args.head)):
        if not folder.is_dir():
            parser.error(f"{flag} {folder}: not a directory; pass a checkout of the pull request's {flag[2:]}")
    files = args.stack_files or stack_files(args.base, args.head)
    text = comment(collect(args.base, args.head, files, run_preflight))
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    return 0


def stack_files(base: Path, head: Path) -> list[str]:
    """Every stack file either side has, as a path relative to the checkout."""
    found = {path.relative_to(root).as_posix() for root in (base, head) for path in root.glob(STACK_GLOB)}
    return sorted(found)


def run_preflight(checkout: Path, stack_file: str, against: str | None) -> Report:
    """`python -m preflight FILE --json [--against BASE]` with that checkout's code; its one JSON document."""
    command = [sys.executable, "-m", "preflight", stack_file, "--json", *(["--against", against] if against else [])]
    done = subprocess.run(command, cwd=checkout, capture_output=True, text=True, check=False)
    try:
        report: Report = json.loads(done.stdout)
    except json.JSONDecodeError:
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return {"fits": False, "internal_error": last}
    return report


def collect(base: Path, head: Path, files: list[str], run: Runner) -> list[StackReports]:
    reports = []
    for stack_file in files:
        base_report = run(base, stack_file, None) if (base / stack_file).is_file() else None
        head_report = None
        if (head / stack_file).is_file():
            against = str((base / stack_file).resolve()) if base_report is not None else None
            head_report = run(head, stack_file, against)
            if against and _against_failed(head_report):  # the base file does not load under the head's code
                errors = head_report["config_errors"]
                head_report = {**run(head, stack_file, None), "upgrade_error": errors}
        reports.append(StackReports(stack_file, base_report, head_report))
    return reports


def _against_failed(report: Report) -> bool:
    errors = report.get("config_errors") or []
    return bool(errors) and all(error.startswith("--against ") for error in errors)


# --- the comment ---------------------------------------------------------------------------------------------


def comment(stacks: list[StackReports]) -> str:
    lines = [MARKER, "## vLLM preflight: base → head", ""]
    lines += ["| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    lines += ["| " + " | ".join(row(stack)) + " |" for stack in stacks]
    for stack in stacks:
        lines += details(stack)
    return "\n".join(lines) + "\n"


def row(stack: StackReports) -> list[str]:
    base, head = stack.base, stack.head
    cells = [f"`{stack.name}`", _diff(verdict(base), verdict(head))]
    for pick in (cost_at("min_replicas"), cost_at("max_replicas"), kv_tokens, max_concurrency, first_start, probe):
        cells.append(_diff(_figure(pick, base), _figure(pick, head)))
    return cells


def _diff(before: str | None, after: str | None) -> str:
    if before is None:
        return f"{after} (new stack)" if after is not None else NONE
    if after is None:
        return f"{before} (stack removed)"
    return before if before == after else f"{before} → {after}"


def _figure(pick: Callable[[Report], str], report: Report | None) -> str | None:
    if report is None:
        return None
    return pick(report) if sized(report) else NONE


def sized(report: Report) -> bool:
    return "capacity" in report


def verdict(report: Report | None) -> str | None:
    if report is None:
        return None
    if "internal_error" in report:
        return "INTERNAL ERROR"
    if "config_errors" in report:
        return "CONFIG ERROR"
    return str(report["verdict"]["overall"])


def cost_at(end: str) -> Callable[[Report], str]:
    """The cost cell at min_replicas or max_replicas: USD per month and GPUs; `—` when the report has no cost."""

    def pick(report: Report) -> str:
        cost = report.get("cost")
        if not cost:
            return NONE
        at = cost[end]
        usd = at["usd_per_month"]
        money = "no price" if usd is None else f"${usd:,.0f}/month"
        gpus = at["gpus"]
        return f"{money} ({at['replicas']} x, {gpus} GPU{'' if gpus == 1 else 's'})"

    return pick


def kv_tokens(report: Report) -> str:
    return f"{report['capacity']['kv_cache_tokens']:,}"


def max_concurrency(report: Report) -> str:
    return f"{report['capacity']['max_concurrency_at_max_model_len']:.2f}"


def first_start(report: Report) -> str:
    """The first start's budget: image pull, download and the startup probe (preflight/delivery.py)."""
    budget = report.get("startup")
    return f"{budget['first_start_seconds']:,} s" if budget else NONE


def probe(report: Report) -> str:
    """The startup probe's budget: how long a replica may take to load and start."""
    budget = report.get("startup")
    return f"{budget['probe']['total_seconds']:,} s" if budget else NONE


def details(stack: StackReports) -> list[str]:
    """Below the table: the head's errors, its price source and the upgrade impact, for the stacks that have one."""
    head = stack.head or {}
    lines: list[str] = []
    lines += [f"- config error: {error}" for error in head.get("config_errors", [])]
    if "internal_error" in head:
        lines.append(f"- internal error in the preflight: {head['internal_error']}")
    lines += [f"- {reason}" for reason in head.get("verdict", {}).get("reasons", [])]
    price = (head.get("cost") or {}).get("price")
    if price:
        lines.append(f"- price: {price['source']}")
    if head.get("upgrade_error"):
        lines.append("- upgrade impact not computed: " + "; ".join(head["upgrade_error"]))
    if head.get("upgrade"):
        lines += markdown_lines(head["upgrade"])
    return ["", f"### `{stack.name}`", "", *lines] if lines else []


if __name__ == "__main__":
    sys.exit(main())
