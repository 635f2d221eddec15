"""hf_xet's download buffer, range gets and chunk cache on every container fetching from the Hub, from its memory.

The figures are xet-core's own derivation table (hf_xet 1.8.0 sdist xet_runtime/src/utils/system_memory.rs,
test_standard_derivation_table); docs/sources.md §S13.
"""

from __future__ import annotations

from typing import Any

import pytest

from components.render.manifests import render_manifests
from plan.cache import xet_download_env
from plan.names import HF_HOME
from tests.factories import make_config
from tests.kubernetes_fixtures import plan_of
from tests.test_hub_access_env import ADAPTERS, COPY, PER_REPLICA, env_of, fetching_containers

BUFFERS = (
    "HF_XET_RECONSTRUCTION_DOWNLOAD_BUFFER_SIZE",
    "HF_XET_RECONSTRUCTION_DOWNLOAD_BUFFER_PERFILE_SIZE",
    "HF_XET_RECONSTRUCTION_DOWNLOAD_BUFFER_LIMIT",
)


@pytest.mark.parametrize(
    ("usable", "expected"),
    [
        (268_435_456, (64_000_000, 16_000_000, 264_000_000)),
        (2_000_000_000, (120_000_000, 24_000_000, 496_000_000)),
        (8_000_000_000, (496_000_000, 120_000_000, 2_000_000_000)),
        (32_000_000_000, (2_000_000_000, 496_000_000, 8_000_000_000)),
        (2_000_000_000_000, (16_000_000_000, 2_000_000_000, 64_000_000_000)),
    ],
)
def test_the_buffers_are_what_hf_xet_derives_from_the_same_memory_limit(usable: int, expected: tuple[int, ...]) -> None:
    env = xet_download_env(usable / 2**30)
    assert tuple(int(env[name]) for name in BUFFERS) == expected


def test_the_download_jobs_4_gib_hold_at_most_a_quarter_of_it_in_buffers_for_eight_files() -> None:
    env = xet_download_env(4.0)
    size, perfile, limit = (int(env[name]) for name in BUFFERS)
    assert (size, perfile, limit) == (264_000_000, 64_000_000, 1_072_000_000)
    assert size + 8 * perfile <= limit <= 4 * 2**30 / 4  # hf_xet 1.4.3-1.6.0's defaults: 2 GB + 8 x 512 MB


def test_older_hf_xets_range_gets_fit_the_same_buffer_limit() -> None:
    assert xet_download_env(4.0)["HF_XET_NUM_CONCURRENT_RANGE_GETS"] == "15"  # 1.072 GB / 64 MiB


def test_range_gets_are_never_raised_above_hf_xets_default_of_48() -> None:
    assert xet_download_env(512.0)["HF_XET_NUM_CONCURRENT_RANGE_GETS"] == "48"


@pytest.mark.parametrize("feature", [{}, COPY, PER_REPLICA, ADAPTERS], ids=["download", "copy", "per-replica", "adapters"])
def test_every_fetching_container_bounds_hf_xet_by_its_own_memory_limit(feature: dict[str, Any]) -> None:
    containers = fetching_containers(render_manifests(plan_of(make_config(cache={"download_memory_gib": 8}, **feature))))
    assert containers
    for _, container in containers:
        assert container["resources"]["limits"]["memory"] == "8Gi", container["name"]
        assert env_of(container).items() >= xet_download_env(8.0).items(), container["name"]


def test_the_adapters_fetch_keeps_the_chunk_cache_off_its_small_volume() -> None:
    [(_, container)] = fetching_containers(render_manifests(plan_of(make_config(**ADAPTERS))))
    env = env_of(container)
    assert env["HF_XET_CHUNK_CACHE_SIZE_BYTES"] == "0" and not env["HF_XET_CACHE"].startswith(HF_HOME)
