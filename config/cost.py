"""`cost`: the price the report's monthly cost uses, when the catalog's on-demand table (catalog/prices.py) is not
the one you pay (a reserved or negotiated rate, another provider, on-premises)."""

from __future__ import annotations

import datetime

from pydantic import Field, PositiveFloat

from config.base import ConfigGroup


class CostConfig(ConfigGroup):
    """A price that wins over the catalog's table: per GPU-hour or per instance-hour, with its source and date."""

    usd_per_gpu_hour: PositiveFloat | None = Field(
        None, description="USD per GPU-hour; wins over the catalog's on-demand table (docs/cost.md)."
    )
    usd_per_instance_hour: PositiveFloat | None = Field(
        None,
        description="USD per hour of one node (gpu.gpus_per_node GPUs, else the catalog's node shape); "
        "instead of usd_per_gpu_hour.",
    )
    price_source: str | None = Field(
        None, max_length=200, description="Where the price comes from (a contract, a quote, a URL), for the report."
    )
    price_as_of: datetime.date | None = Field(
        None, description="The date of the price (YYYY-MM-DD); required with a price, so a stale one shows."
    )

    @property
    def price_key(self) -> str | None:
        """The price key that is set (at most one passes validation/cost.py), or None."""
        if self.usd_per_gpu_hour is not None:
            return "usd_per_gpu_hour"
        return "usd_per_instance_hour" if self.usd_per_instance_hour is not None else None
