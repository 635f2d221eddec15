"""`python -m components.render STACK_FILE OUT_DIR`: the stack's objects as YAML files, for review and GitOps.

The same list the Pulumi program registers (components/render/manifests.py stack_manifests; tests/
test_offline_render.py holds them equal), without Pulumi, a cluster or a Docker host. Secret values are
placeholders: nothing secret is written. OUT_DIR ends up holding this render only: files an earlier render
wrote that this one no longer renders (a PVC or Job of another size) are removed; other files are left alone.
A docker stack writes its container as one file and a compose.yaml to run it (`docker compose up -d`).
The preflight's verdict and warnings go to stderr; stdout lists the files written, one a line.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from cli.pipe import EXIT_CLOSED_PIPE, quiet_on_closed_pipe
from config.errors import ConfigError
from plan import Plan
from preflight.report import PreflightReport
from validation import Outcome, assess
from validation.sources import load_stack_file_with_secrets

EPILOG = f"""exit codes:
  {Outcome.FITS.value}    written: the stack fits (its warnings, if any, on stderr)
  {Outcome.BLOCKED.value}    blocked by the preflight: nothing written (the reasons on stderr)
  {Outcome.CONFIG_ERROR.value}    config error: nothing written (every problem of the stack file listed)
  {EXIT_CLOSED_PIPE}  the reader of stdout went away (`| head`): nothing more is printed

examples:
  python -m components.render stacks/Pulumi.prod.yaml rendered/prod
  python -m components.render stacks/Pulumi.docker-8b.yaml rendered/docker-8b
  docker compose -f rendered/docker-8b/compose.yaml up -d   # what the Docker target's render is for
  python -m components.render stacks/Pulumi.dev.yaml rendered/dev && kubectl diff -f rendered/dev
"""

# The names this command gives its files (write_objects), and nothing else: only those are ever removed.
RENDERED_FILE = re.compile(r"\d{2,}-[a-z0-9]+-[^/]*\.yaml")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m components.render",
        description=__doc__,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("stack_file", help="a stack file, e.g. stacks/Pulumi.prod.yaml")
    parser.add_argument("out_dir", help="folder for the YAML files (created; an earlier render's files replaced)")
    args = parser.parse_args(argv)
    return quiet_on_closed_pipe(lambda: _run(args.stack_file, Path(args.out_dir)))


def _run(stack_file: str, out_dir: Path) -> int:
    try:
        cfg, secrets = load_stack_file_with_secrets(stack_file)
    except ConfigError as error:
        print(error.render(), file=sys.stderr)
        return Outcome.CONFIG_ERROR.value
    stack = Path(stack_file).name.removeprefix("Pulumi.").removesuffix(".yaml")
    verdict = assess(cfg, stack=stack, hf_token="hf_token" in secrets, api_key_previous="api_key_previous" in secrets)
    if verdict.issues:
        print(ConfigError(list(verdict.issues)).render(), file=sys.stderr)
        return verdict.outcome.value
    if verdict.report is not None:
        print(verdict_text(verdict.report), file=sys.stderr)
    if verdict.outcome is not Outcome.FITS or verdict.plan is None:
        print("nothing written: run python -m preflight for the figures and what would fit.", file=sys.stderr)
        return verdict.outcome.value
    for path in write_objects(rendered_objects(verdict.plan), out_dir):
        print(path)
    if verdict.plan.target == "docker":
        print(write_compose_file(verdict.plan, out_dir))
    return Outcome.FITS.value


def verdict_text(report: PreflightReport) -> str:
    """The verdict line, then why it is blocked and what to look at, as the preflight's table prints them."""
    lines = [f"vLLM preflight: {'FITS' if report.verdict.fits else 'BLOCKED'}"]
    for heading, items in (("Blocked because", report.verdict.reasons), ("Warnings", report.verdict.warnings)):
        if items:
            lines += [f"{heading}:", *(f"  - {item}" for item in items)]
    return "\n".join(lines)


def rendered_objects(plan: Plan) -> list[dict[str, Any]]:
    """The objects the program registers for this stack (Kubernetes), or the container (Docker)."""
    if plan.target == "docker":
        from components.render.docker import docker_document

        return [docker_document(plan)]
    from components.render.manifests import stack_manifests

    return stack_manifests(plan)


def write_objects(objects: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    """One file per object, numbered in registration order: `03-deployment-vllm-prod-server.yaml`. The files
    of an earlier render that this one does not write again are removed, so the folder is this render."""
    import yaml

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for index, obj in enumerate(objects, start=1):
        name = obj.get("metadata", {}).get("name") or obj.get("name", "object")
        path = out_dir / f"{index:02d}-{obj['kind'].lower()}-{name}.yaml"
        path.write_text(yaml.safe_dump(obj, sort_keys=False, allow_unicode=True), encoding="utf-8")
        written.append(path)
    stale = [path for path in out_dir.iterdir() if RENDERED_FILE.fullmatch(path.name) and path not in written]
    for path in stale:
        path.unlink()
    return written


def write_compose_file(plan: Plan, out_dir: Path) -> Path:
    """compose.yaml beside the container document: what a user runs without Pulumi."""
    import yaml

    from components.render.compose import COMPOSE_FILE, compose_document, compose_header

    path = out_dir / COMPOSE_FILE
    body = yaml.safe_dump(compose_document(plan), sort_keys=False, allow_unicode=True)
    path.write_text(compose_header(plan) + body, encoding="utf-8")
    return path


if __name__ == "__main__":
    sys.exit(main())
