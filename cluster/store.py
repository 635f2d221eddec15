"""The bucket's in-cluster store: the policy must open the port its Service forwards to. Pure.

A NetworkPolicy is evaluated after a Service's translation, so a server calling `minio.minio.svc:80` whose
Service forwards 80 to the pods' 9000 needs egress on 9000 (docs/security.md, kubernetes.io/docs/concepts/
services-networking/network-policies). The check reads the store's Service from the facts when they hold it.
"""

from __future__ import annotations

from cluster.facts import ClusterFacts
from cluster.findings import Finding

FIX_PORTS = "set network_policy.object_storage_ports to the pods' port"


def check_bucket_store(
    facts: ClusterFacts, host: str, namespace: str, url_port: int, opened: tuple[int, ...] | None
) -> list[Finding]:
    """`host`: endpoint_url's host, a Service of `namespace`; `opened`: the ports the server's egress opens to it
    (None: no NetworkPolicy, so any)."""
    if facts.services is None:
        return []
    name = host.split(".")[0]
    ports = facts.services.get(f"{namespace}/{name}")
    if ports is None:
        if not any(key.startswith(f"{namespace}/") for key in facts.services):
            return []  # the namespace's Services were not read
        return [
            Finding(
                "bucket",
                "block",
                f"delivery.object_storage.endpoint_url names Service {name} in namespace {namespace}, which has "
                "no Service of that name, so the server cannot reach the bucket.",
                "point endpoint_url at the store's Service (name.namespace.svc:port).",
            )
        ]
    port = next((p for p in ports if p.port == url_port), None)
    if port is None:
        listed = ", ".join(str(p.port) for p in ports) or "none"
        return [
            Finding(
                "bucket",
                "block",
                f"Service {name}.{namespace} has no port {url_port} (it has {listed}), which endpoint_url calls.",
                "write one of the Service's ports into delivery.object_storage.endpoint_url.",
            )
        ]
    return [_target_finding(f"{name}.{namespace}", port.port, port.target_port, opened)]


def _target_finding(service: str, port: int, target: int | str, opened: tuple[int, ...] | None) -> Finding:
    if opened is None:
        return Finding("bucket", "ok", f"Service {service} has port {port}, which endpoint_url calls.")
    shown = ", ".join(map(str, opened))
    if isinstance(target, str):
        return Finding(
            "bucket",
            "warn",
            f"Service {service} forwards {port} to the pods' port named {target!r}; the server's egress opens "
            f"{shown}, which must be that port's number.",
            f"{FIX_PORTS} (its containerPort), unless it is {shown}.",
        )
    if target not in opened:
        return Finding(
            "bucket",
            "block",
            f"Service {service} forwards {port} to the pods' {target}; the server's egress opens {shown}, and a "
            "NetworkPolicy sees the pods' port, so every read of the bucket times out.",
            f"{FIX_PORTS}: [{target}].",
        )
    return Finding("bucket", "ok", f"Service {service} forwards {port} to the pods' {target}, which the egress opens.")
