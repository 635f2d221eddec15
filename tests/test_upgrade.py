"""`python -m preflight HEAD --against BASE`: the flags, metrics, memory and driver floor a vLLM upgrade changes,
held to the generated tables (catalog/data/vllm) and to the rendered objects' own queries."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from catalog.vllm_flags import FLAG_TABLES
from catalog.vllm_images import CUDA13_DEFAULT_FROM, MIN_DRIVER_MAJOR
from catalog.vllm_metrics import metrics_for, series_type
from cli.preflight import main
from cli.upgrade import command_line, flag_changes
from components.render.manifests import stack_manifests
from components.render.queries import used_metrics
from tests.factories import REPO, STACKS, preflight_imports
from validation import assess
from validation.sources import load_stack_file_with_secrets
from validation.vllm import flag_values

OLD, NEW = "0.7.2", "0.33.0"
CLUSTERS = REPO / "tests" / "data" / "clusters"


def stack_file(folder: Path, name: str, **changes: dict[str, Any]) -> Path:
    """stacks/Pulumi.<name>.yaml (or the example of that name) with some groups' keys replaced, written under
    `folder`."""
    shipped = STACKS / f"Pulumi.{name}.yaml"
    document = yaml.safe_load((shipped if shipped.exists() else STACKS / "examples" / shipped.name).read_text(encoding="utf-8"))
    for group, values in changes.items():
        key = f"vllm-serving:{group}"
        document["config"][key] = {**document["config"].get(key, {}), **values}
    path = folder / f"{len(list(folder.iterdir()))}" / f"Pulumi.{name}.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def prod_on(folder: Path, version: str, **changes: dict[str, Any]) -> Path:
    """Prod with its weights on EFS (object storage streams with 0.33.0 only, so prod itself cannot go back)."""
    return stack_file(folder, "prod-on-efs", vllm={"version": version}, **changes)


def upgrade_of(capsys: pytest.CaptureFixture[str], head: Path, base: Path, *flags: str) -> dict[str, Any]:
    main([str(head), "--json", "--against", str(base), *flags])
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def plan_of(path: Path) -> Any:
    cfg, _ = load_stack_file_with_secrets(path)
    return assess(cfg, stack="prod").plan


def test_moving_prod_to_the_new_release_lists_exactly_the_flags_its_table_lacks(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    base = prod_on(tmp_path, OLD)
    found = upgrade_of(capsys, STACKS / "examples" / "Pulumi.prod-on-efs.yaml", base)["upgrade"]["flags"]
    old_line = command_line(plan_of(base))
    expected = [flag for flag, _ in dict.fromkeys(flag_values(old_line)) if flag not in FLAG_TABLES[NEW].flags]
    assert [change["flag"] for change in found] == expected == ["--disable-log-requests"]


def test_a_flag_the_new_release_renamed_names_its_replacement_and_that_the_program_stops_rendering_it(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    change = upgrade_of(capsys, STACKS / "examples" / "Pulumi.prod-on-efs.yaml", prod_on(tmp_path, OLD))["upgrade"]["flags"][0]
    assert change["change"] == "renamed" and change["replacement"] == FLAG_TABLES[NEW].removed["--disable-log-requests"]
    assert change["still_rendered"] is False


def test_moving_prod_to_the_new_release_lists_exactly_the_queried_series_it_does_not_export(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    base = prod_on(tmp_path, OLD)
    found = upgrade_of(capsys, STACKS / "examples" / "Pulumi.prod-on-efs.yaml", base)["upgrade"]["metrics"]
    used = {
        **used_metrics(stack_manifests(plan_of(base))),
        **used_metrics(stack_manifests(plan_of(STACKS / "examples" / "Pulumi.prod-on-efs.yaml"))),
    }
    expected = [name for name in used if series_type(name, metrics_for(NEW).metrics) is None]
    assert [change["name"] for change in found] == expected
    assert {change["name"]: change["replacement"] for change in found} == {
        "vllm:gpu_cache_usage_perc": "vllm:kv_cache_usage_perc",
        "vllm:time_per_output_token_seconds_bucket": "vllm:inter_token_latency_seconds_bucket",
        "vllm:gpu_prefix_cache_hit_rate": "vllm:prefix_cache_hits_total / vllm:prefix_cache_queries_total",
    }


def test_a_renamed_series_names_the_consumers_that_read_it_and_that_the_rendered_queries_follow(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    found = upgrade_of(capsys, STACKS / "examples" / "Pulumi.prod-on-efs.yaml", prod_on(tmp_path, OLD))["upgrade"]["metrics"]
    kv = next(change for change in found if change["name"] == "vllm:gpu_cache_usage_perc")
    assert kv["consumers"] == ["KEDA", "alerts", "dashboard"] and kv["still_used"] is False


def test_moving_back_to_the_old_release_lists_the_new_series_with_no_old_counterpart(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    found = upgrade_of(capsys, prod_on(tmp_path, OLD), STACKS / "examples" / "Pulumi.prod-on-efs.yaml")["upgrade"]["metrics"]
    replacements = {change["name"]: change["replacement"] for change in found}
    assert (
        replacements["http_requests_total"] is None and replacements["vllm:kv_cache_usage_perc"] == "vllm:gpu_cache_usage_perc"
    )


def test_the_memory_verdict_is_recomputed_under_each_release_as_the_plain_preflight_gives_it(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    base = prod_on(tmp_path, OLD)
    sizing = upgrade_of(capsys, STACKS / "examples" / "Pulumi.prod-on-efs.yaml", base)["upgrade"]["sizing"]
    for row, path in zip(sizing, (base, STACKS / "examples" / "Pulumi.prod-on-efs.yaml"), strict=True):
        main([str(path), "--json"])
        alone = json.loads(capsys.readouterr().out)
        assert row["vllm_version"] == alone["engine"]["vllm_version"]
        assert (row["fits"], row["kv_cache_tokens"]) == (alone["verdict"]["fits"], alone["capacity"]["kv_cache_tokens"])
        assert row["max_concurrency_at_max_model_len"] == alone["capacity"]["max_concurrency_at_max_model_len"]


def test_a_release_under_which_the_stack_does_not_fit_shows_blocked_with_the_reason(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    long_context = {"max_model_len": 131072, "max_num_seqs": 256}
    head = prod_on(tmp_path, NEW, engine=long_context, gpu={"product": "A100-SXM4-40GB"})
    base = prod_on(tmp_path, OLD, engine=long_context, gpu={"product": "A100-SXM4-40GB"})
    main([str(head), "--against", str(base)])
    out = capsys.readouterr().out
    assert "under vLLM 0.7.2 (v0): BLOCKED: " in out


def test_the_text_report_ends_with_the_upgrade_section(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    main([str(STACKS / "examples" / "Pulumi.prod-on-efs.yaml"), "--against", str(prod_on(tmp_path, OLD))])
    out = capsys.readouterr().out
    assert "Upgrade: vLLM 0.7.2 -> 0.33.0 (vllm/vllm-openai:v0.7.2 -> vllm/vllm-openai:v0.33.0)" in out
    assert "    - --disable-log-requests: renamed by the new release; use --enable-log-requests" in out


def test_the_same_release_and_image_give_no_upgrade_section(capsys) -> None:  # type: ignore[no-untyped-def]
    prod = STACKS / "examples" / "Pulumi.prod-on-efs.yaml"
    assert upgrade_of(capsys, prod, prod)["upgrade"] is None
    main([str(prod), "--against", str(prod)])
    assert "Upgrade: none (the base runs the same release and image" in capsys.readouterr().out


def test_an_image_tag_change_alone_is_an_upgrade_with_that_builds_driver_floor(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    head = stack_file(tmp_path, "prod", vllm={"version": NEW, "tag": f"v{NEW}-cu129"})
    upgrade = upgrade_of(capsys, head, STACKS / "examples" / "Pulumi.prod-on-efs.yaml")["upgrade"]
    assert upgrade["flags"] == [] and upgrade["metrics"] == [] and upgrade["driver"] is None


def test_the_new_images_driver_floor_is_checked_against_the_cluster_snapshot(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    upgrade = upgrade_of(
        capsys,
        STACKS / "examples" / "Pulumi.prod-on-efs.yaml",
        prod_on(tmp_path, OLD),
        "--cluster",
        str(CLUSTERS / "onprem-gpu-operator-ceph.json"),
    )["upgrade"]
    assert upgrade["driver"]["min_driver_major"] == 580
    assert [(f["check"], f["level"]) for f in upgrade["driver_findings"]] == [("driver", "block")]


def test_without_a_snapshot_the_driver_floor_says_the_cluster_was_not_checked(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    main([str(STACKS / "examples" / "Pulumi.prod-on-efs.yaml"), "--against", str(prod_on(tmp_path, OLD))])
    assert "    - cluster: not checked (pass --cluster FILE)" in capsys.readouterr().out


def test_a_docker_stack_has_no_queries_to_lose(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    base = stack_file(tmp_path, "docker-8b", vllm={"version": OLD})
    upgrade = upgrade_of(capsys, STACKS / "Pulumi.docker-8b.yaml", base)["upgrade"]
    assert upgrade["from"]["vllm_version"] == OLD and upgrade["metrics"] == []


def test_a_flag_of_the_heads_own_line_the_new_release_removed_is_still_rendered() -> None:
    table = FLAG_TABLES[NEW]
    changes = flag_changes(["model", "--port", "8000"], ["model", "--swap-space", "4"], table)
    assert [(c.flag, c.change, c.still_rendered) for c in changes] == [("--swap-space", "rejected", True)]


def test_a_value_the_new_release_refuses_is_listed_with_the_values_it_accepts() -> None:
    table = FLAG_TABLES[NEW]
    changes = flag_changes(["model", "--dtype", "float64"], ["model", "--dtype", "auto"], table)
    assert [(c.flag, c.value, c.change, c.still_rendered) for c in changes] == [("--dtype", "float64", "value rejected", False)]
    assert changes[0].replacement == f"one of {', '.join(map(str, table.choices['--dtype']))}"


def test_a_missing_base_file_is_a_config_error_naming_the_flag_and_the_file(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    missing = tmp_path / "Pulumi.prod.yaml"
    assert main([str(STACKS / "examples" / "Pulumi.prod-on-efs.yaml"), "--against", str(missing)]) == 2
    assert f"--against {missing}: {missing}: no such file" in capsys.readouterr().err


def test_a_base_file_with_a_bad_key_is_a_config_error_naming_the_flag_the_file_and_the_key(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    base = prod_on(tmp_path, OLD, engine={"max_model_len": "long"})
    assert main([str(STACKS / "examples" / "Pulumi.prod-on-efs.yaml"), "--json", "--against", str(base)]) == 2
    errors = json.loads(capsys.readouterr().out)["config_errors"]
    assert errors and all(e.startswith(f"--against {base}: ") for e in errors) and "engine.max_model_len" in errors[0]


def test_the_upgrade_report_never_imports_pulumi(tmp_path) -> None:  # type: ignore[no-untyped-def]
    base = prod_on(tmp_path, OLD)
    assert not preflight_imports("pulumi", "stacks/Pulumi.prod.yaml", "--against", str(base))


UPGRADE_BLOCK = re.compile(r"<!-- docs-check: upgrade (\S+) (\S+) -->\n```text\n(.*?)```", re.DOTALL)


def test_the_upgrade_output_in_the_docs_is_what_the_command_prints(capsys) -> None:  # type: ignore[no-untyped-def]
    (head, base, block), *others = UPGRADE_BLOCK.findall((REPO / "docs" / "upgrading.md").read_text(encoding="utf-8"))
    main([str(REPO / head), "--against", str(REPO / base)])
    out = capsys.readouterr().out
    assert not others and block == out[out.index("Upgrade:") :]


def test_the_docs_cuda_13_release_and_driver_are_the_catalogs() -> None:
    text = (REPO / "docs" / "upgrading.md").read_text(encoding="utf-8")
    assert (
        f"from vLLM {CUDA13_DEFAULT_FROM} the image is a CUDA 13 build that needs NVIDIA driver {MIN_DRIVER_MAJOR[13]} or newer"
        in text
    )
    assert f"builds from vLLM {CUDA13_DEFAULT_FROM} and need driver {MIN_DRIVER_MAJOR[13]} or newer" in text


def test_the_markdown_report_ends_with_the_upgrade_as_nested_bullets(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    main([str(STACKS / "examples" / "Pulumi.prod-on-efs.yaml"), "--markdown", "--against", str(prod_on(tmp_path, OLD))])
    out = capsys.readouterr().out
    assert "\n- **Upgrade: vLLM 0.7.2 -> 0.33.0 (" in out and "\n  - Flags:\n    - --disable-log-requests: " in out
