"""The preflight's report of a stack: its parts (SizingInputs) and its delivery's startup figures, sized once."""

from __future__ import annotations

from config.stack import StackConfig
from preflight import SizingInputs, run_preflight
from preflight.delivery import DeliveryBudget, delivery_budget, page_cache_warnings
from preflight.report import PreflightReport


def sizing_inputs(cfg: StackConfig) -> SizingInputs:
    return SizingInputs(
        target=cfg.target,
        model=cfg.model,
        gpu=cfg.gpu,
        engine=cfg.engine,
        vllm=cfg.vllm,
        preflight=cfg.preflight,
        cache=cfg.cache,
        delivery=cfg.delivery,
        rwx_storage_class=cfg.cluster.defaults.rwx_storage_class,
        served_model_name=cfg.served_model_name,
    )


def resolve_sizing(cfg: StackConfig) -> PreflightReport:
    """GPU memory, KV capacity, the verdict and the startup budget of a parsed stack. Raises ConfigError when the
    model cannot be sized (an unreadable model.config_json)."""

    def startup(weights_on_disk_gib: float) -> tuple[DeliveryBudget, list[str]]:
        return delivery_budget(cfg, weights_on_disk_gib), page_cache_warnings(cfg, weights_on_disk_gib)

    return run_preflight(sizing_inputs(cfg), startup)
