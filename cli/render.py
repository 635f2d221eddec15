"""`python -m components.render STACK_FILE OUT_DIR`: the stack's objects as YAML files, for review and GitOps.

The same list the Pulumi program registers (components/render/manifests.py stack_manifests; tests/
test_offline_render.py holds them equal), without Pulumi, a cluster or a Docker host. Secret values are
placeholders: nothing secret is written. A docker stack writes its container as one file. Exit codes as
`python -m preflight`: 0 written, 1 blocked, 2 config error (nothing written then).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from config.errors import ConfigError
from plan import Plan
from validation import Outcome, assess
from validation.sources import load_stack_file_with_secrets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m components.render", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("stack_file", help="a stack file, e.g. stacks/Pulumi.prod.yaml")
    parser.add_argument("out_dir", help="folder for the YAML files (created; files of the same names replaced)")
    args = parser.parse_args(argv)
    try:
        cfg, secrets = load_stack_file_with_secrets(args.stack_file)
    except ConfigError as error:
        print(error.render(), file=sys.stderr)
        return Outcome.CONFIG_ERROR.value
    stack = Path(args.stack_file).name.removeprefix("Pulumi.").removesuffix(".yaml")
    verdict = assess(cfg, stack=stack, hf_token="hf_token" in secrets)
    if verdict.outcome is not Outcome.FITS or verdict.plan is None:
        reason = (
            ConfigError(list(verdict.issues)).render()
            if verdict.issues
            else "blocked by the preflight: run python -m preflight for the reasons."
        )
        print(reason, file=sys.stderr)
        return verdict.outcome.value
    for path in write_objects(rendered_objects(verdict.plan), Path(args.out_dir)):
        print(path)
    return Outcome.FITS.value


def rendered_objects(plan: Plan) -> list[dict[str, Any]]:
    """The objects the program registers for this stack (Kubernetes), or the container (Docker)."""
    if plan.target == "docker":
        from components.render.docker import docker_document

        return [docker_document(plan)]
    from components.render.manifests import stack_manifests

    return stack_manifests(plan)


def write_objects(objects: list[dict[str, Any]], out_dir: Path) -> list[Path]:
    """One file per object, numbered in registration order: `03-deployment-vllm-prod-server.yaml`."""
    import yaml

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for index, obj in enumerate(objects, start=1):
        name = obj.get("metadata", {}).get("name") or obj.get("name", "object")
        path = out_dir / f"{index:02d}-{obj['kind'].lower()}-{name}.yaml"
        path.write_text(yaml.safe_dump(obj, sort_keys=False, allow_unicode=True), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    sys.exit(main())
