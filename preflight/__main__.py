"""`python -m preflight STACK_FILE [--cluster FILE ...] [--json | --markdown]`: exit 0 fits, 1 blocked, 2 config error.

With --cluster, the stack is also checked against a cluster snapshot: the files `kubectl get ... -o json`
writes (see the README). Without it the report says `cluster: not checked`, never `passed`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cluster.report import NOT_CHECKED, ClusterResult
from config.errors import ConfigError
from config.sources import load_stack_file_with_secrets
from config.stack import StackConfig, missing_secrets
from preflight import PreflightReport, run_preflight
from preflight.render import render_markdown, render_table, verdict

EXIT_FITS, EXIT_BLOCKED, EXIT_CONFIG_ERROR = 0, 1, 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m preflight", description=__doc__)
    parser.add_argument("stack_file", help="a stack file, e.g. stacks/Pulumi.prod.yaml")
    parser.add_argument("--cluster", action="append", default=[], metavar="FILE",
                        help="a `kubectl get ... -o json` snapshot of the cluster (repeatable)")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the report's fields as JSON")
    output.add_argument("--markdown", action="store_true", help="print the report as Markdown (CI summaries)")
    args = parser.parse_args(argv)
    try:
        cfg, secrets = load_stack_file_with_secrets(args.stack_file)
        report = run_preflight(cfg)
        cluster = _cluster(cfg, report, args.cluster, args.stack_file)
    except ConfigError as error:
        if args.json:
            print(json.dumps({"fits": False, "config_errors": [i.render() for i in error.issues]}, indent=2))
        else:
            print(error.render(), file=sys.stderr)
        return EXIT_CONFIG_ERROR
    for issue in missing_secrets(cfg, secrets):  # may come from a Pulumi ESC environment or CI instead
        print(f"note: {issue.render()} (pulumi preview stops unless it is set elsewhere)", file=sys.stderr)
    if args.json:
        data = report.as_dict()
        data["cluster"] = cluster.as_dict()
        data["verdict"] = verdict(report, cluster)
        print(json.dumps(data, indent=2))
    elif args.markdown:
        print(render_markdown(report, Path(args.stack_file).name, cluster))
    else:
        print(render_table(report, cluster))
    return EXIT_FITS if verdict(report, cluster) == "FITS" else EXIT_BLOCKED


def _cluster(cfg: StackConfig, report: PreflightReport, files: list[str], stack_file: str) -> ClusterResult:
    """The cluster checks against --cluster files; a bad file is a config error (exit 2)."""
    if not files:
        return NOT_CHECKED
    from cluster.snapshot import SnapshotError
    from config.errors import ConfigIssue
    from preflight.cluster import check_snapshots, stack_name_of

    try:
        return check_snapshots(cfg, report, files, stack_name_of(stack_file))
    except SnapshotError as error:
        raise ConfigError([ConfigIssue("", f"--cluster {error}")]) from None


if __name__ == "__main__":
    sys.exit(main())
