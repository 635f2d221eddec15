"""Every profile crossed with every feature: the rendered NetworkPolicies admit each flow the stack needs and
refuse the forbidden ones, evaluated with Kubernetes' semantics (tests/reachability.py). Platform facts:
docs/sources.md §S8."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest

from components.render.exposure import render_exposure
from components.render.network_policy import render_network_policies
from config.stack import StackConfig
from plan import Plan
from tests.factories import example_stack, make_config
from tests.kubernetes_fixtures import plan_of
from tests.reachability import Host, Pod, allowed
from validation.keys import validate_config

INSTANCE = "llama"
WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"
PROFILES = ("generic", "gpu-operator", "gke", "eks-karpenter", "aks", "openshift")
HUB = Host("huggingface.co", "18.239.50.1")
GKE_METADATA = Host("GKE metadata server", "169.254.169.254")
GKE_METADATA_V1 = Host("GKE metadata server (Dataplane V1)", "169.254.169.252")
EKS_POD_IDENTITY = Host("EKS Pod Identity agent", "169.254.170.23")
# The agent's IPv6 address, which an IPv6 cluster's pods call: the Hub rule's IPv6 block carves fc00::/7 out.
EKS_POD_IDENTITY_V6 = Host("EKS Pod Identity agent (IPv6)", "fd00:ec2::23")
PROMETHEUS = Pod("prometheus", "monitoring", {"app.kubernetes.io/name": "prometheus"})
# OpenShift's user-workload Prometheus scrapes user projects (catalog/profiles.py UserWorkloadMonitoring).
UWM_PROMETHEUS = Pod(
    "prometheus-user-workload-0", "openshift-user-workload-monitoring", {"app.kubernetes.io/name": "prometheus"}
)
SCRAPER = {profile: PROMETHEUS for profile in PROFILES} | {"openshift": UWM_PROMETHEUS}
GRAFANA = Pod("grafana", "monitoring", {"app.kubernetes.io/name": "grafana"})
OTHER_NAMESPACE = Pod("web", "team-a", {"app": "web"})
GATEWAY_PROXY = Pod("proxy", "gateway-system", {"gateway.networking.k8s.io/gateway-name": "inference-gateway"})
INGRESS_CONTROLLER = Pod("controller", "ingress-nginx", {"app.kubernetes.io/name": "ingress-nginx"})
# The DNS pods each profile runs and the port they listen on (NetworkPolicy sees the translated port).
KUBE_DNS = (Pod("coredns", "kube-system", {"k8s-app": "kube-dns"}), 53)
OPENSHIFT_DNS = (Pod("dns-default", "openshift-dns", {"dns.operator.openshift.io/daemonset-dns": "default"}), 5353)
DNS = {profile: KUBE_DNS for profile in PROFILES} | {"openshift": OPENSHIFT_DNS}
GATEWAY = {"name": "inference-gateway", "namespace": "gateway-system"}
INGRESS = {
    "host": "llm.example.com",
    "class_name": "nginx",
    "controller_namespace": "ingress-nginx",
    "controller_pod_selector": {"app.kubernetes.io/name": "ingress-nginx"},
}
BUCKETS: dict[str, dict[str, Any]] = {
    "s3 with IRSA": {"uri": "s3://models/llama/", "service_account_annotations": {"eks.amazonaws.com/role-arn": "arn"}},
    "s3 with EKS Pod Identity": {"uri": "s3://models/llama/", "workload_identity": "eks-pod-identity"},
    "gs with GKE Workload Identity": {
        "uri": "gs://models/llama/",
        "service_account_annotations": {"iam.gke.io/gcp-service-account": "sa@p.iam.gserviceaccount.com"},
    },
    "az with Azure Workload Identity": {
        "uri": "az://models/llama/",
        "azure_storage_account": "mymodels",
        "service_account_annotations": {"azure.workload.identity/client-id": "00000000-0000-0000-0000-000000000000"},
    },
}
# The token endpoints each identity reads; every other one stays closed.
IDENTITY_ENDPOINTS = {
    "s3 with IRSA": (),
    "s3 with EKS Pod Identity": ((EKS_POD_IDENTITY, 80), (EKS_POD_IDENTITY_V6, 80)),
    "gs with GKE Workload Identity": ((GKE_METADATA, 80), (GKE_METADATA_V1, 988)),
    "az with Azure Workload Identity": (),
}
EVERY_ENDPOINT = ((GKE_METADATA, 80), (GKE_METADATA_V1, 988), (EKS_POD_IDENTITY, 80), (EKS_POD_IDENTITY_V6, 80))


@dataclass(frozen=True)
class Stack:
    plan: Plan
    policies: list[dict[str, Any]]
    profile: str

    def pod(self, component: str, name: str, extra: dict[str, str] | None = None, ip: str = "10.1.0.10") -> Pod:
        return Pod(name, self.plan.identity.namespace, {**self.plan.identity.labels(component), **(extra or {})}, ip)

    @property
    def leader(self) -> Pod:
        return self.pod("server", "leader", {WORKER_INDEX: "0"}, "10.1.0.10")

    @property
    def worker(self) -> Pod:
        return self.pod("server", "worker", {WORKER_INDEX: "1"}, "10.1.0.11")

    @property
    def smoke(self) -> Pod:
        return self.pod("smoke-test", "smoke", ip="10.1.0.20")

    @property
    def download(self) -> Pod:
        return self.pod("model-cache", "download", ip="10.1.0.30")

    @property
    def downloads(self) -> list[Pod]:
        """The download Job's pod, when the stack runs one (per-replica volumes download in the server's pods)."""
        return [self.download] if self.plan.delivery.runs_fill_job else []

    @property
    def notebook(self) -> Pod:
        return Pod("notebook", self.plan.identity.namespace, {"app": "notebook"}, "10.1.0.40")

    def resolves_names(self, pod: Pod) -> bool:
        dns, port = DNS[self.profile]
        return allowed(self.policies, pod, dns, port, "UDP") and allowed(self.policies, pod, dns, port, "TCP")


def rendered(cfg: StackConfig) -> Stack:
    plan = plan_of(cfg, INSTANCE)
    return Stack(plan, render_network_policies(plan.identity, plan.traffic), cfg.cluster.profile)


def with_profile(profile: str, **groups: Any) -> Stack:
    return rendered(make_config(cluster={"profile": profile}, **groups))


@cache
def featured(profile: str, feature: str) -> Stack:
    return with_profile(profile, **FEATURES[feature])


@cache
def llama_405b(profile: str) -> Stack:
    raw = example_stack("llama-405b-on-2x8-a100-80gb").model_dump(exclude_unset=True)
    if profile == "openshift":  # its RDMA ranks need an SCC beyond restricted-v2 (tests/test_openshift_admission.py)
        raw["multinode"] = {**raw["multinode"], "openshift_scc": "privileged"}
    return rendered(validate_config({**raw, "cluster": {"profile": profile}}))


FEATURES: dict[str, dict[str, Any]] = {
    "one replica": {},
    "several replicas": {"replicas": 3},
    "a Gateway": {"exposure": {"gateway": GATEWAY}, "security": {"require_api_key": True}},
    "an InferencePool": {
        "exposure": {"gateway": {**GATEWAY, "backend": "InferencePool", "endpoint_picker": {"service": "llama-epp"}}},
        "security": {"require_api_key": True},
    },
    "an Ingress": {"exposure": {"ingress": INGRESS}, "security": {"require_api_key": True}},
    "autoscaling": {"autoscaling": {"enabled": True, "min_replica_count": 1, "max_replica_count": 3}},
}
# Several replicas on the default class: per-replica volumes, which the server pods fill (no download Job).
PER_REPLICA = ("several replicas", "autoscaling")


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("feature", FEATURES, ids=str)
def test_every_pod_of_every_profile_and_feature_resolves_names_through_the_platforms_dns(profile: str, feature: str) -> None:
    stack = featured(profile, feature)
    assert all(stack.resolves_names(pod) for pod in (stack.leader, stack.smoke, *stack.downloads))


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("feature", FEATURES, ids=str)
def test_prometheus_and_the_smoke_test_reach_the_api_port_and_grafana_and_the_download_do_not(
    profile: str, feature: str
) -> None:
    stack = featured(profile, feature)
    port = stack.plan.traffic.port
    assert [
        allowed(stack.policies, source, stack.leader, port)
        for source in (SCRAPER[profile], stack.smoke, GRAFANA, *stack.downloads)
    ] == [True, True, False, *[False for _ in stack.downloads]]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("feature", [feature for feature in FEATURES if feature not in PER_REPLICA], ids=str)
def test_the_download_reaches_the_hub_and_nothing_inside_the_cluster(profile: str, feature: str) -> None:
    stack = featured(profile, feature)
    assert stack.downloads
    assert allowed(stack.policies, stack.download, HUB, 443) and not allowed(stack.policies, stack.download, stack.leader, 8000)


@pytest.mark.parametrize("profile", PROFILES)
def test_without_exposure_a_pod_of_another_namespace_cannot_open_the_api_port(profile: str) -> None:
    stack = featured(profile, "one replica")
    assert allowed(stack.policies, stack.notebook, stack.leader, 8000)
    assert not allowed(stack.policies, OTHER_NAMESPACE, stack.leader, 8000)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("feature", "proxy"),
    [("a Gateway", GATEWAY_PROXY), ("an InferencePool", GATEWAY_PROXY), ("an Ingress", INGRESS_CONTROLLER)],
)
def test_with_exposure_only_its_proxy_opens_the_api_port(profile: str, feature: str, proxy: Pod) -> None:
    stack = featured(profile, feature)
    reached = [allowed(stack.policies, source, stack.leader, 8000) for source in (proxy, stack.notebook, OTHER_NAMESPACE)]
    assert reached == [True, False, False]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("source", "destination", "port"), [("worker", "leader", 29501), ("leader", "worker", 43817), ("worker", "leader", 51234)]
)
def test_the_405b_groups_ranks_reach_each_other_on_the_master_port_and_ephemeral_ports(
    profile: str, source: str, destination: str, port: int
) -> None:
    stack = llama_405b(profile)
    assert allowed(stack.policies, getattr(stack, source), getattr(stack, destination), port)


@pytest.mark.parametrize("profile", PROFILES)
def test_the_405b_workers_read_the_shared_volume_and_cannot_reach_the_hub(profile: str) -> None:
    stack = llama_405b(profile)
    assert not allowed(stack.policies, stack.worker, HUB, 443)


ENDPOINT_PICKER = Pod("epp", "llama", {"inferencepool": "llama-epp"})


@pytest.mark.parametrize("profile", PROFILES)
def test_the_endpoint_picker_reads_the_servers_metrics_and_no_other_pod_of_the_namespace_does(profile: str) -> None:
    stack = featured(profile, "an InferencePool")
    assert allowed(stack.policies, ENDPOINT_PICKER, stack.leader, 8000)
    assert not allowed(stack.policies, stack.notebook, stack.leader, 8000)


def test_on_openshift_the_cluster_prometheus_namespace_monitoring_no_longer_scrapes() -> None:
    stack = featured("openshift", "one replica")
    assert not allowed(stack.policies, PROMETHEUS, stack.leader, stack.plan.traffic.port)


def test_on_openshift_an_explicit_prometheus_namespace_is_kept() -> None:
    stack = with_profile("openshift", network_policy={"prometheus_namespace": "monitoring"})
    assert allowed(stack.policies, PROMETHEUS, stack.leader, stack.plan.traffic.port)


def test_without_the_rank_to_rank_rule_the_405b_worker_cannot_reach_the_master_port() -> None:
    stack = llama_405b("generic")
    server = copy.deepcopy(stack.policies[0])
    for direction in ("ingress", "egress"):
        server["spec"][direction] = [rule for rule in server["spec"][direction] if rule["ports"] != [{"protocol": "TCP"}]]
    assert not allowed([server, *stack.policies[1:]], stack.worker, stack.leader, 29501)


def test_a_single_node_stack_admits_no_traffic_between_its_server_pods() -> None:
    stack = with_profile("generic", replicas=3)
    assert not allowed(stack.policies, stack.worker, stack.leader, 29501)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("bucket", BUCKETS, ids=str)
def test_a_server_streaming_from_a_bucket_reaches_object_storage_and_its_identitys_endpoints_only(
    profile: str, bucket: str
) -> None:
    stack = with_profile(profile, delivery={"mode": "object_storage", "object_storage": BUCKETS[bucket]})
    opened = {(host.ip, port) for host, port in EVERY_ENDPOINT if allowed(stack.policies, stack.leader, host, port)}
    assert allowed(stack.policies, stack.leader, HUB, 443)
    assert opened == {(host.ip, port) for host, port in IDENTITY_ENDPOINTS[bucket]}


@pytest.mark.parametrize("profile", PROFILES)
def test_a_server_reading_a_shared_volume_reaches_no_metadata_endpoint(profile: str) -> None:
    stack = featured(profile, "one replica")
    assert not any(allowed(stack.policies, stack.leader, host, port) for host, port in EVERY_ENDPOINT)


def test_openshift_dns_targets_the_openshift_dns_pods_on_5353() -> None:
    stack = with_profile("openshift")
    dns_rule = stack.policies[0]["spec"]["egress"][0]
    assert dns_rule["ports"] == [{"protocol": "UDP", "port": 5353}, {"protocol": "TCP", "port": 5353}]
    assert dns_rule["to"][0]["podSelector"] == {"matchLabels": {"dns.operator.openshift.io/daemonset-dns": "default"}}


def test_on_openshift_the_kube_dns_port_53_of_the_dns_pods_is_not_what_the_policy_opens() -> None:
    stack = with_profile("openshift")
    assert not allowed(stack.policies, stack.leader, OPENSHIFT_DNS[0], 53, "UDP")


@pytest.mark.parametrize("address", ["169.254.20.10", "169.254.169.254"])
def test_on_gke_node_local_dns_and_cloud_dns_answer_on_53(address: str) -> None:
    stack = with_profile("gke")
    assert allowed(stack.policies, stack.leader, Host("dns", address), 53, "UDP")


def test_every_flow_of_the_plan_names_its_reason() -> None:
    assert all(flow.reason for flow in with_profile("gke").plan.traffic.flows.flows)


@pytest.mark.parametrize(("probe", "admitted"), [("35.191.7.9", True), ("130.211.2.1", True), ("35.192.0.1", False)])
def test_with_the_gke_gateway_googles_health_check_ranges_reach_the_api_port(probe: str, admitted: bool) -> None:
    stack = featured("gke", "a Gateway")
    assert allowed(stack.policies, Host("google health check", probe), stack.leader, 8000) is admitted


def test_elsewhere_the_gke_health_check_ranges_stay_closed() -> None:
    stack = featured("generic", "a Gateway")
    assert not allowed(stack.policies, Host("google health check", "35.191.7.9"), stack.leader, 8000)


def test_with_the_gke_gateway_a_health_check_policy_points_the_load_balancer_at_health() -> None:
    plan = featured("gke", "a Gateway").plan
    (policy,) = [o for o in render_exposure(plan.identity, plan.traffic) if o["kind"] == "HealthCheckPolicy"]
    assert policy["spec"]["default"]["config"]["httpHealthCheck"] == {"port": 8000, "requestPath": "/health"}
    assert policy["spec"]["targetRef"] == {"group": "", "kind": "Service", "name": plan.identity.names.server}


def test_other_profiles_render_no_health_check_policy() -> None:
    plan = featured("generic", "a Gateway").plan
    assert [o for o in render_exposure(plan.identity, plan.traffic) if o["kind"] == "HealthCheckPolicy"] == []
