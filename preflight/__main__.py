"""`python -m preflight STACK_FILE [--json | --markdown]`: exit 0 fits, 1 blocked, 2 config error."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from config.errors import ConfigError
from config.sources import load_stack_file_with_secrets
from config.stack import missing_secrets
from preflight import run_preflight
from preflight.render import render_markdown, render_table

EXIT_FITS, EXIT_BLOCKED, EXIT_CONFIG_ERROR = 0, 1, 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m preflight", description=__doc__)
    parser.add_argument("stack_file", help="a stack file, e.g. stacks/Pulumi.prod.yaml")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the report's fields as JSON")
    output.add_argument("--markdown", action="store_true", help="print the report as Markdown (CI summaries)")
    parser.add_argument("--log", help="a vLLM start-up log: set its figures beside the prediction")
    args = parser.parse_args(argv)
    try:
        cfg, secrets = load_stack_file_with_secrets(args.stack_file)
        report = run_preflight(cfg)
    except ConfigError as error:
        if args.json:
            print(json.dumps({"fits": False, "config_errors": [i.render() for i in error.issues]}, indent=2))
        else:
            print(error.render(), file=sys.stderr)
        return EXIT_CONFIG_ERROR
    for issue in missing_secrets(cfg, secrets):  # may come from a Pulumi ESC environment or CI instead
        print(f"note: {issue.render()} (pulumi preview stops unless it is set elsewhere)", file=sys.stderr)
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    elif args.markdown:
        print(render_markdown(report, Path(args.stack_file).name))
    else:
        print(render_table(report))
    if args.log:  # read after the verdict so a bad log path never hides it
        from preflight.startup_log import parse_startup_log, render_log_check

        print(render_log_check(report, parse_startup_log(Path(args.log).read_text(errors="replace"))))
    return EXIT_FITS if report.fits else EXIT_BLOCKED


if __name__ == "__main__":
    sys.exit(main())
