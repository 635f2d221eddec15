"""`python -m preflight STACK_FILE [--cluster FILE ...] [--log FILE] [--json | --markdown] [--debug]`.

Exit 0 fits, 1 blocked (a memory, structural or cluster verdict), 2 config error, 3 internal error (a bug: one
line asking to report it; the traceback only with --debug). The verdict is validation.assess's, the same call
the Pulumi program makes, so the exit code and `pulumi preview` agree.

With --cluster, the stack is also checked against a cluster snapshot: the files `kubectl get ... -o json`
writes (docs/cluster.md). Without it the report says `cluster: not checked`, never `passed`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cli.pipe import EXIT_CLOSED_PIPE, quiet_on_closed_pipe
from cluster.report import ClusterResult
from config.errors import ConfigError, ConfigIssue
from plan import Plan
from preflight.text import markdown_text, table_text
from preflight.text import verdict as text_verdict
from validation import ClusterCheck, Outcome, Verdict, assess
from validation.cluster import check_snapshots, stack_name_of
from validation.secrets import missing_secrets
from validation.sources import load_stack_file_with_secrets

if TYPE_CHECKING:  # the log module (its patterns) is imported only with --log
    from preflight.startup_log import LoggedStartup

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
    parser.add_argument("--log", metavar="FILE", help="a vLLM start-up log: set its figures beside the prediction")
    parser.add_argument(
        "--offline",
        action="store_true",
        help="read no model facts from the Hub: a model outside the catalog comes from the Hub cache (HF_HUB_OFFLINE=1)",
    )
    parser.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    return parser


def _run(args: argparse.Namespace) -> int:
    if args.log:  # a bad log path is reported before the stack is read
        from preflight.startup_log import LogError, check_startup_log, read_startup_log

        try:
            log_text = read_startup_log(args.log)
        except LogError as error:
            return _config_error(args, ConfigError([ConfigIssue("", str(error))]))
    if args.offline:  # preflight/hub.py reads the cache only (huggingface_hub's own switch, for the same reason)
        os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        cfg, secrets = load_stack_file_with_secrets(args.stack_file)
    except ConfigError as error:
        return _config_error(args, error)
    try:  # secrets unknown offline: they may come from a Pulumi ESC environment or CI
        stack = stack_name_of(args.stack_file)
        verdict = assess(cfg, cluster_check=_snapshot_check(args.cluster), stack=stack)
    except ConfigError as error:  # a --cluster file that is not a snapshot
        return _config_error(args, error)
    if verdict.outcome is Outcome.CONFIG_ERROR:
        return _config_error(args, ConfigError(list(verdict.issues)))
    logged = None
    if args.log:  # checked before anything is printed: --json prints one document
        try:
            logged = check_startup_log(args.log, log_text, (cfg.model.id, cfg.model.local_path or ""))
        except LogError as error:
            return _config_error(args, ConfigError([ConfigIssue("", str(error))]))
    arch = verdict.report.resolved.architecture if verdict.report else None
    source = arch.source if arch else "catalog"
    if args.offline or source != "catalog":
        print(f"note: model facts of {cfg.model.id} from the {source}{' (--offline)' if args.offline else ''}", file=sys.stderr)
    for issue in missing_secrets(cfg, secrets, arch):
        print(f"note: {issue.render()} (pulumi preview stops unless it is set elsewhere)", file=sys.stderr)
    _print_report(args, verdict, logged)
    return verdict.outcome.value


def _snapshot_check(files: list[str]) -> ClusterCheck:
    """The cluster checks offline: against --cluster files, else the stack's own cluster.snapshot_files (as the
    Pulumi program reads them), else none ("not checked"). A bad file is a config error (exit 2)."""

    def check(plan: Plan) -> ClusterResult:
        from cluster.report import NOT_CHECKED
        from cluster.snapshot import SnapshotError

        snapshot_files = plan.cluster.snapshot_files
        paths, key = (files, "") if files else (list(snapshot_files), "cluster.snapshot_files")
        if not paths:
            return NOT_CHECKED
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


def _print_report(args: argparse.Namespace, verdict: Verdict, logged: LoggedStartup | None = None) -> None:
    report = verdict.report
    assert report is not None  # sized whenever there is no config error
    if args.json:
        data = report.as_dict()
        data["cluster"] = verdict.cluster.as_dict()
        data["verdict"]["overall"] = text_verdict(report, verdict.cluster)  # the cluster's findings included
        if logged is not None:
            from preflight.startup_log import log_check_dict

            data["startup_log"] = log_check_dict(report, logged)
        print(json.dumps(data, indent=2))
        return
    if args.markdown:
        print(markdown_text(report, Path(args.stack_file).name, verdict.cluster))
    else:
        print(table_text(report, verdict.cluster))
    if logged is not None:
        from preflight.startup_log import render_log_check

        print(render_log_check(report, logged))


if __name__ == "__main__":
    sys.exit(main())
