"""Where the bucket's store listens: `delivery.object_storage.endpoint_url` read once for the network flows.

The Hub rule (network_policy.hub_egress_cidrs on hub_egress_ports, cluster-internal ranges carved out) admits
huggingface.co and the clouds' public storage and token endpoints on 443. It admits neither an S3-compatible
store on another port nor one inside the cluster, so plan/flows.py opens the store this names (docs/security.md).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_PORTS = {"https": 443, "http": 80}

# What says where a Hub client connects: a mirror (huggingface_hub 2.4.0 constants.py:69 ENDPOINT) and the proxy
# variables its HTTP client reads (utils/_http.py:341 builds an httpx2.Client that trusts the environment: httpx2
# 2.16.2 _utils.py:32 get_environment_proxies, through urllib's getproxies, either case); boto3's botocore also
# takes its proxies from the environment (boto/botocore botocore/endpoint.py@03717ee432fc02ec1c10db2e501ae4b781ea1cd8
# EndpointCreator._get_proxies).
HUB_ACCESS_VARIABLES = frozenset(
    {"HF_ENDPOINT"} | {case(f"{name}_PROXY") for name in ("HTTPS", "HTTP", "ALL", "NO") for case in (str.upper, str.lower)}
)


def hub_access_env(extra_env: dict[str, str]) -> dict[str, str]:
    """The Hub-access variables of vllm.extra_env, which every container fetching from the Hub or writing the bucket
    gets too: a policy that admits only the proxy or the mirror (network_policy.hub_egress_cidrs,
    private_endpoint_cidrs) leaves a container without them no address it may reach."""
    return {name: value for name, value in extra_env.items() if name in HUB_ACCESS_VARIABLES}


@dataclass(frozen=True)
class BucketEndpoint:
    """The store behind endpoint_url: an in-cluster Service's namespace, one address, or a host name outside the
    cluster (`external`), which the Hub rule's addresses reach on `ports`."""

    host: str
    namespace: str | None  # the Service's: its pods are the store
    address: str | None  # a /32 or /128
    external: bool
    url_port: int  # what the server connects to: the URL's port, else the scheme's
    ports: tuple[int, ...]  # what the policy opens: object_storage_ports, else url_port


def bucket_endpoint(url: str, namespace: str, ports: tuple[int, ...] | None) -> BucketEndpoint:
    """A Service's name (`name`, `name.namespace.svc`, `name.namespace.svc.<cluster domain>`) stands for its
    namespace's pods: a NetworkPolicy cannot select a Service, and it sees the pods' port after the Service's
    translation, which `ports` (network_policy.object_storage_ports) states when it differs from the URL's."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    url_port = parts.port or DEFAULT_PORTS.get(parts.scheme, 443)
    listening = ports or (url_port,)
    try:
        address = str(ipaddress.ip_network(ipaddress.ip_address(host)))
    except ValueError:
        labels = host.split(".")
        if len(labels) == 1:  # the pod's DNS search path resolves a bare name in the pod's namespace
            return BucketEndpoint(host, namespace, None, False, url_port, listening)
        if len(labels) >= 3 and labels[2] == "svc":
            return BucketEndpoint(host, labels[1], None, False, url_port, listening)
        # `name.namespace` is a Service through the search path, or a host such as example.com: both are opened
        return BucketEndpoint(host, labels[1] if len(labels) == 2 else None, None, True, url_port, listening)
    return BucketEndpoint(host, None, address, False, url_port, listening)
