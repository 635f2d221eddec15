"""Measure the speed figures the docs quote, and print them as a table.

Usage: venv/bin/python scripts/benchmark.py [--runs 20] [--render-runs 5] [--no-suite] [--cli-only] [--cold-start]

- preflight CLI: median wall time of `python -m preflight STACK` over --runs runs per shipped stack
  (stacks/Pulumi.*.yaml), each a new interpreter, so start-up and imports are included; beside it the median
  CPU time (user + system) of those runs, which waiting for a core on a shared machine does not inflate;
- mocked render: median time to run __main__.py under Pulumi's mocks for the stack (tests/program.py, with
  the api_key secret set), in this process after one warm-up run, over --render-runs runs;
- fast suite: wall time of `python -m pytest -q` in a new interpreter;
- --cold-start: only the cold-start budget of the reference stacks (the plan's terms, no timing) beside the
  published load and start-up figures (COLD_START_ANCHORS, each with its source).
Every speed figure in README.md and docs/ comes from this script; quote the command beside it.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def shipped_stacks() -> list[Path]:
    return sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def cli_seconds(stack: Path, runs: int) -> tuple[float, float]:
    """Median wall time and median CPU time of the preflight CLI on one stack, interpreter start included."""
    command = [sys.executable, "-m", "preflight", str(stack.relative_to(ROOT))]
    # As a user runs it: Python's bytecode cache on (some sandboxes set PYTHONDONTWRITEBYTECODE, which makes
    # every run compile every module again), after one warm-up run that writes it.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}

    def once() -> None:
        subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=False, timeout=60)

    def cpu_seconds() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    once()
    walls, cpus = [], []
    for _ in range(runs):
        cpu = cpu_seconds()
        walls.append(timed(once))
        cpus.append(cpu_seconds() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def render_seconds(stack: Path, runs: int) -> float:
    """Median time of one mocked program run for the stack (after a warm-up run that pays the imports)."""
    import contextlib
    import io

    from tests.program import run_stack_file

    def once() -> None:  # with the api_key secret set, as a deploy of a stack that requires it has it
        with contextlib.redirect_stderr(io.StringIO()):  # the preflight's warnings, once per run
            _, error = run_stack_file(stack, extra={"api_key": "sk-benchmark"})
        if error is not None:
            raise RuntimeError(f"{stack.name} failed under mocks: {error}")

    once()
    return statistics.median(timed(once) for _ in range(runs))


def suite() -> tuple[float, str]:
    """Wall time of the whole fast suite, and pytest's summary line."""
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "pytest", "-q"], cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    lines = [line for line in result.stdout.splitlines() if re.search(r"\d+ (passed|failed)", line)]
    return seconds, (lines[-1].strip("= ") if lines else f"pytest exited {result.returncode}")


COLD_START_STACKS = (
    "stacks/Pulumi.prod.yaml",
    "stacks/examples/Pulumi.prod-on-efs.yaml",
    "stacks/examples/Pulumi.llama-70b-fast-start-on-4x-h100.yaml",
    "stacks/examples/Pulumi.70b-on-8x-a100-40gb.yaml",
    "stacks/examples/Pulumi.llama-70b-fp8-on-2x-h100.yaml",
    "stacks/examples/Pulumi.qwen-72b-on-h100-long-context.yaml",
    "stacks/examples/Pulumi.llama-70b-node-local-nvme.yaml",
)
# Published figures for ~70B-class starts (docs/sources.md §S2 has the rows and their threads).
COLD_START_ANCHORS = (
    ("Llama 3.3 70B TP4, HF download at start", "~9 min", "ai-dynamo/dynamo docs, Model Caching with Fluid"),
    ("Llama 3.3 70B, Fluid cache on the pod's node", "~80 s", "ai-dynamo/dynamo docs, Model Caching with Fluid"),
    ("Llama-2 70B, parallel S3 to GPU streaming", "20 s (from 4 m 25 s)", "anyscale.com/blog/loading-llama-2-70b-20x-faster"),
    ("67B (124.96 GiB), Run:ai streamer distributed, object storage", "14.29 s", "marin-community/marin#7136"),
    ("Qwen3-Coder-480B (894 GiB), EFS elastic, 16 readers", "~43 min", "modelplaneai/modelplane#204"),
    (
        "Llama-3.3-70B FP8 TP4 on H100, vLLM 0.19.0: first log line to the API (14 s weight read)",
        "115 s",
        "llm-d-planner v0.19.0 log, tests/data/startup-phases.csv L5",
    ),
    (
        "Llama-3-8B (15 GB), gp3: safetensors / Run:ai streamer",
        "47.99 s / 14.34 s",
        "run.ai/blog/run-ai-model-streamer-performance-benchmarks",
    ),
)


def cold_start_rows() -> list[str]:
    """The reference stacks' budgets from their plans: load, startup probe, a new replica on a node with the image
    and on a new node, the first start."""
    from plan import resolve
    from plan.names import instance_name
    from validation.sources import load_stack_file_with_secrets

    lines = [
        "| Stack | Mode, read MiB/s (source) | Load (s) | Probe (s) | New replica, warm node: expected (s) "
        "| New node: expected (s), node-local: with the download | First start (s) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for path in COLD_START_STACKS:
        cfg = load_stack_file_with_secrets(ROOT / path)[0]
        budget = resolve(cfg, instance_name(Path(path).stem.removeprefix("Pulumi."))).delivery.budget
        probe = budget.probe
        lines.append(
            f"| {Path(path).name} | {budget.mode}, {budget.throughput.mib_per_s:g} ({budget.throughput.source}) | "
            f"{probe.load_seconds:.0f} | {probe.total_seconds} | {budget.expected_start_seconds} | "
            f"{budget.new_node_seconds} | {budget.first_start_seconds} |"
        )
    lines += ["", "| Published start | Time | Source |", "| --- | --- | --- |"]
    lines += [f"| {what} | {time_} | {source} |" for what, time_, source in COLD_START_ANCHORS]
    return lines


def table(rows: list[tuple[str, tuple[float, float], float | None]]) -> list[str]:
    lines = [
        "| Stack | preflight CLI, median (s) | CLI CPU, median (s) | mocked render, median (s) |",
        "| --- | --- | --- | --- |",
    ]
    for name, (wall, cpu), render in rows:
        lines.append(f"| {name} | {wall:.3f} | {cpu:.3f} | {'-' if render is None else f'{render:.3f}'} |")
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=20, help="CLI runs per stack (median reported)")
    parser.add_argument("--render-runs", type=int, default=5, help="mocked program runs per stack")
    parser.add_argument("--no-suite", action="store_true", help="skip timing the test suite")
    parser.add_argument("--cli-only", action="store_true", help="time the preflight CLI only (no render, no suite)")
    parser.add_argument("--cold-start", action="store_true", help="print the cold-start budgets and anchors only")
    args = parser.parse_args(argv)
    if args.cold_start:
        print("\n".join(cold_start_rows()))
        return 0
    print(
        f"# {platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
        f"{_cpus()} CPUs; CLI runs {args.runs}, render runs {args.render_runs}"
    )
    rows = [
        (stack.name, cli_seconds(stack, args.runs), None if args.cli_only else render_seconds(stack, args.render_runs))
        for stack in shipped_stacks()
    ]
    print("\n".join(table(rows)))
    if not (args.no_suite or args.cli_only):
        seconds, summary = suite()
        print(f"\nfast suite: {seconds:.1f} s wall ({summary})")
    return 0


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
