"""`python -m preflight STACK_FILE [--against BASE_STACK_FILE] [--cluster FILE ...] [--log FILE [--events FILE]]`
`[--json | --markdown] [--frontier] [--debug]`.

Exit 0 fits, 1 blocked (a memory, structural or cluster verdict), 2 config error, 3 internal error (a bug: one
line asking to report it; the traceback only with --debug). The verdict is validation.assess's, the same call
the Pulumi program makes, so the exit code and `pulumi preview` agree.

With --cluster, the stack is also checked against a cluster snapshot: the files `kubectl get ... -o json`
writes (docs/cluster.md). Without it the report says `cluster: not checked`, never `passed`.

With --against, the stack is compared with another version of itself (the pull request's base): when the vLLM
release or the image differs, the report adds what the upgrade changes (cli/upgrade.py, docs/upgrading.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli.pipe import EXIT_CLOSED_PIPE, quiet_on_closed_pipe
from cluster.report import NOT_CHECKED, ClusterResult
from config.errors import ConfigError, ConfigIssue
from config.sources import stack_name_of
from config.stack import StackConfig
from plan import Plan
from plan.cost import cost_rows
from plan.frontier import Frontier, frontier_rows, frontier_summary, resolve_frontier
from plan.sizing import sizing_inputs
from preflight.text import markdown_text, table_text
from preflight.text import verdict as text_verdict
from validation import ClusterCheck, Outcome, Verdict, assess
from validation.secrets import missing_secrets
from validation.sources import load_stack_file_with_secrets

if TYPE_CHECKING:  # the log modules (their patterns) and the upgrade report (the renderers) load only when asked
    from cli.upgrade import UpgradeImpact
    from preflight.startup_log import LoggedStartup
    from preflight.startup_phases import LoggedPhases

EXIT_FITS, EXIT_BLOCKED, EXIT_CONFIG_ERROR = Outcome.FITS.value, Outcome.BLOCKED.value, Outcome.CONFIG_ERROR.value
EXIT_INTERNAL_ERROR = 3
REPORT_BUG = "internal error in the preflight ({}); please report it with the stack file (rerun with --debug for details)."


EPILOG = f"""exit codes:
  {EXIT_FITS}    the stack fits (warnings may be printed)
  {EXIT_BLOCKED}    blocked: the memory, structural or cluster check refuses it (the report says why)
  {EXIT_CONFIG_ERROR}    config error: a key of the stack file, a --cluster or a --log file is wrong (every problem listed)
  {EXIT_INTERNAL_ERROR}    internal error: a bug in the preflight; please report it (--debug prints the traceback)
  {EXIT_CLOSED_PIPE}  the reader of stdout went away (`| head`): nothing more is printed, as with other Unix tools

examples:
  python -m preflight stacks/Pulumi.dev.yaml
  python -m preflight stacks/Pulumi.prod.yaml --json | jq .verdict
  python -m preflight stacks/Pulumi.prod.yaml --cluster nodes.json --cluster storageclasses.json
  python -m preflight stacks/Pulumi.dev.yaml --log vllm-startup.log
  python -m preflight stacks/Pulumi.prod.yaml --against base/stacks/Pulumi.prod.yaml   # what an upgrade changes
  python -m preflight stacks/Pulumi.prod.yaml --frontier
  python -m preflight stacks/Pulumi.prod.yaml --log vllm.log --events events.txt  # kubectl logs / describe pod
  python -m preflight stacks/Pulumi.dev.yaml --offline
