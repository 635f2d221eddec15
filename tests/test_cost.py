"""The price table (catalog/prices.py), the stack's own price (the `cost` group) and the monthly cost (plan/cost.py)."""

from __future__ import annotations

import datetime
import json
import re

import pytest

from catalog.gpus import GPUS
from catalog.instances import INSTANCE_TYPES
from catalog.prices import PRICES, gpu_hour_price, instances_of
from cli.preflight import main
from config.errors import ConfigError
from plan.cost import HOURS_PER_MONTH, cost_rows
from tests.factories import STACKS, make_config, shipped_stack
from tests.kubernetes_fixtures import plan_of

QUOTE = {"price_as_of": "2026-11-30", "price_source": "our reserved rate"}


def test_every_priced_instance_is_one_of_the_instance_catalog_with_its_gpu_count() -> None:
    known = {instance.name: instance for instance in INSTANCE_TYPES}
    assert [row.instance for row in PRICES if row.instance not in known or not known[row.instance].gpu_count] == []


def test_every_priced_instance_carries_a_catalog_gpu_product() -> None:
    linked = {instance.name for product in GPUS for instance in instances_of(product)}
    assert [row.instance for row in PRICES if row.instance not in linked] == []


def test_every_price_row_has_a_source_url_and_an_iso_date() -> None:
    for row in PRICES:
        assert row.source.startswith("https://") and datetime.date.fromisoformat(row.as_of)


def test_a_product_is_linked_to_the_instances_with_its_karpenter_gpu_name_and_memory() -> None:
    assert [i.name for i in instances_of("A100-SXM4-80GB")] == ["p4de.24xlarge"]


def test_a_product_without_karpenter_labels_has_no_instance() -> None:
    assert instances_of("H100-NVL") == ()


def test_the_price_per_gpu_hour_is_the_instance_price_over_its_gpus() -> None:
    price = gpu_hour_price("A100-SXM4-80GB", 4, "generic")
    assert price is not None and price.usd_per_gpu_hour == pytest.approx(27.44705 / 8)


def test_an_instance_with_fewer_gpus_than_a_pod_needs_does_not_price_it() -> None:
    eight = gpu_hour_price("H100-80GB-HBM3", 8, "generic")  # p5.4xlarge has one H100
    assert eight is not None and eight.row.instance == "p5.48xlarge"


def test_a_gke_cluster_is_not_priced_with_aws_rows() -> None:
    assert gpu_hour_price("A100-SXM4-80GB", 4, "gke") is None


def test_prod_costs_two_and_four_replicas_of_four_a100_80gb_a_month() -> None:
    cost = plan_of(shipped_stack("prod")).cost
    per_gpu_month = 27.44705 / 8 * HOURS_PER_MONTH
    assert (cost.min_replicas.gpus, cost.max_replicas.gpus) == (8, 16)
    assert cost.min_replicas.usd_per_month == pytest.approx(8 * per_gpu_month)
    assert cost.max_replicas.usd_per_month == pytest.approx(16 * per_gpu_month)


def test_gpu_hours_a_month_are_gpus_times_730_hours() -> None:
    cost = plan_of(shipped_stack("prod")).cost
    assert HOURS_PER_MONTH == 730 and cost.max_replicas.gpu_hours_per_month == 16 * 730


def test_without_autoscaling_the_fewest_and_the_most_replicas_are_the_replica_count() -> None:
    cost = plan_of(make_config(replicas=3)).cost
    assert cost.min_replicas == cost.max_replicas and cost.min_replicas.replicas == 3


def test_a_multi_node_replica_counts_the_gpus_of_all_its_nodes() -> None:
    spanning = plan_of(
        make_config(
            model={"id": "meta-llama/Llama-3.1-405B-Instruct"},
            engine={"tensor_parallel_size": 8, "pipeline_parallel_size": 2, "nnodes": 2},
            cache={"access_mode": "ReadWriteMany", "storage_class_name": "efs-sc"},
            delivery={"mode": "shared_volume"},
        )
    ).cost
    assert (spanning.min_replicas.gpus, spanning.min_replicas.nodes) == (16, 2)


