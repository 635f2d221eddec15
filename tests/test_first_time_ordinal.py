"""A replica added beyond the ordinals that ran before, on per-replica claims of a network class: its claim is
empty, so it downloads the weights before it loads; a returning ordinal's retained claim holds them. The report's
"New replica" row and the not-ready alerts' window follow the first-time case."""

from __future__ import annotations

import math
from typing import Any

from components.render.alerts import not_ready_window
from plan.delivery import POD_START_SECONDS
from preflight.text import table_text
from tests.kubernetes_fixtures import configured, plan_of

PER_REPLICA = {
    "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
    "replicas": 2,
    "server": {"image_pull_seconds": 42},
    "delivery": {"mode": "per_replica_volume"},
}


def per_replica(**changes: Any) -> Any:
    return plan_of(configured(**(PER_REPLICA | changes))[0]).delivery


def test_a_first_time_ordinal_downloads_at_the_budget_s_download_throughput() -> None:
    budget = per_replica().budget
    assert budget.first_time_download_seconds == round(budget.weights_gib / 0.1) > 0  # cache default 0.1 GiB/s


def test_a_per_replica_new_replica_row_names_the_returning_and_the_first_time_ordinal() -> None:
    budget = per_replica().budget
    warm, first, download = budget.restart_seconds, budget.expected_start_seconds, budget.first_time_download_seconds
    hit, full, info = budget.fixed.cuda_graph_hit_seconds, budget.fixed.cuda_graph_seconds, budget.fixed.model_info_miss_seconds
    assert budget.new_replica_sum() == (
        f"{warm} s expected for a returning ordinal on a node with the image (its retained claim holds the weights, "
        f"whenScaled: Retain; a returning ordinal compiles from the compile cache on its volume: {hit:.0f} s compile "
        f"+ CUDA graphs, {full:.0f} s on a first start, and skips the {info:.0f} s model-info inspection; the startup "
        f"probe allows {budget.probe.total_seconds} s), "
        f"{first + 42 + download} s for a first-time ordinal on a new node ({first} s start compiling in full + 42 s "
        f"image pull + {download} s download to its empty claim)"
    )


def test_a_shared_volume_adds_no_download_to_a_new_replica() -> None:
    delivery = per_replica(delivery={"mode": "shared_volume"}, cache={"storage_class_name": "efs-sc"})
    assert (delivery.mode, delivery.budget.first_time_download_seconds) == ("shared_volume", 0)
    assert delivery.budget.new_replica_sum().endswith("on a new node (+ 42 s image pull)")


def test_the_new_replica_seconds_wait_out_a_first_time_ordinal_s_download() -> None:
    delivery = per_replica()
    refetch = math.ceil(delivery.budget.first_time_download_seconds * delivery.budget.probe.safety_factor)
    assert delivery.new_replica_seconds == 42 + refetch + delivery.budget.probe.total_seconds + POD_START_SECONDS


def test_the_not_ready_alert_window_follows_the_first_time_ordinal() -> None:
    plan = plan_of(configured(**PER_REPLICA)[0])
    rollout = plan.monitoring.limits.rollout_seconds
    assert rollout == plan.delivery.new_replica_seconds
    assert not_ready_window("15m", rollout) == f"{math.ceil((rollout + 300) / 60)}m"


def test_the_text_report_s_new_replica_row_says_the_first_time_ordinal_downloads() -> None:
    assert "download to its empty claim" in table_text(configured(**PER_REPLICA)[1])
