"""Monitoring on real series: Prometheus scrapes the real server with the ServiceMonitor's labels, loads the
rendered PrometheusRule groups, and every rendered KEDA query is polled under a burst of requests."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pytest

from components.render.keda import TRIGGER_SCALE
from tests.e2e import prometheus
from tests.e2e.processes import Server, chat, get
from tests.e2e.rendered import MAX_NUM_SEQS, Monitoring
from tests.promql_lint import metric_names

CLIENTS = 6 * MAX_NUM_SEQS  # more requests at once than batch slots, so some wait
TOKENS_PER_REQUEST = 64
BURST_S = 30
POLL_EVERY_S = 2.5
FIRST_SCRAPE_S = 60
RULES_EVALUATED_S = 40

pytestmark = pytest.mark.e2e


@dataclass
class Burst:
    polls: list[dict[str, list[dict[str, Any]]]] = field(default_factory=list)  # per poll: query -> samples
    statuses: list[int] = field(default_factory=list)
    ended_at: float = 0.0


def _client(server: Server, model: str, api_key: str, stop: threading.Event, burst: Burst) -> None:
    while not stop.is_set():
        burst.statuses.append(chat(server.base_url, model, api_key, max_tokens=TOKENS_PER_REQUEST, timeout=90)[0])


def _wait_for_first_scrape(prom: Server, monitoring: Monitoring) -> None:
    deadline, up = time.monotonic() + FIRST_SCRAPE_S, "up" + f'{{job="{monitoring.service}"}}'
    scraped: list[dict[str, Any]] = []
    queue: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        scraped = prometheus.instant(prom, up)
        queue = prometheus.instant(prom, monitoring.keda_queries["queue"])
        if scraped and scraped[0]["value"][1] == "1" and queue:
            return
        time.sleep(1)
    raise AssertionError(
        f"within {FIRST_SCRAPE_S} s: {up} = {scraped}, and the KEDA queue query "
        f"{monitoring.keda_queries['queue']} = {queue}\n{prom.log_tail()}"
    )


@pytest.fixture(scope="module")
def burst(kubernetes_server: Server, prometheus_server: Server, monitoring: Monitoring, api_key: str) -> Iterator[Burst]:
    _wait_for_first_scrape(prometheus_server, monitoring)
    result, stop = Burst(), threading.Event()
    model = kubernetes_server.extra["launch"].served_model_name
    with ThreadPoolExecutor(CLIENTS) as pool:
        for _ in range(CLIENTS):
            pool.submit(_client, kubernetes_server, model, api_key, stop, result)
        try:
            end = time.monotonic() + BURST_S
            while time.monotonic() < end:
                result.polls.append(
                    {name: prometheus.instant(prometheus_server, query) for name, query in monitoring.keda_queries.items()}
                )
                time.sleep(POLL_EVERY_S)
        finally:
            stop.set()
    result.ended_at = time.time()
    yield result


def _values(burst: Burst, trigger: str) -> list[float]:
    return [float(poll[trigger][0]["value"][1]) for poll in burst.polls if len(poll[trigger]) == 1]


def test_burst_requests_all_succeed(burst: Burst) -> None:
    assert burst.statuses and set(burst.statuses) == {200}, sorted(set(burst.statuses))


def test_every_keda_query_returns_exactly_one_sample_on_every_poll(burst: Burst, monitoring: Monitoring) -> None:
    counts = {name: [len(poll[name]) for poll in burst.polls] for name in monitoring.keda_queries}
    assert len(burst.polls) >= 5 and all(set(c) == {1} for c in counts.values()), counts


def test_queue_trigger_sees_the_queue_during_the_burst(burst: Burst) -> None:
    assert max(_values(burst, "queue")) > 0, _values(burst, "queue")


def test_running_trigger_sees_at_most_max_num_seqs(burst: Burst) -> None:
    running = _values(burst, "running")
    assert 0 < max(running) <= MAX_NUM_SEQS, running


def test_kv_cache_trigger_of_the_one_server_stays_between_zero_and_a_thousand_thousandths(burst: Burst) -> None:
    values = _values(burst, "kv_cache")
    assert values and all(0 <= value <= TRIGGER_SCALE["kv_cache"] for value in values), values


def _evaluated_rules(prom: Server, after: float) -> list[dict[str, Any]]:
    """The loaded rules, once every one has been evaluated after `after` (unix time)."""
    deadline = time.monotonic() + RULES_EVALUATED_S
    while True:
        rules = prometheus.rules(prom)
        stamps = [rule.get("lastEvaluation", "") for rule in rules]
        if all(_unix(stamp) > after for stamp in stamps) or time.monotonic() > deadline:
            return rules
        time.sleep(1)


def _unix(stamp: str) -> float:
    """Prometheus' RFC 3339 time with nanoseconds (Go's time.Time) in unix seconds; 0 when never evaluated."""
    match = re.match(r"^(.*T\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$", stamp)
    if not match:
        return 0.0
    zone = "+00:00" if match.group(3) == "Z" else match.group(3)
    return datetime.fromisoformat(match.group(1) + (match.group(2) or "")[:7] + zone).timestamp()


def test_every_rendered_rule_is_loaded_and_evaluates_without_error(
    burst: Burst, prometheus_server: Server, monitoring: Monitoring
) -> None:
    rules = _evaluated_rules(prometheus_server, burst.ended_at)
    rendered = [rule["alert"] for group in monitoring.rule_groups for rule in group["rules"]]
    assert sorted(rule["name"] for rule in rules) == sorted(rendered)
    problems = {
        rule["name"]: (rule["health"], rule.get("lastError", ""), rule.get("lastEvaluation"))
        for rule in rules
        if rule["health"] != "ok" or rule.get("lastError")
    }
    assert not problems, problems


def test_series_carry_the_servicemonitor_labels_and_the_served_model_name(
    prometheus_server: Server, monitoring: Monitoring, burst: Burst
) -> None:
    series = prometheus.instant(prometheus_server, "vllm:num_requests_running")
    labels = prometheus.target_labels(monitoring) | {"model_name": monitoring.workload.model_name}
    assert len(series) == 1 and labels.items() <= series[0]["metric"].items(), series


def _used_vllm_metrics(monitoring: Monitoring) -> set[str]:
    exprs = [rule["expr"] for group in monitoring.rule_groups for rule in group["rules"]]
    exprs += [*monitoring.keda_queries.values(), *monitoring.dashboard_queries]
    return {name for expr in exprs for name in metric_names(expr) if name.startswith("vllm:")}


def _exposed(server: Server) -> set[str]:
    status, body = get(server.base_url + "/metrics")
    assert status == 200
    lines = body.decode().splitlines()
    return {line.split("{")[0].split(" ")[0] for line in lines if line and not line.startswith("#")}


def test_every_vllm_metric_the_rules_keda_and_dashboard_use_exists_on_the_server(
    kubernetes_server: Server, monitoring: Monitoring, burst: Burst
) -> None:
    used = _used_vllm_metrics(monitoring)
    assert used and not used - _exposed(kubernetes_server), sorted(used - _exposed(kubernetes_server))
