"""Every vLLM release with a generated table is deployable, and the command line is checked against it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from catalog.vllm_flags import _COMMON, FLAG_TABLES
from catalog.vllm_images import OFFICIAL_IMAGE, driver_floor, image_cuda_major
from catalog.vllm_metrics import VLLM_0_7_2, VLLM_0_33_0, metrics_for, renamed_signal
from catalog.vllm_releases import DATA_DIR, available_versions, release_table, version_key
from catalog.vllm_versions import RELEASES, MemoryEra, era_of, memory_era
from config.errors import ConfigError
from tests.factories import make_config
from tests.kubernetes_fixtures import plan_of
from validation.vllm import check_rendered_args

VERSIONS = available_versions()
# Every minor release from 0.6 to the newest on PyPI when the tables were generated (pip index versions vllm).
MINORS = [f"0.{minor}" for minor in range(6, 34)]
# Flags the hand reading of the 0.7.2 and 0.33.0 wheels found (docs/sources.md §A).
HAND_READ = {
    "0.7.2": _COMMON
    | {
        "--disable-log-requests",
        "--speculative-model",
        "--num-speculative-tokens",
        "--ngram-prompt-lookup-max",
        "--ngram-prompt-lookup-min",
        "--speculative-draft-tensor-parallel-size",
    },
    "0.33.0": _COMMON | {"--attention-backend", "--speculative-config"},
}


def test_every_minor_release_from_0_6_to_0_33_has_a_table() -> None:
    assert {".".join(v.split(".")[:2]) for v in VERSIONS} >= set(MINORS)


@pytest.mark.parametrize("version", VERSIONS)
def test_each_table_names_its_wheel_and_sha256(version: str) -> None:
    data = json.loads((DATA_DIR / f"{version}.json").read_text())
    assert data["version"] == version and data["wheel"].startswith(f"vllm-{version}-")
    assert len(data["sha256"]) == 64 and int(data["sha256"], 16) >= 0


@pytest.mark.parametrize("version", VERSIONS)
def test_each_release_accepts_every_flag_the_program_renders_for_all_releases(version: str) -> None:
    assert _COMMON - {"--no-enable-prefix-caching"} <= release_table(version).flags


@pytest.mark.parametrize("version", ["0.7.2", "0.33.0"])
def test_the_generated_flags_contain_every_flag_the_hand_reading_found(version: str) -> None:
    assert HAND_READ[version] <= FLAG_TABLES[version].flags


@pytest.mark.parametrize(("version", "hand"), [("0.7.2", VLLM_0_7_2), ("0.33.0", VLLM_0_33_0)])
def test_the_generated_metrics_contain_every_hand_read_vllm_metric(version: str, hand: dict[str, Any]) -> None:
    generated = release_table(version).metrics
    assert {name: kind.value for name, kind in hand.items() if name.startswith("vllm:")}.items() <= generated.items()


@pytest.mark.parametrize("version", VERSIONS)
def test_each_release_era_from_its_code_matches_the_era_by_number(version: str) -> None:
    assert era_of(release_table(version)) is memory_era(RELEASES[version].number)


@pytest.mark.parametrize(
    ("version", "era"),
    [
        ("0.6.4", MemoryEra.V0_LEGACY),
        ("0.6.5", MemoryEra.V0),
        ("0.7.3", MemoryEra.V0),
        ("0.8.0", MemoryEra.V1_EARLY),
        ("0.16.0", MemoryEra.V1_EARLY),
        ("0.17.0", MemoryEra.V1),
        ("0.19.1", MemoryEra.V1),
        ("0.20.0", MemoryEra.V1_CUDAGRAPH),
        ("0.33.0", MemoryEra.V1_CUDAGRAPH),
    ],
)
def test_the_eras_switch_where_the_code_switches(version: str, era: MemoryEra) -> None:
    assert RELEASES[version].era is era


def test_the_cuda_graph_estimate_default_is_cited_in_envs_py() -> None:
    memory = release_table("0.20.0").memory
    assert memory["cudagraph_estimate_default"] and memory["cudagraph_estimate_source"].startswith("vllm/envs.py:")


@pytest.mark.parametrize("version", ["0.6.0", "0.8.5", "0.10.2", "0.11.0", "0.19.1", "0.29.0"])
def test_vllm_version_accepts_a_generated_release_and_renders_a_command_it_accepts(version: str) -> None:
    cfg = make_config(vllm={"version": version}, gpu={"product": "H100-80GB-HBM3"})
    args = plan_of(cfg).server.args
    assert {a for a in args if a.startswith("--")} <= FLAG_TABLES[version].flags


def test_a_flag_the_release_lacks_is_a_config_error_naming_its_key() -> None:
    issues = check_rendered_args(["m", "--max-num-seqs", "8", "--speculative-config", "{}"], FLAG_TABLES["0.7.2"])
    assert [(i.key, i.message) for i in issues] == [
        ("engine.speculative", "renders --speculative-config, which vLLM 0.7.2 does not accept (`unrecognized arguments`).")
    ]


def test_a_value_outside_the_release_choices_is_a_config_error() -> None:
    issues = check_rendered_args(["m", "--kv-cache-dtype", "fp8_inc"], FLAG_TABLES["0.7.2"])
    assert [i.key for i in issues] == ["engine.kv_cache_dtype"]


def test_the_image_tag_and_version_must_agree() -> None:
    with pytest.raises(ConfigError) as caught:
        make_config(vllm={"version": "0.33.0", "tag": "v0.11.0"})
    assert caught.value.issues[0].key == "vllm.tag"
    assert "tag 'v0.11.0' is vLLM 0.11.0 but vllm.version is 0.33.0" in caught.value.issues[0].message


def test_a_tag_alone_sets_the_version() -> None:
    cfg = make_config(vllm={"tag": "v0.11.0"})
    assert (cfg.vllm.version, cfg.vllm.image_ref) == ("0.11.0", "vllm/vllm-openai:v0.11.0")


def test_a_custom_tag_without_a_release_number_is_left_to_the_version() -> None:
    assert make_config(vllm={"version": "0.19.1", "tag": "my-build"}).vllm.image_ref == "vllm/vllm-openai:my-build"


def test_the_tag_defaults_to_the_version_including_post_releases() -> None:
    assert make_config(vllm={"version": "0.6.6.post1"}).vllm.image_ref == "vllm/vllm-openai:v0.6.6.post1"


def test_metrics_of_a_generated_release_pick_the_v1_names() -> None:
    metrics = metrics_for("0.19.1")
    assert (metrics.kv_cache_usage, metrics.prefix_cache_hits) == ("vllm:kv_cache_usage_perc", "vllm:prefix_cache_hits_total")


def test_releases_sort_as_pypi_does() -> None:
    assert sorted(["0.10.1.1", "0.9.2", "0.10.1", "0.6.6.post1", "0.6.6"], key=version_key) == [
        "0.6.6",
        "0.6.6.post1",
        "0.9.2",
        "0.10.1",
        "0.10.1.1",
    ]


def test_an_older_release_runs_the_whole_program_with_its_image_and_flags() -> None:
    from tests.program import run_main

    registered, error = run_main(
        {
            "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
            "engine": {"max_model_len": 8192},
            "gpu": {"product": "H100-80GB-HBM3"},
            "vllm": {"tag": "v0.11.0"},
            "security": {"require_api_key": False},
        }
    )
    assert error is None
    container = registered.one("kubernetes:apps/v1:Deployment")["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "vllm/vllm-openai:v0.11.0"
    assert {a for a in container["args"] if a.startswith("--")} <= FLAG_TABLES["0.11.0"].flags


@pytest.mark.parametrize(
    ("tag", "version", "cuda"),
    [
        ("v0.19.1", "0.19.1", 12),  # before the switch the unsuffixed tag is the CUDA 12.9 build
        ("v0.19.1-cu130", "0.19.1", 13),
        ("v0.20.0", "0.20.0", 13),  # vllm-project/vllm#39878: CUDA 13 unsuffixed from 0.20.0
        ("v0.33.0-ubuntu2404", "0.33.0", 13),
        ("v0.33.0-cu129", "0.33.0", 12),
        ("my-build", "0.33.0", None),
    ],
)
def test_the_cuda_build_of_an_official_tag_follows_the_cuda_13_switch(tag: str, version: str, cuda: int | None) -> None:
    assert image_cuda_major(OFFICIAL_IMAGE, tag, version) == cuda


def test_a_custom_image_has_no_known_cuda_build() -> None:
    assert image_cuda_major("registry.example.com/vllm", "v0.33.0", "0.33.0") is None


def test_only_a_cuda_13_build_has_a_driver_floor() -> None:
    floor = driver_floor(OFFICIAL_IMAGE, "v0.20.0", "0.20.0")
    assert floor is not None and (floor.cuda_major, floor.min_driver_major) == (13, 580)
    assert driver_floor(OFFICIAL_IMAGE, "v0.19.1", "0.19.1") is None


def test_a_renamed_signal_maps_to_the_new_releases_name_with_the_histogram_suffix_kept() -> None:
    old, new = metrics_for("0.7.2"), metrics_for("0.33.0")
    assert renamed_signal("vllm:time_per_output_token_seconds_bucket", old, new) == "vllm:inter_token_latency_seconds_bucket"
    assert renamed_signal("vllm:gpu_cache_usage_perc", old, new) == "vllm:kv_cache_usage_perc"


def test_the_v0_prefix_cache_gauge_maps_to_the_v1_pair_of_counters() -> None:
    old, new = metrics_for("0.7.2"), metrics_for("0.33.0")
    assert (
        renamed_signal("vllm:gpu_prefix_cache_hit_rate", old, new)
        == "vllm:prefix_cache_hits_total / vllm:prefix_cache_queries_total"
    )


def test_a_series_that_is_no_renamed_signal_has_no_replacement() -> None:
    assert renamed_signal("vllm:num_requests_swapped", metrics_for("0.7.2"), metrics_for("0.33.0")) is None
