"""The router's alerts under `promtool test rules`, with synthetic vllm_router_* series.

The rule file is the router's PrometheusRule as the stack renders it (components/render/router.py); the labels
and annotations a firing alert must carry are read from the rendered rule itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from components.render.manifests import stack_manifests
from tests.factories import make_config
from tests.kubernetes_fixtures import plan_of
from tests.promtool import check_rules, expected_alert, run_promtool, write_yaml

MONITORED: dict[str, Any] = {
    "routing": {"enabled": True},
    "replicas": 2,
    "monitoring": {"enabled": True, "release": "monitoring", "alerts": True},
}


def router_groups(**changes: Any) -> list[dict[str, Any]]:
    objects = stack_manifests(plan_of(make_config(**{**MONITORED, **changes})))
    (rule,) = [o for o in objects if o["kind"] == "PrometheusRule" and o["metadata"]["name"].endswith("-router")]
    groups: list[dict[str, Any]] = rule["spec"]["groups"]
    return groups


def series_labels() -> str:
    groups = router_groups()
    expr = next(r for r in groups[0]["rules"] if r["alert"] == "VllmRouterRequestErrors")["expr"]
    return expr[expr.index("{") + 1 : expr.index("}")]


def promtool_test(tmp_path: Path, requests: str, errors: str, fired: bool, eval_time: str = "20m") -> None:
    groups = router_groups()
    write_yaml(tmp_path / "rules.yaml", {"groups": groups})
    rule = next(r for r in groups[0]["rules"] if r["alert"] == "VllmRouterRequestErrors")
    labels = series_labels()
    test = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    {"series": f"vllm_router_requests_total{{{labels}}}", "values": requests},
                    {"series": f"vllm_router_request_errors_total{{{labels}}}", "values": errors},
                ],
                "alert_rule_test": [
                    {
                        "eval_time": eval_time,
                        "alertname": "VllmRouterRequestErrors",
                        "exp_alerts": [_without_value(expected_alert(rule, {}))] if fired else [],
                    }
                ],
            }
        ],
    }
    result = run_promtool("test", "rules", write_yaml(tmp_path / "test.yaml", test))
    assert result.returncode == 0, result.stdout + result.stderr


def _without_value(alert: dict[str, Any]) -> dict[str, Any]:
    """The summary carries the firing ratio ($value): the test states it for 60 errors in 600 requests."""
    annotations = dict(alert["exp_annotations"])
    annotations["summary"] = annotations["summary"].replace("{{ $value | humanizePercentage }}", "10%")
    return {**alert, "exp_annotations": annotations}


def test_the_router_rules_pass_promtool_check(tmp_path: Path) -> None:
    result = check_rules(write_yaml(tmp_path / "rules.yaml", {"groups": router_groups()}))
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_router_error_alert_fires_when_a_tenth_of_the_requests_fail(tmp_path: Path) -> None:
    promtool_test(tmp_path, requests="0+600x30", errors="0+60x30", fired=True)


def test_the_router_error_alert_stays_quiet_at_one_percent(tmp_path: Path) -> None:
    promtool_test(tmp_path, requests="0+600x30", errors="0+6x30", fired=False)


def test_the_router_error_alert_stays_quiet_without_traffic(tmp_path: Path) -> None:
    promtool_test(tmp_path, requests="0x30", errors="0x30", fired=False)


def test_the_router_error_alert_waits_five_minutes(tmp_path: Path) -> None:
    promtool_test(tmp_path, requests="0x10 0+600x20", errors="0x10 0+60x20", fired=False, eval_time="14m")
