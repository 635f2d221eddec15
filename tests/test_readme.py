"""What README.md and docs/ state, checked against the code: samples, names, keys, paths and links."""

from __future__ import annotations

import re
import tomllib
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from catalog.gpus import NVIDIA
from catalog.keda import FEATURES, OLDEST_SUPPORTED, Feature
from catalog.storage import CONSERVATIVE_MIB_PER_S, WELL_KNOWN_CLASSES, volume_throughput
from catalog.vllm_images import OFFICIAL_IMAGE, driver_floor
from cli.preflight import main
from config.delivery import DEFAULT_THROUGHPUT
from config.observability import MonitoringConfig
from config.secrets import SECRET_KEYS
from config.stack import StackConfig
from tests.factories import REPO, STACKS, load_stack_file
from tests.test_citations import PENDING_PAGES

README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))


def readme() -> str:
    return README.read_text(encoding="utf-8")


def fenced_after(marker: str) -> str:
    """The fenced block that follows `<!-- readme-check: MARKER -->` in the README."""
    match = re.search(re.escape(f"<!-- readme-check: {marker} -->") + r"\n```\w*\n(.*?)```", readme(), re.DOTALL)
    assert match, f"README.md has no block marked `readme-check: {marker}`"
    return match.group(1)


def test_the_readme_is_under_200_lines() -> None:
    assert len(readme().splitlines()) < 200


