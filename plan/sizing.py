"""The preflight's report of a stack: its parts (SizingInputs) and its delivery's startup figures, sized once."""

from __future__ import annotations

from config.stack import StackConfig
from preflight import SizingInputs, run_preflight
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
        lora=cfg.lora,
    )


def resolve_sizing(cfg: StackConfig) -> PreflightReport:
    """GPU memory, KV capacity and the memory verdict of a parsed stack (plan/__init__.py adds the delivery's
    startup figures). Raises ConfigError when the model cannot be sized (an unreadable model.config_json)."""
    return run_preflight(sizing_inputs(cfg))
