"""docs/cost.md's tables are what the code computes: the price table, prod's monthly cost and prod's frontier."""

from __future__ import annotations

import re

import pytest

from catalog.gpus import GPUS
from catalog.prices import PRICES, instances_of
from plan.cost import HOURS_PER_MONTH
from plan.frontier import Frontier, resolve_frontier
from plan.sizing import sizing_inputs
from tests.factories import REPO, shipped_stack
from tests.kubernetes_fixtures import plan_of, stack_with

PAGE = REPO / "docs" / "cost.md"


def documented(marker: str) -> list[str]:
    """The table rows after `<!-- cost-check: MARKER -->`, header and rule left out."""
    text = PAGE.read_text(encoding="utf-8").split(f"<!-- cost-check: {marker} -->\n", 1)[1].split("\n\n", 1)[0]
    return text.strip().splitlines()[2:]


def prod_frontier() -> Frontier:
    cfg = shipped_stack("prod")
    return resolve_frontier(sizing_inputs(cfg), plan_of(cfg).cost)


def price_rows() -> list[str]:
    product = {instance.name: name for name in GPUS for instance in instances_of(name)}
    gpus = {instance.name: instance.gpu_count for name in GPUS for instance in instances_of(name)}
    return [
        f"| {row.provider} | `{row.instance}` | {product[row.instance]} | {gpus[row.instance]} | {row.usd_per_hour} | "
        f"{row.usd_per_hour / (gpus[row.instance] or 1):.2f} | {row.region} | {row.as_of} |"
        for row in PRICES
    ]


def prod_cost_rows() -> list[str]:
    cost = plan_of(shipped_stack("prod")).cost
    return [
        f"| {part.replicas} | {part.gpus} | {part.gpu_hours_per_month:,.0f} | {part.usd_per_month:,.0f} |"
        for part in (cost.min_replicas, cost.max_replicas)
        if part.usd_per_month is not None
    ]


def profile_rows() -> list[str]:
    rows = []
    for profile in ("eks-karpenter", "gke", "aks"):
        cost = plan_of(stack_with("prod", cluster={"profile": profile})[0]).cost
        price, fewest, most = cost.price, cost.min_replicas.usd_per_month, cost.max_replicas.usd_per_month
        assert price is not None and fewest is not None and most is not None
        rows.append(f"| `{profile}` | `{price.instance}` | {price.usd_per_gpu_hour:.2f} | {fewest:,.0f} | {most:,.0f} |")
    return rows


def frontier_rows() -> list[str]:
    def cell(value: bool) -> str:
        return "yes" if value else "no"

    rows = []
    for x in prod_frontier().layouts:
        if x.usd_per_replica_month is None:
            continue
        why = "" if x.meets_target else (x.reason or "").split(";")[0].split(":")[0].split(" but ")[0]
        rows.append(
            f"| {x.name}{' (prod)' if x.own else ''} | {cell(x.starts)} | {cell(x.meets_target)} | {x.kv_cache_tokens:,} | "
            f"{x.max_concurrency_at_max_model_len:.2f} | {x.usd_per_replica_month:,.0f} | {why} |"
        )
    return rows


TABLES = (("prices", price_rows), ("prod", prod_cost_rows), ("profiles", profile_rows), ("frontier", frontier_rows))


@pytest.mark.parametrize(("marker", "rows"), TABLES)
def test_the_documented_table_is_what_the_code_computes(marker: str, rows: object) -> None:
    assert documented(marker) == rows()  # type: ignore[operator]


def test_the_documented_month_is_the_one_the_cost_uses() -> None:
    assert re.search(rf"\b{HOURS_PER_MONTH} hours\b", PAGE.read_text(encoding="utf-8"))


def test_the_documented_layout_count_and_l40s_shortfall_are_prods() -> None:
    frontier = prod_frontier()
    text = PAGE.read_text(encoding="utf-8")
    (l40s,) = [x for x in frontier.layouts if x.name == "L40S x 4"]
    assert f"({len(frontier.layouts)} for prod)" in text
    fit = re.search(r"About (\d+) such requests fit", l40s.reason or "")
    assert fit and f"hold\nabout {fit[1]} of the 256 requests" in text


if __name__ == "__main__":  # print the tables to paste into docs/cost.md
    for name, make in TABLES:
        print(name, *make(), sep="\n")
