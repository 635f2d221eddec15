"""A stack's own price (the `cost` group): one price, with the date it was quoted."""

from __future__ import annotations

from config.errors import ConfigIssue
from config.stack import StackConfig


def cross_checks(cfg: StackConfig) -> list[ConfigIssue]:
    cost = cfg.cost
    if cost.usd_per_gpu_hour is not None and cost.usd_per_instance_hour is not None:
        return [
            ConfigIssue(
                "cost.usd_per_instance_hour",
                f"({cost.usd_per_instance_hour}) is set together with cost.usd_per_gpu_hour "
                f"({cost.usd_per_gpu_hour}); the report would not know which one you pay.",
                "keep one of the two.",
            )
        ]
    key = cost.price_key
    if key is None:
        extra = [name for name in ("price_source", "price_as_of") if getattr(cost, name) is not None]
        return [
            ConfigIssue(
                f"cost.{name}",
                "is set but no price is: it describes cost.usd_per_gpu_hour or cost.usd_per_instance_hour.",
                f"set one of them, or remove cost.{name}.",
            )
            for name in extra
        ]
    if cost.price_as_of is None:
        return [
            ConfigIssue(
                f"cost.{key}",
                f"({getattr(cost, key)}) has no date: a price without one goes stale unseen.",
                "set cost.price_as_of to the date of the quote, e.g. 2026-12-01.",
            )
        ]
    return []
