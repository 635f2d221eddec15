"""`network_policy`: which pods may reach the vLLM server, and where the serving and download pods may connect.

Kubernetes NetworkPolicies work on addresses and ports, not HTTP paths. vLLM serves the OpenAI API (/v1) and
/metrics on the same port, so the Prometheus pods are allowed on that port too; they could also call /v1.
With `exposure.gateway` (or `exposure.ingress`) only the gateway's pods and Prometheus reach the port, and
the route forwards only key-guarded paths (docs/exposure.md).
"""

from __future__ import annotations

import ipaddress
from typing import Annotated

from pydantic import BeforeValidator, Field, field_validator

from config.base import ConfigGroup, refuse_bool
from config.errors import show
from config.syntax import DnsLabel, check_label

NamespaceName = DnsLabel
Port = Annotated[int, BeforeValidator(lambda value: refuse_bool(value, int)), Field(ge=1, le=65535)]

# RFC 1918's private ranges, where a VPC's or virtual network's subnets (and their private endpoints) lie.
PRIVATE_NETWORK_CIDRS: tuple[str, ...] = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
# Addresses inside a cluster or a cloud VPC: private, carrier-grade NAT, link-local (cloud metadata), ULA.
CLUSTER_INTERNAL_CIDRS: tuple[str, ...] = (
    *PRIVATE_NETWORK_CIDRS,
    "100.64.0.0/10",
    "169.254.0.0/16",
    "fc00::/7",
    "fe80::/10",
)


class NetworkPolicyConfig(ConfigGroup):
    """NetworkPolicies for the vLLM server pods and the model download Job. On by default."""

    enabled: bool = Field(
        True, description="Create the NetworkPolicies; false leaves the pods open to every pod in the cluster."
    )
    client_namespaces: tuple[NamespaceName, ...] = Field(
        (), description="Namespaces whose pods may call the API port; empty means only the stack's own namespace."
    )
    client_pod_selector: dict[str, str] = Field(
        default_factory=dict,
        description="Labels a client pod must carry (matchLabels), in those namespaces; empty means any pod there.",
    )
    prometheus_namespace: NamespaceName | None = Field(
        "monitoring", description="Namespace of the Prometheus pods that scrape /metrics (the API port); null allows none."
    )
    prometheus_pod_selector: dict[str, str] = Field(
        # prometheus-operator labels every Prometheus pod app.kubernetes.io/name: prometheus
        # (prometheus-operator/prometheus-operator pkg/prometheus/server/statefulset.go, podSelectorLabels).
        default_factory=lambda: {"app.kubernetes.io/name": "prometheus"},
        description="Labels of the Prometheus pods in prometheus_namespace; {} admits every pod there (Grafana too).",
    )
    node_local_dns: bool = Field(
        False, description="Allow DNS to NodeLocal DNSCache (host network, so no pod selector matches it)."
    )
    node_local_dns_addresses: tuple[str, ...] = Field(
        # kubernetes/kubernetes cluster/addons/dns/nodelocaldns/README.md: "a link local ip(169.254.20.10/32 by default)".
        ("169.254.20.10",),
        description="Addresses NodeLocal DNSCache listens on; in kube-proxy iptables mode add the kube-dns Service IP.",
    )
    dns_namespace: NamespaceName | None = Field(
        None, description="Namespace of the cluster DNS pods; null: the profile's (kube-system, openshift-dns)."
    )
    dns_pod_selector: dict[str, str] | None = Field(
        None,
        description="Labels of the cluster DNS pods; null: the profile's (k8s-app: kube-dns; on openshift "
        "dns.operator.openshift.io/daemonset-dns: default).",
    )
    dns_port: Port | None = Field(
        None,
        description="Port the DNS pods listen on (policies see it after the Service's translation); null: the "
        "profile's (53; 5353 on openshift).",
    )
    hub_egress_cidrs: tuple[str, ...] = Field(
        ("0.0.0.0/0", "::/0"), description="Addresses the model download Job may reach (the model hub); empty allows DNS only."
    )
    hub_egress_except_cidrs: tuple[str, ...] = Field(
        CLUSTER_INTERNAL_CIDRS,
        description="Addresses carved out of hub_egress_cidrs: cluster-internal ranges and cloud metadata.",
    )
    hub_egress_ports: tuple[Port, ...] = Field((443,), description="TCP ports the download Job may reach.")
    private_endpoint_cidrs: tuple[str, ...] = Field(
        (),
        description="Private addresses the pods that fetch weights reach on 443 and the bucket's ports: VPC "
        "interface endpoints of S3 and STS (a cluster without internet access), Private Service Connect, Azure "
        "Private Endpoints, a Hub mirror; hub_egress_except_cidrs carves them out of the Hub rule.",
    )
    object_storage_ports: tuple[Port, ...] | None = Field(
        None,
        min_length=1,
        description="TCP ports of delivery.object_storage.endpoint_url as a policy sees them (for a store behind an "
        "in-cluster Service, its pods' port); null: the URL's port, else 443 for https and 80 for http.",
    )

    @field_validator("client_pod_selector", "dns_pod_selector", "prometheus_pod_selector")
    @classmethod
    def _labels_valid(cls, labels: dict[str, str] | None) -> dict[str, str] | None:
        for key, value in (labels or {}).items():
            check_label(key, value)
        return labels

    @field_validator("node_local_dns_addresses")
    @classmethod
    def _addresses_valid(cls, addresses: tuple[str, ...]) -> tuple[str, ...]:
        for address in addresses:
            try:
                ipaddress.ip_address(address)
            except ValueError:
                raise ValueError(f"{address!r} is not an IP address. Fix: write one such as 169.254.20.10.") from None
        return addresses

    @field_validator("hub_egress_cidrs", "hub_egress_except_cidrs", "private_endpoint_cidrs")
    @classmethod
    def _cidrs_valid(cls, cidrs: tuple[str, ...]) -> tuple[str, ...]:
        for cidr in cidrs:
            _check_cidr(cidr)
        return cidrs


def _check_cidr(cidr: str) -> None:
    try:
        ipaddress.ip_network(cidr, strict=True)
    except ValueError:
        raise ValueError(
            f"{show(cidr)} is not a network in CIDR notation. "
            "Fix: write it as address/prefix with no host bits set, e.g. 10.0.0.0/8."
        ) from None
