"""The capacity frontier (plan/frontier.py): every catalog GPU x parallelism for the stack's model, priced."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from cli.preflight import main
from config.stack import StackConfig
from plan.frontier import Frontier, Layout, frontier_summary, resolve_frontier
from plan.sizing import sizing_inputs
from preflight.evaluate import evaluate
from preflight.suggest import apply_changes
from tests.factories import STACKS, make_config, shipped_stack
from tests.kubernetes_fixtures import plan_of


def frontier_of(cfg: StackConfig) -> Frontier:
    return resolve_frontier(sizing_inputs(cfg), plan_of(cfg).cost)


def prod_frontier() -> Frontier:
    return frontier_of(shipped_stack("prod"))


def layout(frontier: Frontier, gpu: str, gpus: int, nnodes: int = 1) -> Layout:
    (found,) = [x for x in frontier.layouts if (x.gpu, x.gpus, x.nnodes) == (gpu, gpus, nnodes)]
    return found


# Issue 25's done-when: Llama-3.1-70B-Instruct at 8k context (prod).
@pytest.mark.parametrize(("gpu", "gpus"), [("A100-SXM4-80GB", 4), ("H100-80GB-HBM3", 4), ("H200", 2)])
def test_the_prod_frontier_lists_the_layout_meeting_the_target_with_its_cost(gpu: str, gpus: int) -> None:
    found = layout(prod_frontier(), gpu, gpus)
    assert found.meets_target and found.usd_per_replica_month is not None


def test_two_h100_do_not_start_prod_and_the_frontier_says_one_8k_request_does_not_fit() -> None:
    found = layout(prod_frontier(), "H100-80GB-HBM3", 2)
    assert not found.starts and (found.reason or "").startswith("one request of engine.max_model_len 8192 tokens")


def test_four_l40s_start_prod_but_miss_its_concurrency_target_and_say_so() -> None:
    found = layout(prod_frontier(), "L40S", 4)
    assert found.starts and not found.meets_target and (found.reason or "").startswith("concurrency target")


def test_a_layout_has_the_kv_capacity_the_preflight_computes_for_that_gpu_and_size() -> None:
    stack = sizing_inputs(shipped_stack("prod"))
    changes = {"gpu": {"product": "H200", "count": None}, "engine": {"tensor_parallel_size": 2}}
    expected = evaluate(apply_changes(stack, changes)).capacity.kv_cache_tokens
    assert layout(prod_frontier(), "H200", 2).kv_cache_tokens == expected


def test_the_layouts_that_start_and_have_a_price_come_first_cheapest_first() -> None:
    layouts = prod_frontier().layouts
    priced = [x.usd_per_replica_month for x in layouts if x.starts and x.usd_per_replica_month is not None]
    assert [x.usd_per_replica_month for x in layouts[: len(priced)]] == sorted(priced)


def test_the_stack_own_layout_is_listed_once() -> None:
    assert [x.name for x in prod_frontier().layouts if x.own] == ["A100-SXM4-80GB x 4"]


def test_the_cheapest_layout_meeting_the_target_is_named_with_its_distance_from_the_stack() -> None:
    engine = {"tensor_parallel_size": 4, "max_model_len": 8192, "max_num_seqs": 256}
    cfg = make_config(model={"id": "meta-llama/Llama-3.1-70B-Instruct"}, gpu={"product": "H100-80GB-HBM3"}, engine=engine)
    frontier = frontier_of(cfg)
    cheapest = frontier.cheapest
    assert cheapest is not None
    own, base = layout(frontier, "H100-80GB-HBM3", 4).usd_per_replica_month, cheapest.usd_per_replica_month
    assert cheapest and cheapest.name == "A100-SXM4-80GB x 4" and own is not None and base is not None
    assert frontier.own_over_cheapest == pytest.approx(own - base)


def test_a_gpu_with_no_single_node_layout_gets_the_fewest_nodes_that_start() -> None:
    cfg = make_config(model={"id": "meta-llama/Llama-3.1-405B-Instruct"}, engine={"tensor_parallel_size": 8})
    frontier = frontier_of(cfg)
    spanning = [x for x in frontier.layouts if x.gpu == "A100-SXM4-80GB" and x.nnodes > 1]
    assert [(x.nnodes, x.starts) for x in spanning] == [(2, True)]


def test_the_stack_own_price_prices_its_own_layout_in_the_frontier() -> None:
    cfg = make_config(cost={"usd_per_gpu_hour": 1.0, "price_as_of": "2026-11-30"})
    assert frontier_of(cfg).own.usd_per_replica_month == pytest.approx(730.0)


def test_the_json_report_carries_the_frontier_with_the_cheapest_layout(capsys: pytest.CaptureFixture[str]) -> None:
    main([str(STACKS / "Pulumi.prod.yaml"), "--json"])
    frontier = json.loads(capsys.readouterr().out)["frontier"]
    assert frontier["cheapest_meeting_target"]["gpu"] == "A100-SXM4-80GB" and frontier["own_over_cheapest_usd_per_month"] == 0.0


def test_frontier_lists_every_layout_in_the_text_report(capsys: pytest.CaptureFixture[str]) -> None:
    main([str(STACKS / "Pulumi.prod.yaml"), "--frontier"])
    out = capsys.readouterr().out
    assert "Cheapest layout" in out and "  H100-80GB-HBM3 x 2: 10,045 USD/month, does not start: one request" in out


def test_without_frontier_or_json_the_report_has_no_frontier(capsys: pytest.CaptureFixture[str]) -> None:
    main([str(STACKS / "Pulumi.prod.yaml")])
    assert "Cheapest layout" not in capsys.readouterr().out


def test_a_frontier_without_a_priced_layout_says_none_has_a_price_on_the_profile() -> None:
    frontier = frontier_of(make_config(cluster={"profile": "aks"}))
    unpriced = replace(frontier, layouts=tuple(replace(x, usd_per_replica_month=None) for x in frontier.layouts))
    rows = dict(frontier_summary(unpriced))
    assert rows["Cheapest layout"] == "no catalog layout has a price on cluster.profile aks (catalog/prices.py)"
