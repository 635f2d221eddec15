"""A Hub behind an HTTP proxy or a mirror: every container that fetches from the Hub connects where its
NetworkPolicy lets it.

huggingface_hub opens its first hop where the container's environment says: the proxy of HTTPS_PROXY (its
client trusts the environment: huggingface_hub 2.4.0 utils/_http.py:341 default_client_factory builds an
httpx2.Client with trust_env left True, which reads HTTP(S)_PROXY, ALL_PROXY and NO_PROXY: httpx2 2.16.2
_utils.py:32 get_environment_proxies), else the host of HF_ENDPOINT (huggingface_hub constants.py:69), else
huggingface.co. A policy that admits only the proxy or the mirror (docs/security.md) leaves a container without
those variables nowhere to go, so `vllm.extra_env`'s Hub-access variables reach every fetching container.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest

from components.render.manifests import render_manifests
from tests.factories import make_config
from tests.kubernetes_fixtures import plan_of
from tests.reachability import Host, allowed
from tests.test_platform_flows import HUB, Stack, rendered

PROXY = Host("proxy.corp.example", "10.20.0.5")
MIRROR = Host("hub mirror", "10.20.3.3")
HOSTS = {"huggingface.co": HUB, "10.20.0.5": PROXY, "hf-mirror.corp.example": MIRROR}
BEHIND_PROXY: dict[str, Any] = {
    "vllm": {"extra_env": {"HTTPS_PROXY": "http://10.20.0.5:3128", "NO_PROXY": ".svc,.cluster.local"}},
    "network_policy": {"hub_egress_cidrs": ["10.20.0.5/32"], "hub_egress_ports": [3128]},
}
BEHIND_MIRROR: dict[str, Any] = {
    "vllm": {"extra_env": {"HF_ENDPOINT": "https://hf-mirror.corp.example"}},
    "network_policy": {"hub_egress_cidrs": [], "private_endpoint_cidrs": ["10.20.0.0/16"]},  # no internet
}
COPY: dict[str, Any] = {
    "model": {"revision": "0e9e39f249a16976918f6564b8830bc894c89659"},
    "delivery": {
        "mode": "object_storage",
        "object_storage": {"uri": "s3://models/llama/", "copy_from_hub": True, "credentials_secret": "bucket-keys"},
    },
}
PER_REPLICA: dict[str, Any] = {"replicas": 2, "delivery": {"mode": "per_replica_volume"}}
SHA = "0123456789abcdef0123456789abcdef01234567"
ADAPTERS: dict[str, Any] = {
    "delivery": {
        "mode": "object_storage",
        "object_storage": {"uri": "s3://models/llama/", "credentials_secret": "bucket-keys"},
    },
    "lora": {"adapters": [{"name": "sql", "id": "org/sql-lora", "revision": SHA, "rank": 16, "target_modules": ["q_proj"]}]},
}


def first_hop(env: dict[str, str]) -> tuple[Host, int]:
    """Where huggingface_hub connects first with this environment: the proxy, else the endpoint."""
    url = env.get("HTTPS_PROXY") or env.get("https_proxy") or env.get("HF_ENDPOINT") or "https://huggingface.co"
    parts = urlsplit(url)
    return HOSTS[parts.hostname or ""], parts.port or (80 if parts.scheme == "http" else 443)


def fetching_containers(objects: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(component, container) for each container that runs a Hub fetch: the download, copy and adapter scripts."""
    found = []
    for obj in objects:
        template = obj.get("spec", {}).get("template")
        if template is None:
            continue
        component = template["metadata"]["labels"]["app.kubernetes.io/component"]
        for container in [*template["spec"].get("initContainers", []), *template["spec"]["containers"]]:
            if container["name"] in ("download", "copy", "lora-adapters"):
                found.append((component, container))
    return found


def env_of(container: dict[str, Any]) -> dict[str, str]:
    return {item["name"]: item["value"] for item in container["env"] if "value" in item}


def stack(**groups: Any) -> tuple[Stack, list[tuple[str, dict[str, Any]]]]:
    cfg = make_config(**groups)
    return rendered(cfg), fetching_containers(render_manifests(plan_of(cfg)))


def assert_every_fetch_reaches_its_first_hop(setting: dict[str, Any], feature: dict[str, Any]) -> None:
    policies, containers = stack(**setting, **feature)
    assert containers
    for component, container in containers:
        host, port = first_hop(env_of(container))
        assert allowed(policies.policies, policies.pod(component, container["name"]), host, port), container["name"]


@pytest.mark.parametrize("feature", [{}, COPY, PER_REPLICA, ADAPTERS], ids=["download", "copy", "per-replica", "adapters"])
def test_behind_a_proxy_every_fetching_container_connects_where_its_policy_lets_it(feature: dict[str, Any]) -> None:
    assert_every_fetch_reaches_its_first_hop(BEHIND_PROXY, feature)


@pytest.mark.parametrize("feature", [{}, COPY, PER_REPLICA], ids=["download", "copy", "per-replica"])
def test_a_hub_mirror_behind_a_private_endpoint_is_where_every_fetch_goes(feature: dict[str, Any]) -> None:
    assert_every_fetch_reaches_its_first_hop(BEHIND_MIRROR, feature)


def test_the_proxys_exceptions_reach_the_download_with_the_proxy() -> None:
    _, [(_, container)] = stack(**BEHIND_PROXY)
    assert env_of(container)["NO_PROXY"] == ".svc,.cluster.local"


def test_other_extra_env_stays_on_the_server() -> None:
    _, [(_, container)] = stack(vllm={"extra_env": {"VLLM_RPC_TIMEOUT": "100000"}})
    assert "VLLM_RPC_TIMEOUT" not in env_of(container)
