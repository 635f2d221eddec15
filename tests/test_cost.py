"""The price table (catalog/prices.py), the stack's own price (the `cost` group) and the monthly cost (plan/cost.py)."""

from __future__ import annotations

import datetime
import json
import re

import pytest

from catalog.gpus import GPUS
from catalog.instances import INSTANCE_TYPES, MACHINE_TYPES, InstanceType, MachineType
from catalog.prices import PRICES, gpu_hour_price, instances_of
from cli.preflight import main
from config.errors import ConfigError
from config.stack import StackConfig
from plan.cost import HOURS_PER_MONTH, CostPlan, cost_rows
from plan.frontier import resolve_frontier
from plan.sizing import sizing_inputs
from tests.factories import STACKS, make_config, shipped_stack
from tests.kubernetes_fixtures import plan_of, stack_with

QUOTE = {"price_as_of": "2026-11-30", "price_source": "our reserved rate"}


def prod_on(profile: str) -> StackConfig:
    return stack_with("prod", cluster={"profile": profile})[0]


def prod_cost_on(profile: str) -> CostPlan:
    return plan_of(prod_on(profile)).cost


def test_every_priced_instance_is_one_of_the_instance_catalog_with_its_gpu_count() -> None:
    instances: tuple[InstanceType | MachineType, ...] = (*INSTANCE_TYPES, *MACHINE_TYPES)
    known = {instance.name: instance for instance in instances}
    assert [row.instance for row in PRICES if row.instance not in known or not known[row.instance].gpu_count] == []


def test_every_priced_machine_is_of_the_rows_provider() -> None:
    provider = {machine.name: machine.provider for machine in MACHINE_TYPES} | {i.name: "aws" for i in INSTANCE_TYPES}
    assert [row.instance for row in PRICES if provider[row.instance] != row.provider] == []


def test_every_priced_instance_carries_a_catalog_gpu_product() -> None:
    linked = {instance.name for product in GPUS for instance in instances_of(product)}
    assert [row.instance for row in PRICES if row.instance not in linked] == []


def test_every_price_row_has_a_source_url_and_an_iso_date() -> None:
    for row in PRICES:
        assert row.source.startswith("https://") and datetime.date.fromisoformat(row.as_of)


def test_a_product_is_linked_to_the_aws_instances_with_its_karpenter_gpu_name_and_memory() -> None:
    assert [i.name for i in instances_of("A100-SXM4-80GB") if isinstance(i, InstanceType)] == ["p4de.24xlarge"]


def test_a_product_is_linked_to_the_gce_machines_with_its_gke_accelerator() -> None:
    gce = [i.name for i in instances_of("A100-SXM4-40GB") if not isinstance(i, InstanceType) and i.provider == "gcp"]
    assert gce == ["a2-highgpu-1g", "a2-highgpu-2g", "a2-highgpu-4g", "a2-highgpu-8g"]


def test_a_product_is_linked_to_the_azure_sizes_its_instance_type_labels_name() -> None:
    azure = [i.name for i in instances_of("A100-80GB-PCIe") if not isinstance(i, InstanceType)]
    assert azure == ["Standard_NC24ads_A100_v4"]


def test_a_product_without_karpenter_labels_has_no_instance() -> None:
    assert instances_of("H100-NVL") == ()


def test_the_price_per_gpu_hour_is_the_instance_price_over_its_gpus() -> None:
    price = gpu_hour_price("A100-SXM4-80GB", 4, "generic")
    assert price is not None and price.usd_per_gpu_hour == pytest.approx(27.44705 / 8)


def test_an_instance_with_fewer_gpus_than_a_pod_needs_does_not_price_it() -> None:
    eight = gpu_hour_price("H100-80GB-HBM3", 8, "generic")  # p5.4xlarge has one H100
    assert eight is not None and eight.row.instance == "p5.48xlarge"


def test_a_gke_cluster_is_priced_with_gcp_rows_only() -> None:
    price = gpu_hour_price("A100-SXM4-80GB", 4, "gke")
    assert price is not None and price.row.provider == "gcp"


def test_an_aks_cluster_is_priced_with_azure_rows_only() -> None:
    price = gpu_hour_price("A100-SXM4-80GB", 4, "aks")
    assert price is not None and (price.row.instance, price.row.provider) == ("Standard_ND96amsr_A100_v4", "azure")


def test_a_gce_row_is_its_machine_and_its_gpus_summed_and_says_so() -> None:
    (row,) = [row for row in PRICES if row.instance == "a2-highgpu-1g"]
    assert row.usd_per_hour == pytest.approx(0.73948 + 2.93391) and "billed apart and summed" in row.source


def test_a_product_without_a_row_on_the_profiles_provider_has_no_price() -> None:
    assert gpu_hour_price("H200", 8, "aks") is None  # Standard_ND96isr_H200_v5 is not in the Azure source


def test_prod_on_gke_costs_its_gpus_at_the_a2_ultragpu_price_with_the_source() -> None:
    rows = dict(cost_rows(prod_cost_on("gke")))
    assert "a2-ultragpu" in rows["Price"] and "GCP us-east5 on-demand" in rows["Price"] and "skypilot-catalog" in rows["Price"]
    per_gpu_month = (8.79698 + 35.39358) / 8 * HOURS_PER_MONTH
    assert rows["Cost, min replicas"].endswith(f"= {8 * per_gpu_month:,.0f} USD/month")
    assert rows["Cost, max replicas"].endswith(f"= {16 * per_gpu_month:,.0f} USD/month")


def test_prod_on_aks_costs_its_gpus_at_the_nd96amsr_price_with_the_source() -> None:
    rows = dict(cost_rows(prod_cost_on("aks")))
    assert "Standard_ND96amsr_A100_v4" in rows["Price"] and "AZURE eastus on-demand" in rows["Price"]
    assert rows["Cost, max replicas"].endswith(f"= {16 * 32.77 / 8 * HOURS_PER_MONTH:,.0f} USD/month")


@pytest.mark.parametrize(("profile", "provider"), [("gke", "gcp"), ("aks", "azure")])
def test_the_frontier_on_gke_and_aks_prices_layouts_with_that_providers_rows(profile: str, provider: str) -> None:
    cfg = prod_on(profile)
    frontier = resolve_frontier(sizing_inputs(cfg), plan_of(cfg).cost)
    providers = {row.instance: row.provider for row in PRICES}
    priced = [layout.instance for layout in frontier.layouts if layout.instance is not None]
    assert priced and {providers[instance] for instance in priced} == {provider}


def test_the_frontier_on_gke_names_a_gcp_layout_the_cheapest_that_meets_the_target() -> None:
    cfg = prod_on("gke")
    cheapest = resolve_frontier(sizing_inputs(cfg), plan_of(cfg).cost).cheapest
    assert cheapest is not None and cheapest.instance in {row.instance for row in PRICES if row.provider == "gcp"}


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
