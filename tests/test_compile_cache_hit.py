"""Compile caches on the volume count as hits after the first start: where vLLM's compile caches persist on the
replica's own volume (a per-replica claim, a single replica's ReadWriteOnce claim, the Docker host), a restart of
that replica compiles from them at the fitted share of a full compile; CUDA graphs are captured again; the first
start, a first-time ordinal and the startup probe count a full compile."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

import pytest

from catalog.startup_phases import FITTED
from preflight.delivery import DeliveryBudget, delivery_budget, image_pull
from tests.factories import make_config
from tests.kubernetes_fixtures import configured, plan_of

PER_REPLICA = {
    "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
    "replicas": 2,
    "server": {"image_pull_seconds": 42},
    "delivery": {"mode": "per_replica_volume"},
}
SHARED = {"delivery": {"mode": "shared_volume"}, "cache": {"storage_class_name": "efs-sc"}}


def budget_of(**changes: Any) -> DeliveryBudget:
    return plan_of(configured(**(PER_REPLICA | changes))[0]).delivery.budget


def test_a_per_replica_stacks_returning_ordinal_expects_the_hit() -> None:
    budget = budget_of()
    assert budget.compile_hit is not None and budget.compile_hit.used_for == "a returning ordinal"
    assert budget.restart_seconds == budget.compile_hit.start_seconds < budget.expected_start_seconds
    assert budget.new_replica_sum().startswith(f"{budget.restart_seconds} s expected for a returning ordinal")


def test_the_first_time_ordinal_misses() -> None:
    budget = budget_of()
    assert budget.new_node_seconds == budget.expected_start_seconds + 42 + budget.first_time_download_seconds


def test_the_first_start_keeps_the_full_compile() -> None:
    budget = budget_of()
    probe = budget.probe
    assert budget.terms[-1].seconds == probe.cuda_graph_seconds == budget.fixed.cuda_graph_seconds
    assert budget.expected_start_seconds == pytest.approx(
        probe.load_seconds + probe.engine_start_seconds + probe.cuda_graph_seconds, abs=1
    )


def test_a_shared_volume_never_hits() -> None:
    budget = budget_of(**SHARED)
    assert (budget.compile_hit, budget.restart_seconds) == (None, budget.expected_start_seconds)


def test_object_storage_never_hits() -> None:
    bucket = {"mode": "object_storage", "object_storage": {"uri": "s3://models/llama", "credentials_secret": "bucket-keys"}}
    budget = budget_of(delivery=bucket)
    assert budget.compile_hit is None


def test_a_single_replica_on_its_read_write_once_claim_expects_the_hit_on_any_node() -> None:
    budget = budget_of(replicas=1, delivery={"mode": "shared_volume"})
    assert budget.compile_hit is not None and "single replica" in budget.compile_hit.used_for
    assert budget.new_node_seconds == budget.restart_seconds + 42


def test_the_docker_hosts_restart_expects_the_hit() -> None:
    plan = plan_of(configured(target="docker")[0])
    hit = plan.delivery.budget.compile_hit
    assert hit is not None and hit.used_for == "a restart on the Docker host"


def test_the_probe_is_unchanged_by_the_hit() -> None:
    budget = budget_of()
    inputs: dict[str, Any] = {
        "mode": budget.mode,
        "throughput": budget.throughput,
        "weights_gib": budget.weights_gib,
        "downloads": True,
        "from_bucket": False,
        "download_gib_per_s": 0.1,
        "probes": plan_of(configured(**PER_REPLICA)[0]).delivery.probes,
        "fixed": budget.fixed,
        "group_init_seconds": 0,
        "image_pull": image_pull(42, "0.33.0", 50),
    }
    with_hit, without = (delivery_budget(**inputs, compile_cache_persists=p) for p in (True, False))
    assert with_hit.compile_hit is not None and without.compile_hit is None
    assert with_hit.probe == without.probe and with_hit.first_start_seconds == without.first_start_seconds


def test_a_hit_replaces_the_compile_and_captures_the_cuda_graphs_again() -> None:
    fixed = budget_of().fixed
    compiled, graphs = fixed.fitted["compile"], fixed.fitted["cuda_graphs"]
    assert fixed.cuda_graph_hit_seconds == pytest.approx(compiled * FITTED.compile_hit_fraction + graphs, abs=0.02)


def test_a_set_compile_term_stays_as_set() -> None:
    budget = budget_of(probes={"cuda_graph_capture_seconds": 60})
    assert (budget.fixed.cuda_graph_hit_seconds, budget.compile_hit) == (60.0, None)


def test_an_eager_engine_has_no_compile_to_hit() -> None:
    budget = budget_of(engine={"enforce_eager": True})
    assert budget.compile_hit is None


def test_a_set_startup_budget_has_no_hit() -> None:
    budget = budget_of(probes={"startup_seconds": 300})
    assert (budget.compile_hit, budget.restart_seconds) == (None, 300)


def test_the_json_names_the_start_that_used_the_hit() -> None:
    hit = asdict(budget_of())["compile_hit"]
    assert hit["used_for"] == "a returning ordinal" and hit["compile_seconds"] < budget_of().fixed.cuda_graph_seconds


def test_the_plan_decides_where_the_compile_caches_persist() -> None:
    delivery = plan_of(configured(**PER_REPLICA)[0]).delivery
    shared = plan_of(configured(**(PER_REPLICA | SHARED))[0]).delivery
    assert (delivery.compile_cache_persists, shared.compile_cache_persists) == (True, False)


def test_a_restart_that_finds_its_caches_skips_the_model_info_inspection_of_a_first_start() -> None:
    budget = plan_of(make_config()).delivery.budget
    assert budget.compile_hit is not None and budget.fixed.model_info_miss_seconds == FITTED.process_start_model_info_miss
    probe = budget.probe
    without = probe.load_seconds + probe.engine_start_seconds - FITTED.process_start_model_info_miss
    assert budget.compile_hit.start_seconds == math.ceil(without + budget.fixed.cuda_graph_hit_seconds)
