"""Every network flow the stack needs, as data: source, destination, ports and why. Pure.

components/render/network_policy.py renders the NetworkPolicies from this list and nothing else; the
reachability test (tests/reachability.py) evaluates those policies against it. One of the stack's own
components is an `Own`; anything else a tuple of peers (pods by namespace and labels, or address blocks).
A flow between two own components admits egress on the source's policy and ingress on the destination's.
Platform facts: docs/sources.md §S8.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Literal

from catalog.profiles import DnsService, Profile
from config.delivery import WorkloadIdentity
from config.exposure import ExposureConfig
from config.network import NetworkPolicyConfig
from config.routing import RoutingConfig
from plan.egress import BucketEndpoint
from plan.names import endpoint_selector

SERVER = "server"  # app.kubernetes.io/component of the vLLM server pods (leader and workers alike)
MODEL_CACHE = "model-cache"  # the download Job's and the bucket copy Job's pods
SMOKE_TEST = "smoke-test"  # the smoke-test Job's pods
ROUTER = "router"  # vLLM's router pods (plan/routing.py), when routing is on
IMAGE_PREPULL = "image-prepull"  # the image pre-pull DaemonSet's pods (server.prepull_image): no flow at all
ROLLOUT_GATE = "rollout-gate"  # the Job that awaits the workload's rollout (plan/rollout_gate.py)


@dataclass(frozen=True)
class Own:
    """The stack's own pods of one component, in the stack's namespace."""

    component: str


@dataclass(frozen=True)
class Pods:
    """Pods matching `labels` in `namespaces` (None: the stack's own namespace); both conditions hold at once."""

    labels: tuple[tuple[str, str], ...]
    namespaces: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Addresses:
    cidr: str
    except_cidrs: tuple[str, ...] = ()


Peer = Pods | Addresses


@dataclass(frozen=True)
class Port:
    protocol: Literal["TCP", "UDP"]
    port: int | None = None  # None: every port of the protocol
    end_port: int | None = None


ALL_TCP = (Port("TCP"),)


@dataclass(frozen=True)
class Flow:
    source: Own | tuple[Peer, ...]
    destination: Own | tuple[Peer, ...]
    ports: tuple[Port, ...]
    reason: str


@dataclass(frozen=True)
class Interceptor:
    """The KEDA HTTP add-on's interceptor: callers reach it, it reaches the server (plan/zero.py)."""

    pods: Pods
    port: int  # its proxy port: the Service's and the container's


@dataclass(frozen=True)
class FlowsPlan:
    enabled: bool  # network_policy.enabled: false renders no policy
    components: tuple[str, ...]  # each gets one policy denying what no flow admits
    flows: tuple[Flow, ...]
    dns: DnsService  # the resolvers the DNS flows admit (the cluster check compares the nodes' with it)
    bucket: BucketEndpoint | None = None  # the store the bucket flows admit (the cluster check reads its Service)


def pods(labels: dict[str, str], namespaces: tuple[str, ...] | None = None) -> Pods:
    return Pods(tuple(sorted(labels.items())), tuple(sorted(set(namespaces))) if namespaces is not None else None)


def dns_flows(component: str, dns: DnsService) -> list[Flow]:
    """DNS as the platform serves it: the DNS pods on the port they listen on (NetworkPolicy is evaluated after
    the Service's port translation, so OpenShift's is 5353), and host-network caches as addresses on 53."""
    reason = f"DNS: {dns.source}"
    dns_pods = pods(dns.pod_labels, (dns.namespace,))
    caches = tuple(Addresses(str(ipaddress.ip_network(address))) for address in dns.addresses)
    if dns.port == 53:
        return [Flow(Own(component), (dns_pods, *caches), dns_ports(53), reason)]
    flows = [Flow(Own(component), (dns_pods,), dns_ports(dns.port), reason)]
    return flows + ([Flow(Own(component), caches, dns_ports(53), reason)] if caches else [])


def dns_service(platform: DnsService, policy: NetworkPolicyConfig) -> DnsService:
    """The profile's DNS, with what network_policy overrides; node_local_dns adds its addresses."""
    addresses = platform.addresses
    if policy.node_local_dns:
        addresses = tuple(dict.fromkeys((*addresses, *policy.node_local_dns_addresses)))
    return DnsService(
        policy.dns_namespace or platform.namespace,
        platform.pod_labels if policy.dns_pod_selector is None else policy.dns_pod_selector,
        policy.dns_port or platform.port,
        addresses,
        platform.source,
    )


def dns_ports(port: int) -> tuple[Port, ...]:
    return (Port("UDP", port), Port("TCP", port))


def hub_peers(policy: NetworkPolicyConfig) -> tuple[Peer, ...]:
    return tuple(Addresses(cidr, policy.hub_egress_except_cidrs) for cidr in policy.hub_egress_cidrs)


def hub_flows(component: str, policy: NetworkPolicyConfig, why: str) -> list[Flow]:
    if not (policy.hub_egress_cidrs and policy.hub_egress_ports):
        return []
    return [Flow(Own(component), hub_peers(policy), tuple(Port("TCP", p) for p in policy.hub_egress_ports), why)]


def bucket_flows(component: str, bucket: BucketEndpoint | None, policy: NetworkPolicyConfig) -> list[Flow]:
    """The bucket's store on its ports: a Service's pods, an address, or a host name outside the cluster through
    the Hub rule's addresses on the ports that rule does not open already."""
    if bucket is None:
        return []
    reason = f"the bucket's endpoint {bucket.host} (delivery.object_storage.endpoint_url)"
    tcp = tuple(Port("TCP", port) for port in bucket.ports)
    inside: tuple[Peer, ...] = (
        *((pods({}, (bucket.namespace,)),) if bucket.namespace is not None else ()),
        *((Addresses(bucket.address),) if bucket.address is not None else ()),
    )
    flows = [Flow(Own(component), inside, tcp, reason)] if inside else []
    extra = tuple(port for port in tcp if port.port not in policy.hub_egress_ports)
    if bucket.external and extra and policy.hub_egress_cidrs:
        flows.append(Flow(Own(component), hub_peers(policy), extra, reason))
    return flows


def private_endpoint_flows(component: str, bucket: BucketEndpoint | None, policy: NetworkPolicyConfig) -> list[Flow]:
    """network_policy.private_endpoint_cidrs on 443 (STS, storage, a Hub mirror) and on the bucket's ports: the Hub
    rule carves private ranges out, where a VPC interface endpoint's addresses are."""
    if not policy.private_endpoint_cidrs:
        return []
    ports = tuple(Port("TCP", port) for port in dict.fromkeys((443, *(bucket.ports if bucket else ()))))
    peers = tuple(Addresses(cidr) for cidr in policy.private_endpoint_cidrs)
    return [Flow(Own(component), peers, ports, "private endpoints (network_policy.private_endpoint_cidrs)")]


def fetch_flows(component: str, policy: NetworkPolicyConfig, bucket: BucketEndpoint | None, why: str) -> list[Flow]:
    """Everything a pod that fetches weights reaches: the Hub rule, the bucket's store, private endpoints."""
    return [
        *hub_flows(component, policy, why),
        *bucket_flows(component, bucket, policy),
        *private_endpoint_flows(component, bucket, policy),
    ]


# Node-local token endpoints, carved out of the hub rule by 169.254.0.0/16 and fc00::/7 (docs/sources.md §S8). IRSA
# and Azure WI read a projected token and call public STS / Entra ID on 443, which the hub rule admits. EKS Pod
# Identity's agent listens on [fd00:ec2::23] too, the address of an IPv6 cluster's pods
# (docs.aws.amazon.com/eks/latest/userguide/pod-id-agent-setup.html).
IDENTITY_ENDPOINTS: dict[str, tuple[tuple[str, int], ...]] = {
    "gke-workload-identity": (("169.254.169.254/32", 80), ("169.254.169.252/32", 988)),
    "eks-pod-identity": (("169.254.170.23/32", 80), ("fd00:ec2::23/128", 80)),
}


def identity_flows(component: str, identity: WorkloadIdentity | None) -> list[Flow]:
    return [
        Flow(Own(component), (Addresses(cidr),), (Port("TCP", port),), f"{identity} token endpoint")
        for cidr, port in IDENTITY_ENDPOINTS.get(identity or "", ())
    ]


def caller_flows(
    port: int,
    policy: NetworkPolicyConfig,
    exposure: ExposureConfig,
    namespace: str,
    probe_cidrs: tuple[str, ...],
    entry: str = SERVER,
) -> list[Flow]:
    """The exposure's proxies and the client namespaces; with neither, the stack's own namespace. `entry`: the
    component they call, the server or (with routing on) the router, on its `port`."""
    api = (Port("TCP", port),)
    flows: list[Flow] = []
    gateway, ingress = exposure.gateway, exposure.ingress
    if gateway is not None and probe_cidrs:
        probes = tuple(Addresses(cidr) for cidr in probe_cidrs)
        flows.append(Flow(probes, Own(entry), api, "the load balancer's health checks (HealthCheckPolicy on /health)"))
    if gateway is not None:
        proxies = pods(gateway.proxy_pod_selector(), (gateway.proxy_namespace(namespace),))
        sources: tuple[Peer, ...] = (proxies, *(Addresses(cidr) for cidr in gateway.source_cidrs))
        flows.append(Flow(sources, Own(entry), api, "the Gateway's proxy forwards the routed paths"))
    picker = gateway.endpoint_picker if gateway is not None and gateway.backend == "InferencePool" else None
    if picker is not None:
        # The picker reads each server's /metrics (queue, KV cache) on the pool's target port to choose one.
        flows.append(Flow((pods(picker.pods()),), Own(SERVER), (Port("TCP", port),), "the endpoint picker scrapes /metrics"))
    if ingress is not None:
        controller = pods(ingress.controller_pod_selector, (ingress.controller_namespace,))
        flows.append(Flow((controller,), Own(entry), api, "the ingress controller forwards the routed paths"))
    if policy.client_namespaces or not flows:
        namespaces = policy.client_namespaces or None
        clients = pods(policy.client_pod_selector, namespaces)
        flows.append(Flow((clients,), Own(entry), api, "clients call the API directly (network_policy.client_*)"))
    return flows


def interceptor_flows(interceptor: Interceptor, entry: str, entry_port: int, smoke_test: bool) -> list[Flow]:
    """The interceptor forwards each request to the entry; the smoke test calls the interceptor. The callers'
    own flows to the interceptor are the add-on's namespace's policies, not this stack's."""
    flows = [
        Flow(
            (interceptor.pods,),
            Own(entry),
            (Port("TCP", entry_port),),
            "the KEDA HTTP add-on's interceptor forwards each request",
        )
    ]
    if smoke_test:
        reason = "the smoke test calls the API through the interceptor"
        flows.append(Flow(Own(SMOKE_TEST), (interceptor.pods,), (Port("TCP", interceptor.port),), reason))
    return flows


def scraper(policy: NetworkPolicyConfig, profile: Profile) -> Pods | None:
    """The Prometheus pods that scrape the stack: network_policy.prometheus_*, where on OpenShift the namespace
    is the user-workload Prometheus's unless prometheus_namespace is set (catalog/profiles.py)."""
    namespace, platform = policy.prometheus_namespace, profile.user_workload_monitoring
    if platform is not None and "prometheus_namespace" not in policy.model_fields_set:
        namespace = platform.prometheus_namespace
    return None if namespace is None else pods(policy.prometheus_pod_selector, (namespace,))


def prometheus_flows(port: int, prometheus: Pods | None) -> list[Flow]:
    if prometheus is None:
        return []
    return [Flow((prometheus,), Own(SERVER), (Port("TCP", port),), "Prometheus scrapes /metrics on the API port")]


def keda_flows(profile: Profile, keda_queries_thanos: bool) -> list[Flow]:
    """KEDA's operator queries OpenShift's Thanos Querier on its tenancy port. Neither end is the stack's, so no
    policy of the stack renders it; it is listed so the path is on record (and tested) with the others."""
    platform = profile.user_workload_monitoring
    if platform is None or not keda_queries_thanos:
        return []
    keda, thanos = pods({}, (platform.keda_namespace,)), pods({}, (platform.thanos_namespace,))
    return [Flow((keda,), (thanos,), (Port("TCP", platform.thanos_port),), "KEDA's triggers query the Thanos Querier")]


def smoke_flows(port: int, smoke_test: bool, entry: str = SERVER) -> list[Flow]:
    return [Flow(Own(SMOKE_TEST), Own(entry), (Port("TCP", port),), "the smoke test calls the API")] if smoke_test else []


def api_server_flow(component: str, routing: RoutingConfig, reason: str) -> Flow:
    """To the Kubernetes API server: any address on its ports unless routing.api_server_cidrs names it. The pods
    reach it at KUBERNETES_SERVICE_HOST, which a policy sees after the Service's translation, so as the API
    server's own addresses."""
    # Any address of either family: an IPv6 cluster's API server answers on IPv6, which 0.0.0.0/0 never matches.
    api_server = tuple(Addresses(cidr) for cidr in routing.api_server_cidrs) or (Addresses("0.0.0.0/0"), Addresses("::/0"))
    return Flow(Own(component), api_server, tuple(Port("TCP", p) for p in routing.api_server_ports), reason)


def router_flows(routing: RoutingConfig, server_port: int, prometheus: Pods | None, dns: DnsService) -> list[Flow]:
    """The router's own flows: it calls the servers it discovers, watches their pods through the API server, and
    is scraped by Prometheus."""
    # On a shared endpoint the router forwards to every stack's servers; each admits it (endpoint_flows).
    servers = (pods(endpoint_selector(routing.endpoint, SERVER)),) if routing.endpoint else Own(SERVER)
    flows = [
        Flow(Own(ROUTER), servers, (Port("TCP", server_port),), "the router forwards each request to a server"),
        api_server_flow(ROUTER, routing, "pod discovery (watch)"),
        *dns_flows(ROUTER, dns),
    ]
    if prometheus is not None:
        flows.append(Flow((prometheus,), Own(ROUTER), (Port("TCP", routing.prometheus_port),), "Prometheus scrapes the router"))
    return flows


def endpoint_flows(routing: RoutingConfig, server_port: int) -> list[Flow]:
    """A stack on a shared endpoint (routing.endpoint): its servers admit the endpoint's router, which runs in
    whichever stack of the namespace has routing.enabled."""
    if not routing.endpoint:
        return []
    router = (pods(endpoint_selector(routing.endpoint, ROUTER)),)
    return [Flow(router, Own(SERVER), (Port("TCP", server_port),), f"the router of endpoint {routing.endpoint}")]


def rank_flows(multinode: bool) -> list[Flow]:
    """All TCP between a group's ranks: --master-port is pinned, but NCCL's bootstrap and socket ports and the
    mp executor's cross-node message queues are ephemeral, and NCCL cannot pin its ports or confine them to a
    range (NVIDIA/nccl#388, open; docs/multinode.md "Traffic between ranks"), so no port list would hold."""
    if not multinode:
        return []
    reason = "ranks of a group: --master-port, NCCL bootstrap/socket and the mp executor's message queues (ephemeral)"
    return [Flow(Own(SERVER), Own(SERVER), ALL_TCP, reason)]


def resolve_flows(
    *,
    namespace: str,
    port: int,
    policy: NetworkPolicyConfig,
    exposure: ExposureConfig,
    profile: Profile,
    multinode: bool,
    server_fetches_weights: bool,
    identity: WorkloadIdentity | None,
    copies_to_bucket: bool,
    fill_job: bool,
    smoke_test: bool,
    routing: RoutingConfig,
    image_prepull: bool,
    rollout_gate: bool,
    bucket: BucketEndpoint | None = None,
    keda_queries_thanos: bool = False,
    interceptor: Interceptor | None = None,
) -> FlowsPlan:
    """Every flow the stack needs; with routing on, callers and the smoke test reach the router, which alone
    reaches the servers' API port (Prometheus still scrapes the servers). With the KEDA HTTP add-on, callers and
    the smoke test reach its interceptor, which alone reaches the entry."""
    dns, prometheus = dns_service(profile.dns, policy), scraper(policy, profile)
    entry, entry_port = (ROUTER, routing.port) if routing.enabled else (SERVER, port)
    callers = (
        caller_flows(entry_port, policy, exposure, namespace, profile.load_balancer_probe_cidrs, entry)
        + smoke_flows(entry_port, smoke_test, entry)
        if interceptor is None
        else interceptor_flows(interceptor, entry, entry_port, smoke_test)
    )
    flows = [
        *callers,
        *prometheus_flows(port, prometheus),
        *rank_flows(multinode),
        *dns_flows(SERVER, dns),
        *endpoint_flows(routing, port),
    ]
    if server_fetches_weights:
        flows += fetch_flows(SERVER, policy, bucket, "the server downloads or streams the weights (hub or bucket)")
        flows += identity_flows(SERVER, identity)
    components = [SERVER]
    if fill_job:  # no Job, no model-cache pod: its policy would select nothing
        components.append(MODEL_CACHE)
        flows += dns_flows(MODEL_CACHE, dns)
        why = "the download or bucket copy reads the Hub and writes the bucket"
        flows += fetch_flows(MODEL_CACHE, policy, bucket if copies_to_bucket else None, why)
        flows += identity_flows(MODEL_CACHE, identity if copies_to_bucket else None)
    if smoke_test:
        components.append(SMOKE_TEST)
        flows += dns_flows(SMOKE_TEST, dns)
    if routing.enabled:
        components.append(ROUTER)
        flows += router_flows(routing, port, prometheus, dns)
    if rollout_gate:  # it reads the workload and its pods at the API server's address: no name to resolve
        components.append(ROLLOUT_GATE)
        flows.append(api_server_flow(ROLLOUT_GATE, routing, "the rollout gate reads the workload's status and pods"))
    if image_prepull:  # a policy and no flow: the sleeping pods send and accept nothing
        components.append(IMAGE_PREPULL)
    flows += keda_flows(profile, keda_queries_thanos)
    return FlowsPlan(policy.enabled, tuple(components), tuple(flows), dns, bucket)
