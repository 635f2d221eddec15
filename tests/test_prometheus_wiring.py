"""Where the program meets Prometheus: labels its Prometheus must select, and the address KEDA queries."""

from __future__ import annotations

from typing import Any

from config.stack import StackConfig
from plan.monitoring import PrometheusWiring, kube_prometheus_stack_fullname
from tests.factories import make_config
from tests.kubernetes_fixtures import plan_of
from tests.program import run_main

SELECTOR = {
    "app.kubernetes.io/name": "vllm",
    "app.kubernetes.io/instance": "vllm-test",
    "app.kubernetes.io/component": "server",
}


def wiring_of(cfg: StackConfig) -> PrometheusWiring:
    return plan_of(cfg, "vllm-test").monitoring.wiring


def wiring(**changes: Any) -> PrometheusWiring:
    return wiring_of(make_config(**changes))


def server_address(cfg: StackConfig) -> str | None:
    return wiring_of(cfg).server_address


def test_release_monitoring_gives_the_charts_usual_service() -> None:
    assert kube_prometheus_stack_fullname("monitoring") == "monitoring-kube-prometheus"


def test_a_release_containing_the_chart_name_is_the_fullname() -> None:
    assert kube_prometheus_stack_fullname("kube-prometheus-stack") == "kube-prometheus-stack"


def test_a_long_release_is_cut_to_26_characters() -> None:
    assert kube_prometheus_stack_fullname("observability-prod") == "observability-prod-kube-pr"


def test_a_cut_that_ends_in_a_dash_drops_it() -> None:
    assert kube_prometheus_stack_fullname("prom-prod") == "prom-prod-kube-prometheus"


def test_default_address_is_the_monitoring_releases_prometheus() -> None:
    assert server_address(make_config()) == "http://monitoring-kube-prometheus-prometheus.monitoring.svc:9090"


def test_address_follows_the_release_and_its_namespace() -> None:
    cfg = make_config(monitoring={"release": "prom", "prometheus_namespace": "observability"})
    assert server_address(cfg) == "http://prom-kube-prometheus-stack-prometheus.observability.svc:9090"


def test_a_named_prometheus_service_and_port_win_over_the_release() -> None:
    cfg = make_config(monitoring={"prometheus_service": "prometheus-operated", "prometheus_port": 9091})
    assert server_address(cfg) == "http://prometheus-operated.monitoring.svc:9091"


def test_an_explicit_server_address_wins() -> None:
    cfg = make_config(autoscaling={"server_address": "https://prom.example/api/prom"})
    assert server_address(cfg) == "https://prom.example/api/prom"


def test_no_address_without_a_release_or_service() -> None:
    assert server_address(make_config(monitoring={"release": None})) is None


def test_default_labels_carry_the_release_on_monitor_and_rule() -> None:
    found = wiring()
    assert (found.monitor_labels, found.rule_labels) == ({**SELECTOR, "release": "monitoring"},) * 2


def test_labels_follow_another_release_name() -> None:
    assert wiring(monitoring={"release": "kps"}).monitor_labels == {**SELECTOR, "release": "kps"}


def test_monitor_labels_replace_the_release_label() -> None:
    found = wiring(monitoring={"monitor_labels": {"prometheus": "main"}})
    assert (found.monitor_labels, found.rule_labels) == ({**SELECTOR, "prometheus": "main"},) * 2


def test_rule_labels_can_differ_from_monitor_labels() -> None:
    found = wiring(monitoring={"monitor_labels": {"prometheus": "main"}, "rule_labels": {"role": "alert-rules"}})
    assert found.rule_labels == {**SELECTOR, "role": "alert-rules"}


def test_no_release_and_no_labels_leaves_only_the_workload_labels() -> None:
    assert wiring(monitoring={"release": None}).monitor_labels == SELECTOR


def test_wiring_names_the_monitor_kind_and_the_address() -> None:
    found = wiring(monitoring={"monitor_kind": "PodMonitor"})
    assert (found.monitor_kind, found.server_address) == (
        "PodMonitor",
        "http://monitoring-kube-prometheus-prometheus.monitoring.svc:9090",
    )


def test_the_program_registers_exactly_the_wiring_labels_and_address() -> None:
    config = {
        "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
        "gpu": {"product": "A100-SXM4-80GB"},
        "engine": {"max_model_len": 8192},
        "replicas": 2,
        "autoscaling": {"enabled": True, "min_replica_count": 2},
        "monitoring": {"release": "kps", "prometheus_namespace": "observability", "rule_labels": {"role": "alert-rules"}},
    }
    registered, error = run_main(config)
    assert error is None
    found = wiring(**config)
    assert registered.one("kubernetes:monitoring.coreos.com/v1:ServiceMonitor")["metadata"]["labels"] == (found.monitor_labels)
    assert registered.one("kubernetes:monitoring.coreos.com/v1:PrometheusRule")["metadata"]["labels"] == (found.rule_labels)
    triggers = registered.one("kubernetes:keda.sh/v1alpha1:ScaledObject")["spec"]["triggers"]
    assert {t["metadata"]["serverAddress"] for t in triggers} == {
        "http://kps-kube-prometheus-stack-prometheus.observability.svc:9090"
    }
