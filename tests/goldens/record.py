"""What the goldens hold for one stack: the CLI's JSON and text reports with their exit codes, and the offline
render (what the Pulumi program registers: tests/test_offline_render.py holds the two equal). `python -m tests.goldens.record`
writes them to tests/data/goldens/; tests/test_goldens.py holds every stack to them, byte for byte."""

from __future__ import annotations

import io
import json
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import yaml

from cli.preflight import main as preflight_main
from cli.render import rendered_objects
from cluster import live
from tests.factories import REPO, merge
from tests.goldens.pr_comment import GOLDEN as PR_COMMENT
from tests.goldens.pr_comment import golden_comment
from tests.goldens.variants import STACK_FILES, VARIANTS
from validation import Outcome, assess
from validation.sources import load_stack_file_with_secrets

GOLDENS = REPO / "tests" / "data" / "goldens"
SECRET_SIG = "4dabf18193072939515e22adb298388d"


def case_names() -> list[str]:
    return [_file_case(path) for path in STACK_FILES] + sorted(VARIANTS)


def _file_case(path: Path) -> str:
    return str(path.relative_to(REPO)).replace("/", "__").removesuffix(".yaml")


def _case_path(name: str, folder: Path) -> Path:
    if name in VARIANTS:
        base, changes = VARIANTS[name]
        document = yaml.safe_load((REPO / "stacks" / base).read_text(encoding="utf-8"))
        config = document["config"]
        for key, value in changes.items():
            full = f"vllm-serving:{key}"
            config[full] = merge(config.get(full, {}), value) if isinstance(value, dict) else value
        path = folder / f"Pulumi.{name}.yaml"
        path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
        return path
    return next(path for path in STACK_FILES if _file_case(path) == name)


def _cli(path: Path, *flags: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = preflight_main([str(path), *flags])
    return {
        "exit": code,
        "stdout": out.getvalue().replace(str(path.parent), "<dir>"),
        "stderr": err.getvalue().replace(str(path.parent), "<dir>"),
    }


def _plain(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict) and SECRET_SIG in value:
        return {"secret": _plain(value.get("value"))}
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def record(name: str) -> dict[str, Any]:
    """The golden of one case, as a JSON-ready mapping."""
    with tempfile.TemporaryDirectory() as folder:
        path = _case_path(name, Path(folder))
        golden: dict[str, Any] = {"json": _cli(path, "--json"), "text": _cli(path)}
        if golden["json"]["exit"] != Outcome.FITS.value:
            return golden
        cfg, secrets = load_stack_file_with_secrets(path)
        stack = path.name.removeprefix("Pulumi.").removesuffix(".yaml")
        verdict = assess(cfg, stack=stack, hf_token="hf_token" in secrets)
        assert verdict.plan is not None
        golden["render"] = _plain(rendered_objects(verdict.plan))
        return golden


def dump(golden: dict[str, Any]) -> str:
    return json.dumps(golden, indent=1, sort_keys=True, default=str) + "\n"


def _no_live_cluster(*_args: object, **_kwargs: object) -> None:
    raise live.LiveReadError("no cluster in tests")  # as tests/conftest.py has it for every test


def main() -> int:
    setattr(live, "read_live", _no_live_cluster)  # noqa: B010 (the test suite patches it the same way)
    GOLDENS.mkdir(parents=True, exist_ok=True)
    for name in case_names():
        (GOLDENS / f"{name}.json").write_text(dump(record(name)), encoding="utf-8")
    PR_COMMENT.write_text(golden_comment(), encoding="utf-8")
    print(f"{len(case_names())} goldens in {GOLDENS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