"""


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return quiet_on_closed_pipe(lambda: _run_reporting_bugs(args))


def _run_reporting_bugs(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except BrokenPipeError:  # the reader went away: not a bug (cli/pipe.py)
        raise
    except (Exception, RecursionError, MemoryError) as error:  # a bug, never a verdict: exit 3, not 1
        if args.debug:
            raise
        print(REPORT_BUG.format(type(error).__name__), file=sys.stderr)
        if args.json:  # one JSON document on stdout, whatever happened
            print(json.dumps({"fits": False, "internal_error": type(error).__name__}))
        return EXIT_INTERNAL_ERROR


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m preflight",
        description=__doc__,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("stack_file", help="a stack file, e.g. stacks/Pulumi.prod.yaml")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the report as JSON, nested by section")
    output.add_argument("--markdown", action="store_true", help="print the report as Markdown (CI summaries)")
    parser.add_argument(
        "--cluster",
        action="append",
        default=[],
        metavar="FILE",
        help="a `kubectl get ... -o json` snapshot of the cluster (repeatable)",
    )
    parser.add_argument(
        "--against",
        metavar="BASE_STACK_FILE",
        help="the same stack before the change (e.g. the pull request's base): report what a vLLM upgrade changes",
    )
    parser.add_argument("--log", metavar="FILE", help="a vLLM start-up log: set its figures and phases beside the prediction")
    parser.add_argument(
        "--events", metavar="FILE", help="with --log: the pod's events (kubectl describe pod), for the image pull"
    )
    parser.add_argument(
        "--frontier",
        action="store_true",
        help="name the cheapest GPU layout that meets the target and list every catalog layout, priced (--json has them)",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        help="read no model facts from the Hub: a model outside the catalog comes from the Hub cache (HF_HUB_OFFLINE=1)",
    )
    parser.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    return parser


def _run(args: argparse.Namespace) -> int:
    if args.events and not args.log:
        return _config_error(args, ConfigError([ConfigIssue("", "--events: given without --log. Fix: add --log FILE.")]))
    if args.log:  # a bad log path is reported before the stack is read
        from preflight.startup_log import LogError, check_startup_log, read_startup_log
        from preflight.startup_phases import parse_phases

        try:
            log_text = read_startup_log(args.log)
            phases = parse_phases(log_text, read_startup_log(args.events, "--events") if args.events else None)
        except LogError as error:
            return _config_error(args, ConfigError([ConfigIssue("", str(error))]))
    if args.offline:  # preflight/hub.py reads the cache only (huggingface_hub's own switch, for the same reason)
        os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        cfg, secrets = load_stack_file_with_secrets(args.stack_file)
    except ConfigError as error:
        return _config_error(args, error)
    try:  # a secret missing from the file is not an error offline (ESC or CI may set it); one it holds is known
        stack = stack_name_of(args.stack_file)
        check = _snapshot_check(args.cluster)
        verdict = assess(cfg, cluster_check=check, stack=stack, api_key_previous="api_key_previous" in secrets)
    except ConfigError as error:  # a --cluster file that is not a snapshot
        return _config_error(args, error)
    if verdict.outcome is Outcome.CONFIG_ERROR:
        return _config_error(args, ConfigError(list(verdict.issues)))
    logged, timing = None, None
    if args.log:  # checked before anything is printed: --json prints one document
        try:
            served = (cfg.model.id, cfg.model.local_path or "")
            logged = check_startup_log(args.log, log_text, served, timed=phases.found)
        except LogError as error:
            return _config_error(args, ConfigError([ConfigIssue("", str(error))]))
        timing = phases if phases.found else None
    upgrade: UpgradeImpact | None = None
    if args.against:
        try:
            upgrade = _upgrade(args.against, stack, cfg, verdict)
        except ConfigError as error:
            return _config_error(args, error)
    arch = verdict.report.resolved.architecture if verdict.report else None
    source = arch.source if arch else "catalog"
    if args.offline or source != "catalog":
        print(f"note: model facts of {cfg.model.id} from the {source}{' (--offline)' if args.offline else ''}", file=sys.stderr)
    for issue in missing_secrets(cfg, secrets, arch):
        print(f"note: {issue.render()} (pulumi preview stops unless it is set elsewhere)", file=sys.stderr)
    _print_report(args, verdict, _frontier(args, cfg, verdict), logged, upgrade, timing)
    return verdict.outcome.value


def _upgrade(base_file: str, stack: str, cfg: StackConfig, verdict: Verdict) -> UpgradeImpact | None:
    """The upgrade impact against the base stack file (None when both run the same release and image). A base
    that does not load or validate is a config error naming --against and the file."""
    from cli.upgrade import is_upgrade, upgrade_impact

    def against(issues: list[ConfigIssue]) -> ConfigError:
        return ConfigError([ConfigIssue("", f"--against {base_file}: {issue.render()}") for issue in issues])

    try:
        base_cfg, _ = load_stack_file_with_secrets(base_file)
    except ConfigError as error:
        raise against(error.issues) from None
    base = assess(base_cfg, stack=stack)
    if base.outcome is Outcome.CONFIG_ERROR or base.plan is None:
        raise against(list(base.issues))
    assert verdict.plan is not None  # the head is sized: its config errors were reported first
    if not is_upgrade(base.plan, verdict.plan):
        return None
    return upgrade_impact(base.plan, verdict.plan, cfg, verdict.cluster)


def _frontier(args: argparse.Namespace, cfg: StackConfig, verdict: Verdict) -> Frontier | None:
    """Every catalog layout, for --json and --frontier only: one preflight evaluation per layout (docs/cost.md)."""
    if verdict.plan is None or not (args.json or args.frontier):
        return None
    return resolve_frontier(sizing_inputs(cfg), verdict.plan.cost)


def _snapshot_check(files: list[str]) -> ClusterCheck:
    """The cluster checks offline: against --cluster files, else the stack's own cluster.snapshot_files (as the
    Pulumi program reads them), else none ("not checked"). A bad file is a config error (exit 2)."""

    def check(plan: Plan) -> ClusterResult:
        snapshot_files = plan.cluster.snapshot_files
        paths, key = (files, "") if files else (list(snapshot_files), "cluster.snapshot_files")
        if not paths:
            return NOT_CHECKED
        # Only with a snapshot to check: cluster/ and validation/cluster.py are 4% of a run without one
        from cluster.snapshot import SnapshotError
        from validation.cluster import check_snapshots

        try:
            return check_snapshots(plan, paths)
        except SnapshotError as error:
            raise ConfigError([ConfigIssue(key, f"--cluster {error}" if files else str(error))]) from None

    return check


def _config_error(args: argparse.Namespace, error: ConfigError) -> int:
    if args.json:
        print(json.dumps({"fits": False, "config_errors": [i.render() for i in error.issues]}, indent=2))
    else:
        print(error.render(), file=sys.stderr)
    return EXIT_CONFIG_ERROR


def _print_report(
    args: argparse.Namespace,
    verdict: Verdict,
    frontier: Frontier | None,
    logged: LoggedStartup | None = None,
    upgrade: UpgradeImpact | None = None,
    timing: LoggedPhases | None = None,
) -> None:
    """The report, then what the flags asked for beside it: one JSON document with --json."""
    if args.json:
        print(json.dumps(_json_document(args, verdict, frontier, logged, upgrade, timing), indent=2))
        return
    plan = verdict.plan
    assert plan is not None  # planned whenever there is no config error
    report, zero = plan.sizing, plan.zero
    rows = [
        *cost_rows(plan.cost),
        *(zero.rows() if zero is not None else []),
        *(frontier_summary(frontier) if frontier else []),
    ]
    if args.markdown:
        print(markdown_text(report, Path(args.stack_file).name, verdict.cluster, rows))
    else:
        print(table_text(report, verdict.cluster, rows))
    if frontier is not None:
        print("Capacity frontier (USD per replica-month, cheapest first):")
        print("\n".join(f"  {line}" for line in frontier_rows(frontier)))
    if args.against:
        print(_upgrade_text(args, upgrade))
    if logged is not None and (logged.has_figures or timing is None):
        from preflight.startup_log import render_log_check

        print(render_log_check(report, logged))
    if timing is not None and report.startup is not None:
        from preflight.startup_phases import render_phase_check

        print(render_phase_check(report.startup, timing))


def _json_document(
    args: argparse.Namespace,
    verdict: Verdict,
    frontier: Frontier | None,
    logged: LoggedStartup | None,
    upgrade: UpgradeImpact | None,
    timing: LoggedPhases | None,
) -> dict[str, Any]:
    plan = verdict.plan
    assert plan is not None  # planned whenever there is no config error
    report = plan.sizing
    data = report.as_dict()
    data["cost"] = plan.cost.as_dict()
    data["frontier"] = None if frontier is None else frontier.as_dict()
    data["cluster"] = verdict.cluster.as_dict()
    data["verdict"]["overall"] = text_verdict(report, verdict.cluster)  # the cluster's findings included
    if logged is not None:
        from preflight.startup_log import log_check_dict

        data["startup_log"] = log_check_dict(report, logged)
    if plan.zero is not None:
        data["scale_to_zero"] = plan.zero.as_dict()
    if args.against:  # null: the base runs the same release and image
        data["upgrade"] = None if upgrade is None else upgrade.as_dict()
    if timing is not None and report.startup is not None:
        from preflight.startup_phases import phase_check_dict

        data["startup_phases"] = phase_check_dict(report.startup, timing)
    return data


def _upgrade_text(args: argparse.Namespace, upgrade: UpgradeImpact | None) -> str:
    from cli.upgrade import markdown_lines, text_lines

    if upgrade is None:
        return f"Upgrade: none (the base runs the same release and image as {args.stack_file})"
    lines = markdown_lines(upgrade.as_dict()) if args.markdown else text_lines(upgrade.as_dict())
    return "\n".join(["", *lines] if args.markdown else lines)


if __name__ == "__main__":
    sys.exit(main())