def test_the_readme_preflight_sample_is_what_the_cli_prints(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([str(STACKS / "Pulumi.dev.yaml")]) == 0
    printed = capsys.readouterr().out
    assert fenced_after("preflight-output stacks/Pulumi.dev.yaml") == printed, (
        "README.md's preflight sample is stale: paste the output of `venv/bin/python -m preflight stacks/Pulumi.dev.yaml`"
    )


def test_the_readme_minimal_stack_is_the_dev_stack_file() -> None:
    assert fenced_after("stack-file stacks/Pulumi.dev.yaml") == (STACKS / "Pulumi.dev.yaml").read_text(encoding="utf-8")


def test_the_readme_exit_codes_are_the_cli_exit_codes(capsys) -> None:  # type: ignore[no-untyped-def]
    assert "exit 0 fits, 1 blocked, 2 config error" in readme()
    assert main([str(STACKS / "Pulumi.dev.yaml")]) == 0
    assert main([str(STACKS / "examples/Pulumi.blocked-70b-on-2x-a100-40gb.yaml")]) == 1
    assert main([str(REPO / "tests/bad_stacks/typo-engine-key.yaml")]) == 2


def test_the_readme_cli_options_exist(capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "--json" in capsys.readouterr().out


def test_the_readme_cluster_option_exists(capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "--cluster" in capsys.readouterr().out


def test_the_readme_gpu_label_and_resource_are_the_ones_rendered() -> None:
    words = " ".join(readme().split())  # as read, whatever the line breaks
    assert f"label `{NVIDIA.product_label}`" in words and f"(resource `{NVIDIA.resource}`)" in words


def test_the_readme_secret_names_are_the_secret_keys() -> None:
    named = set(re.findall(r"pulumi config set --secret (\w+)", readme()))
    assert named == set(SECRET_KEYS)


def test_the_prod_stack_requires_the_api_key_as_the_readme_says() -> None:
    assert "prod sets security.require_api_key" in readme()
    assert load_stack_file(STACKS / "Pulumi.prod.yaml").security.require_api_key


def test_the_readme_python_version_is_the_project_s() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "Python 3.11" in readme() and project["requires-python"] == ">=3.11"


def test_every_path_in_the_readme_layout_exists() -> None:
    paths = [line.split()[0] for line in fenced_after("layout").splitlines() if line.strip()]
    assert paths and [p for p in paths if not (REPO / p).exists()] == []


def _links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```|`[^`\n]*`", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)  # code is not a link
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    return [str((path.parent / t).resolve().relative_to(REPO)) for t in targets if "://" not in t]


LINKS = sorted({(str(page.relative_to(REPO)), link) for page in [README, *DOCS] for link in _links(page)})


@pytest.mark.parametrize(
    ("page", "link"),
    [
        pytest.param(page, link, marks=pytest.mark.xfail(strict=True, reason=f"{link} comes from another branch"))
        if link in PENDING_PAGES
        else (page, link)
        for page, link in LINKS
    ],
)
def test_every_relative_link_in_the_docs_resolves(page: str, link: str) -> None:
    assert (REPO / link).exists(), f"{page} links to {link}, which does not exist"


def _resolves(model: type[BaseModel], parts: list[str]) -> bool:
    field = model.model_fields.get(parts[0])
    if field is None:
        return False
    if len(parts) == 1:
        return True
    nested = [
        a for a in (field.annotation, *typing.get_args(field.annotation)) if isinstance(a, type) and issubclass(a, BaseModel)
    ]
    if nested:
        return _resolves(nested[0], parts[1:])
    return typing.get_origin(field.annotation) is dict  # a mapping's own keys are free-form


KEY = re.compile(r"`(?:vllm-serving:)?([a-z_]+(?:\.[a-z0-9_]+)+)(?::[^`]*)?`")
FILE_SUFFIX = re.compile(r"\.(json|py|md|ya?ml|txt|csv|sh)$")


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.name)
def test_every_config_key_named_in_the_docs_exists(page: Path) -> None:
    keys = {
        m.group(1)
        for m in KEY.finditer(page.read_text(encoding="utf-8"))
        if m.group(1).split(".")[0] in StackConfig.model_fields and not FILE_SUFFIX.search(m.group(1))
    }
    assert sorted(k for k in keys if not _resolves(StackConfig, k.split("."))) == []


def test_the_readme_says_monitoring_is_on_by_default_as_the_config_does() -> None:
    assert "when `monitoring.enabled` (the default)" in readme() and MonitoringConfig().enabled is True


def test_the_readme_test_command_installs_promtool_with_apt_as_root() -> None:
    script = (REPO / "scripts" / "test.sh").read_text(encoding="utf-8")
    assert "`scripts/test.sh`, which installs `promtool` with apt when run\n  as root" in readme()
    assert 'if [ "$(id -u)" = 0 ]' in script and "apt-get install" in script and "promtool" in script


def test_stack_files_live_where_the_readme_says() -> None:
    assert "A stack is `stacks/Pulumi.<name>.yaml`" in readme()
    assert "stackConfigDir: stacks" in (REPO / "Pulumi.yaml").read_text(encoding="utf-8")


def test_the_readme_calibration_table_is_the_one_the_calibration_page_asserts() -> None:
    page = (REPO / "docs" / "calibration.md").read_text(encoding="utf-8")
    table = readme().split("<!-- readme-check: calibration -->\n", 1)[1].split("\n\n", 1)[0]
    assert table.strip() and table.strip() in page


def test_the_readme_driver_and_keda_versions_are_the_ones_the_checks_use() -> None:
    floor = driver_floor(OFFICIAL_IMAGE, "v0.33.0", "0.33.0")
    assert floor is not None and floor.min_driver_major == 580 and "NVIDIA driver 580 or newer" in readme()
    assert OLDEST_SUPPORTED == "2.16" and "only fields KEDA 2.16 accepts" in readme()
    assert FEATURES[Feature.FALLBACK_BEHAVIOR][0] == "2.17" and "to 2.17 or newer to get `fallback.behavior`" in readme()


def test_the_readme_delivery_throughputs_are_the_defaults_the_preflight_uses() -> None:
    table = readme().split("<!-- readme-check: delivery -->", 1)[1].split("\n\n", 1)[0]
    classes = {name: volume_throughput(WELL_KNOWN_CLASSES[name], 100).mib_per_s for name in ("efs-sc", "gp3", "gp2")}
    figures = {**classes, "object_storage": DEFAULT_THROUGHPUT["object_storage"].mib_per_s, "unknown": CONSERVATIVE_MIB_PER_S}
    assert figures == {"efs-sc": 100, "gp3": 125, "gp2": 128, "object_storage": 1024, "unknown": 100}
    assert all(f"{figure:g} MiB/s" in table for figure in figures.values())