def test_a_stack_price_per_gpu_hour_wins_over_the_table() -> None:
    cost = plan_of(make_config(cost={"usd_per_gpu_hour": 2.0, **QUOTE})).cost
    assert cost.price is not None and cost.price.unit == "gpu" and cost.price.source == "our reserved rate"
    assert cost.min_replicas.usd_per_month == pytest.approx(2.0 * HOURS_PER_MONTH)


def test_a_stack_price_per_instance_hour_is_shared_by_the_gpus_of_a_node() -> None:
    cost = plan_of(make_config(gpu={"gpus_per_node": 4}, cost={"usd_per_instance_hour": 8.0, **QUOTE})).cost
    assert cost.min_replicas.usd_per_month == pytest.approx(8.0 / 4 * HOURS_PER_MONTH)


def test_a_product_without_a_price_has_no_monthly_cost() -> None:
    cost = plan_of(make_config(gpu={"product": "H100-NVL"})).cost
    assert cost.price is None and cost.min_replicas.usd_per_month is None


def test_two_prices_are_refused_naming_the_instance_key() -> None:
    with pytest.raises(ConfigError) as error:
        make_config(cost={"usd_per_gpu_hour": 2.0, "usd_per_instance_hour": 16.0, **QUOTE})
    assert [issue.key for issue in error.value.issues] == ["cost.usd_per_instance_hour"]


def test_a_price_without_a_date_is_refused_naming_the_price_key() -> None:
    with pytest.raises(ConfigError) as error:
        make_config(cost={"usd_per_gpu_hour": 2.0})
    assert [issue.key for issue in error.value.issues] == ["cost.usd_per_gpu_hour"]
    assert "cost.price_as_of" in error.value.issues[0].fix


def test_a_price_source_without_a_price_is_refused() -> None:
    with pytest.raises(ConfigError) as error:
        make_config(cost={"price_source": "a quote"})
    assert [issue.key for issue in error.value.issues] == ["cost.price_source"]


def test_a_negative_price_is_refused_naming_the_key() -> None:
    with pytest.raises(ConfigError) as error:
        make_config(cost={"usd_per_gpu_hour": -1, **QUOTE})
    assert [issue.key for issue in error.value.issues] == ["cost.usd_per_gpu_hour"]


def test_the_json_cost_has_the_price_and_both_replica_bounds_in_the_agreed_shape(capsys: pytest.CaptureFixture[str]) -> None:
    main([str(STACKS / "Pulumi.prod.yaml"), "--json"])
    cost = json.loads(capsys.readouterr().out)["cost"]
    assert set(cost) == {"price", "min_replicas", "max_replicas"}
    assert set(cost["price"]) == {"usd_per_hour", "unit", "instance", "source", "as_of"}
    bound = {"replicas", "gpus", "gpu_hours_per_month", "usd_per_month"}
    assert set(cost["min_replicas"]) == set(cost["max_replicas"]) == bound
    price, fewest = cost["price"], cost["min_replicas"]
    assert (price["instance"], price["unit"], fewest["replicas"]) == ("p4de.24xlarge", "instance", 2)


def test_the_text_report_names_the_price_source_and_the_cost_at_both_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    main([str(STACKS / "Pulumi.prod.yaml")])
    out = capsys.readouterr().out
    assert "skypilot-catalog" in out
    assert re.search(r"Cost, min replicas +2 replicas", out) and re.search(r"Cost, max replicas +4 replicas", out)


def test_the_markdown_report_has_the_cost_rows(capsys: pytest.CaptureFixture[str]) -> None:
    main([str(STACKS / "Pulumi.prod.yaml"), "--markdown"])
    assert "| Cost, max replicas | 4 replicas x 4 GPUs = 16 GPUs" in capsys.readouterr().out


def test_a_stack_without_a_price_says_how_to_set_one() -> None:
    rows = dict(cost_rows(plan_of(make_config(gpu={"product": "H100-NVL"})).cost))
    assert "set cost.usd_per_gpu_hour" in rows["Price"] and rows["Cost"].endswith("no price")
