"""The phase report on the real CPU server's start-up log (the Kubernetes render's command on vLLM's CPU build)."""

from __future__ import annotations

import pytest

from preflight.startup_phases import check_phases, parse_phases, render_phase_check
from tests.e2e import rendered
from tests.e2e.processes import Server

pytestmark = pytest.mark.e2e


def test_the_cpu_servers_log_gives_the_load_the_api_ready_and_the_whole_start(kubernetes_server: Server) -> None:
    logged = parse_phases(kubernetes_server.log.read_text(errors="replace"))
    assert logged.weight_load is not None and logged.api_ready is not None and logged.total is not None, (
        kubernetes_server.log_tail()
    )


def test_the_cpu_servers_phases_are_set_beside_the_rendered_budget(kubernetes_server: Server) -> None:
    _cfg, report = rendered.kubernetes_stack()
    assert report.startup is not None
    logged = parse_phases(kubernetes_server.log.read_text(errors="replace"))
    checks = {check.phase: check for check in check_phases(report.startup, logged)}
    assert checks["weight_load"].logged == logged.weight_load and checks["weight_load"].budget > 0
    assert "whole start (log): " in render_phase_check(report.startup, logged)
