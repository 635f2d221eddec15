"""A real Prometheus (Debian's package) that scrapes the server as the rendered ServiceMonitor would, with
the rendered PrometheusRule groups loaded, and a small client for its HTTP API."""

from __future__ import annotations

import json
import shutil
import urllib.parse
from pathlib import Path
from typing import Any

import yaml

from tests.e2e.processes import Server, get
from tests.e2e.rendered import SCRAPE_PORT_NAME, Monitoring

# Faster than the rendered ServiceMonitor interval, so the tier sees several scrapes in seconds, not minutes.
SCRAPE_INTERVAL = "5s"
POD_SUFFIX = "7d9f8b6c5-e2e0a"  # <replicaset hash>-<id>: the shape Workload.pod_regex matches


def target_labels(monitoring: Monitoring) -> dict[str, str]:
    """What a ServiceMonitor scrape adds to every series: namespace, service, pod, container, job (the Service
    name unless spec.jobLabel is set) and endpoint (the endpoint's port name), as the operator's relabelling
    writes them (prometheus-operator pkg/prometheus/promcfg.go@002266347d12f6ee0ef0b4a774dfcc613d2d9547,
    the ServiceMonitor relabel_configs: "Relabel namespace and pod and service labels", "job", "endpoint")."""
    workload = monitoring.workload
    return {
        "namespace": workload.namespace,
        "service": monitoring.service,
        "job": monitoring.service,
        "pod": f"{workload.deployment_name}-{POD_SUFFIX}",
        "container": "vllm",
        "endpoint": SCRAPE_PORT_NAME,
    }


def write_config(directory: Path, monitoring: Monitoring, target: str) -> Path:
    rules = directory / "rules.yaml"
    rules.write_text(yaml.safe_dump({"groups": monitoring.rule_groups}, sort_keys=False))
    labels = target_labels(monitoring)
    config = {
        "global": {"scrape_interval": SCRAPE_INTERVAL, "evaluation_interval": SCRAPE_INTERVAL},
        "rule_files": [str(rules)],
        "scrape_configs": [
            {
                "job_name": "servicemonitor",
                "metrics_path": "/metrics",
                "static_configs": [{"targets": [target], "labels": {k: v for k, v in labels.items() if k != "job"}}],
                # A static config names the job after job_name; the operator's relabelling sets it to the Service.
                "relabel_configs": [{"target_label": "job", "replacement": labels["job"]}],
            }
        ],
    }
    path = directory / "prometheus.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def prometheus_argv(config: Path, data: Path, port: int, core: int) -> list[str]:
    binary = shutil.which("prometheus") or "prometheus"
    return [
        "taskset",
        "-c",
        str(core),
        binary,
        f"--config.file={config}",
        f"--storage.tsdb.path={data}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--log.level=warn",
    ]


def api(server: Server, path: str, **params: str) -> Any:
    query = urllib.parse.urlencode(params)
    status, body = get(f"{server.base_url}{path}?{query}", timeout=20)
    assert status == 200, f"Prometheus {path} {params}: {status} {body[:500]!r}"
    answer = json.loads(body)
    assert answer["status"] == "success", answer
    return answer["data"]


def instant(server: Server, query: str) -> list[dict[str, Any]]:
    data = api(server, "/api/v1/query", query=query)
    assert data["resultType"] == "vector", data
    return list(data["result"])


def rules(server: Server) -> list[dict[str, Any]]:
    return [rule for group in api(server, "/api/v1/rules")["groups"] for rule in group["rules"]]
