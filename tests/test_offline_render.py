"""`python -m components.render STACK OUT_DIR` writes exactly what the program registers, object by object,
for every stack in stacks/: one assembled list (components/render/manifests.py stack_manifests)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from cli.render import main as render_main
from cli.render import rendered_objects
from components.render.manifests import SECRET_PLACEHOLDER
from components.render.security import API_KEY_REVISION_ANNOTATION, API_KEY_REVISION_PLACEHOLDER
from config.errors import ConfigError
from tests.factories import REPO
from tests.test_validation import repository_program_run
from validation import Outcome, assess
from validation.sources import load_stack_file_with_secrets

STACKS = sorted((REPO / "stacks").rglob("Pulumi.*.yaml"))


def _fits(path: Path) -> bool:
    """A file that does not load is not rendered; tests/test_docs_examples.py names it with its errors, instead
    of an error at collection that names no file."""
    try:
        return assess(load_stack_file_with_secrets(path)[0]).outcome is Outcome.FITS
    except ConfigError:
        return False


FITTING = [path for path in STACKS if _fits(path)]


SECRET_SIG = "4dabf18193072939515e22adb298388d"  # how the Pulumi wire format marks a secret value


def plain(value: Any) -> Any:
    """Mocked inputs carry numbers as floats and secrets wrapped; secrets are placeholders offline."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict) and SECRET_SIG in value:
        return plain(value["value"])
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def offline_fingerprint(value: Any) -> Any:
    """The API key's fingerprint, which the program fills in on the pod templates, as the offline placeholder."""
    if isinstance(value, dict) and API_KEY_REVISION_ANNOTATION in value:
        return {**value, API_KEY_REVISION_ANNOTATION: API_KEY_REVISION_PLACEHOLDER}
    if isinstance(value, dict):
        return {key: offline_fingerprint(item) for key, item in value.items()}
    if isinstance(value, list):
        return [offline_fingerprint(item) for item in value]
    return value


def key(obj: dict[str, Any]) -> tuple[str, str, str]:
    metadata = obj.get("metadata", {})
    return obj["kind"], metadata.get("namespace", ""), metadata.get("name", "")


def kubernetes_objects(path: Path) -> dict[tuple[str, str, str], Any]:
    outcome, registered = repository_program_run(path)
    assert outcome == Outcome.FITS
    found = {}
    for resource in registered.resources:
        if resource.typ.startswith("kubernetes:") and not resource.typ.startswith("pulumi:"):
            obj = offline_fingerprint(plain(dict(resource.inputs)))
            if "stringData" in obj:
                obj["stringData"] = dict.fromkeys(obj["stringData"], SECRET_PLACEHOLDER)
            found[key(obj)] = obj
    return found


def offline_objects(path: Path) -> list[dict[str, Any]]:
    cfg, _ = load_stack_file_with_secrets(path)
    stack = path.name.removeprefix("Pulumi.").removesuffix(".yaml")
    plan = assess(cfg, stack=stack, hf_token=True).plan  # repository_program_run sets both secrets
    assert plan is not None
    return rendered_objects(plan)


KUBERNETES = [p for p in FITTING if load_stack_file_with_secrets(p)[0].target == "kubernetes"]
DOCKER = [p for p in FITTING if load_stack_file_with_secrets(p)[0].target == "docker"]


@pytest.mark.parametrize("path", KUBERNETES, ids=[p.stem for p in KUBERNETES])
def test_the_offline_render_is_what_the_program_registers_object_by_object(path: Path) -> None:
    registered, offline = kubernetes_objects(path), offline_objects(path)
    assert sorted(registered) == sorted(key(obj) for obj in offline)
    for obj in offline:
        assert registered[key(obj)] == plain(obj), key(obj)


def camel(value: Any) -> Any:
    if isinstance(value, dict):
        return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k): camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [camel(item) for item in value]
    return value


@pytest.mark.parametrize("path", DOCKER, ids=[p.stem for p in DOCKER])
def test_the_offline_docker_container_is_what_the_program_registers(path: Path) -> None:
    _, registered = repository_program_run(path)
    container = plain(dict(registered.named(f"vllm-{path.stem.removeprefix('Pulumi.')}-server").inputs))
    container["envs"] = [env for env in container["envs"] if not str(env).startswith("VLLM_API_KEY=")]
    document = camel({k: v for k, v in offline_objects(path)[0].items() if k not in ("kind", "metadata", "image")})
    assert {k: container[k] for k in document} == plain(document)


def test_the_shipped_stacks_cover_both_targets() -> None:
    assert (len(KUBERNETES) >= 2, len(DOCKER) >= 2) == (True, True)


def test_the_command_writes_one_numbered_file_per_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert render_main([str(REPO / "stacks" / "Pulumi.dev.yaml"), str(tmp_path)]) == 0
    files = sorted(tmp_path.iterdir())
    first = yaml.safe_load(files[0].read_text(encoding="utf-8"))
    assert (files[0].name, first["kind"], len(files)) == (
        "01-namespace-vllm-dev.yaml",
        "Namespace",
        len(capsys.readouterr().out.splitlines()),
    )


def test_a_blocked_stack_writes_nothing_and_exits_one(tmp_path: Path) -> None:
    blocked = REPO / "stacks" / "examples" / "Pulumi.blocked-70b-on-2x-a100-40gb.yaml"
    assert (render_main([str(blocked), str(tmp_path / "out")]), (tmp_path / "out").exists()) == (1, False)


def test_the_command_needs_no_pulumi(tmp_path: Path) -> None:
    code = (
        "import sys, runpy; sys.argv = ['x', 'stacks/Pulumi.prod.yaml', sys.argv[1]];"
        "\ntry: runpy.run_module('components.render', run_name='__main__')\nexcept SystemExit: pass"
        "\nprint(sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_kubernetes', 'kubernetes')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.stdout.splitlines()[-1] == "[]", done.stderr
