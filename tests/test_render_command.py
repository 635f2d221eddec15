"""`python -m components.render`: the folder holds this render only, the verdict is printed, Docker gets a compose file."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cli.render import main as render_main
from cli.render import rendered_objects
from components.render.docker import CACHE_PATH
from tests.factories import REPO
from validation import assess
from validation.sources import load_stack_file_with_secrets

STACKS = REPO / "stacks"


def test_rendering_again_after_a_size_change_leaves_one_pvc_and_one_download_job(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.dev.yaml"
    text = (STACKS / "Pulumi.dev.yaml").read_text(encoding="utf-8")
    out = tmp_path / "out"
    for size in (40, 60):
        stack.write_text(text + f"  vllm-serving:cache:\n    size_gib: {size}\n", encoding="utf-8")
        assert render_main([str(stack), str(out)]) == 0
    names = [path.name.split("-", 1)[1] for path in out.iterdir()]
    pvcs = [name for name in names if name.startswith("persistentvolumeclaim-")]
    download_jobs = [name for name in names if name.startswith("job-vllm-dev-model-download-")]
    assert (len(pvcs), len(download_jobs)) == (1, 1)


def test_rendering_again_keeps_files_the_render_did_not_write(tmp_path: Path) -> None:
    notes = tmp_path / "README.md"
    notes.write_text("review notes\n", encoding="utf-8")
    assert (render_main([str(STACKS / "Pulumi.dev.yaml"), str(tmp_path)]), notes.exists()) == (0, True)


def test_the_render_prints_the_verdict_and_the_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    render_main([str(STACKS / "Pulumi.dev.yaml"), str(tmp_path)])
    err = capsys.readouterr().err
    assert (err.startswith("vLLM preflight: FITS\n"), "\nWarnings:\n  - model.revision is not pinned" in err) == (True, True)


def test_a_blocked_render_prints_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    render_main([str(STACKS / "examples" / "Pulumi.blocked-70b-on-2x-a100-40gb.yaml"), str(tmp_path / "out")])
    assert "vLLM preflight: BLOCKED\nBlocked because:\n  - " in capsys.readouterr().err


def _compose_and_container(path: Path, out: Path) -> tuple[dict, dict]:  # type: ignore[type-arg]
    assert render_main([str(path), str(out)]) == 0
    cfg, secrets = load_stack_file_with_secrets(str(path))
    plan = assess(cfg, stack=path.stem.removeprefix("Pulumi."), hf_token="hf_token" in secrets).plan
    assert plan is not None
    compose = yaml.safe_load((out / "compose.yaml").read_text(encoding="utf-8"))
    return compose["services"][plan.identity.instance], rendered_objects(plan)[0]


def test_a_docker_render_writes_a_compose_file_with_the_containers_command_and_environment(tmp_path: Path) -> None:
    service, container = _compose_and_container(STACKS / "Pulumi.docker-8b.yaml", tmp_path)
    assert (service["entrypoint"], service["command"], service["environment"], service["image"]) == (
        container["entrypoints"],
        container["command"],
        container["envs"],
        container["image"],
    )


def test_the_compose_file_reserves_the_stacks_gpu_devices_and_mounts_the_cache(tmp_path: Path) -> None:
    service, _ = _compose_and_container(STACKS / "Pulumi.docker-70b.yaml", tmp_path)
    devices = service["deploy"]["resources"]["reservations"]["devices"]
    assert (devices[0]["device_ids"], service["volumes"][0]["target"]) == (["0", "1", "2", "3"], CACHE_PATH)


def test_the_compose_file_passes_the_api_key_from_the_shell(tmp_path: Path) -> None:
    text = (STACKS / "Pulumi.docker-8b.yaml").read_text(encoding="utf-8")
    stack = tmp_path / "Pulumi.docker-key.yaml"
    stack.write_text(text + "  vllm-serving:security:\n    require_api_key: true\n", encoding="utf-8")
    service, _ = _compose_and_container(stack, tmp_path / "out")
    assert "VLLM_API_KEY" in service["environment"]
