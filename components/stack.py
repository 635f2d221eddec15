"""The one place that maps the typed config onto components."""

from __future__ import annotations

from typing import Any

from components.secrets import StackSecrets
from config.stack import StackConfig
from preflight.report import PreflightReport


def build_stack(cfg: StackConfig, report: PreflightReport, secrets: StackSecrets) -> dict[str, Any]:
    """Register every resource for the stack; return the stack outputs."""
    raise NotImplementedError("wired in once the components land")
