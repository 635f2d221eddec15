"""`network_policy`: which pods may reach the vLLM server, and where the serving and download pods may connect.

Kubernetes NetworkPolicies work on addresses and ports, not HTTP paths. vLLM serves the OpenAI API (/v1) and
/metrics on the same port, so the Prometheus namespace is allowed on that port too; it could also call /v1.
Set `security.require_api_key` to keep /v1 closed to everything but the configured clients.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated

from pydantic import BeforeValidator, Field, StringConstraints, field_validator

from config.base import ConfigGroup, refuse_bool
from config.errors import show

NamespaceName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)]
Port = Annotated[int, BeforeValidator(lambda value: refuse_bool(value, int)), Field(ge=1, le=65535)]

# Addresses inside a cluster or a cloud VPC: private, carrier-grade NAT, link-local (cloud metadata), ULA.
CLUSTER_INTERNAL_CIDRS: tuple[str, ...] = (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16", "fc00::/7", "fe80::/10")

_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class NetworkPolicyConfig(ConfigGroup):
    """NetworkPolicies for the vLLM server pods and the model download Job. On by default."""

    enabled: bool = Field(
        True, description="Create the NetworkPolicies; false leaves the pods open to every pod in the cluster.")
    client_namespaces: tuple[NamespaceName, ...] = Field(
        (), description="Namespaces whose pods may call the API port; empty means only the stack's own namespace.")
    client_pod_selector: dict[str, str] = Field(
        default_factory=dict,
        description="Labels a client pod must carry (matchLabels), in those namespaces; empty means any pod there.")
    prometheus_namespace: NamespaceName | None = Field(
        "monitoring", description="Namespace whose pods may scrape /metrics (the API port); null allows none.")
    dns_namespace: NamespaceName = Field("kube-system", description="Namespace of the cluster DNS pods.")
    dns_pod_selector: dict[str, str] = Field(
        default_factory=lambda: {"k8s-app": "kube-dns"},
        description="Labels of the cluster DNS pods (kube-dns and CoreDNS both carry k8s-app: kube-dns).")
    hub_egress_cidrs: tuple[str, ...] = Field(
        ("0.0.0.0/0", "::/0"),
        description="Addresses the model download Job may reach (the model hub); empty allows DNS only.")
    hub_egress_except_cidrs: tuple[str, ...] = Field(
        CLUSTER_INTERNAL_CIDRS,
        description="Addresses carved out of hub_egress_cidrs: cluster-internal ranges and cloud metadata.")
    hub_egress_ports: tuple[Port, ...] = Field((443,), description="TCP ports the download Job may reach.")

    @field_validator("client_pod_selector", "dns_pod_selector")
    @classmethod
    def _labels_valid(cls, labels: dict[str, str]) -> dict[str, str]:
        for key, value in labels.items():
            _check_label(key, value)
        return labels

    @field_validator("hub_egress_cidrs", "hub_egress_except_cidrs")
    @classmethod
    def _cidrs_valid(cls, cidrs: tuple[str, ...]) -> tuple[str, ...]:
        for cidr in cidrs:
            _check_cidr(cidr)
        return cidrs


def _check_label(key: str, value: str) -> None:
    prefix, slash, name = key.rpartition("/")
    key_ok = (not slash or (bool(_DNS_SUBDOMAIN.match(prefix)) and len(prefix) <= 253)) and \
        len(name) <= 63 and bool(_LABEL_NAME.match(name))
    if not key_ok:
        raise ValueError(f"{show(key)} is not a Kubernetes label key. Fix: use a key such as "
                         "app.kubernetes.io/name: an optional DNS prefix and a name of at most 63 letters, digits, -_.")
    if value and (len(value) > 63 or not _LABEL_NAME.match(value)):
        raise ValueError(f"{show(value)} (label {key}) is not a Kubernetes label value. Fix: use at most 63 letters, "
                         "digits, '-', '_' or '.', starting and ending with a letter or digit.")


def _check_cidr(cidr: str) -> None:
    try:
        ipaddress.ip_network(cidr, strict=True)
    except ValueError:
        raise ValueError(f"{show(cidr)} is not a network in CIDR notation. "
                         "Fix: write it as address/prefix with no host bits set, e.g. 10.0.0.0/8.") from None
