"""vLLM's router (config/routing.py, plan/routing.py, components/render/router.py): its command line against
the release's flag table, its objects, and the traffic path through it."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.router_flags import router_flags
from components.render.manifests import stack_manifests
from components.render.network_policy import render_network_policies
from config.errors import ConfigError
from config.routing import ROUTER_VERSION, RoutingConfig
from plan.routing import RoutingPlan, check_flags
from tests.factories import make_config
from tests.kubernetes_fixtures import plan_of
from tests.reachability import Host, Pod, allowed

ROUTED: dict[str, Any] = {"routing": {"enabled": True}, "replicas": 2}
GATEWAY = {"name": "inference-gateway", "namespace": "gateway-system"}


def routed(**changes: Any) -> RoutingPlan:
    routing = plan_of(make_config(**{**ROUTED, **changes})).routing
    assert routing is not None
    return routing


def objects_of(**changes: Any) -> list[dict[str, Any]]:
    return stack_manifests(plan_of(make_config(**changes)))


def by_kind(objects: list[dict[str, Any]], kind: str, component: str = "router") -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind and o["metadata"]["labels"]["app.kubernetes.io/component"] == component]


def flag_value(args: tuple[str, ...], flag: str) -> str:
    return args[args.index(flag) + 1]


def test_every_flag_of_the_router_command_line_is_in_the_release_table() -> None:
    args = routed(security={"require_api_key": True}).args
    flags = [arg for arg in args if arg.startswith("--")]
    assert set(flags) <= router_flags(ROUTER_VERSION).flags


def test_a_flag_the_release_lacks_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match=r"vllm-router 0\.1\.17 has no flag --service-discovery-namespaces"):
        check_flags(ROUTER_VERSION, ["vllm-router", "--service-discovery-namespaces", "ns"])


def test_every_policy_the_config_accepts_is_one_the_router_accepts() -> None:
    accepted = RoutingConfig.model_fields["policy"].annotation.__args__  # type: ignore[union-attr]
    assert set(accepted) == set(router_flags(ROUTER_VERSION).policies)


def test_the_default_policy_is_cache_aware() -> None:
    assert flag_value(routed().args, "--policy") == "cache_aware"


def test_the_router_discovers_the_server_pods_of_its_own_namespace_by_the_server_selector() -> None:
    plan = plan_of(make_config(**ROUTED))
    assert plan.routing is not None
    args = plan.routing.args
    start = args.index("--selector") + 1
    selector = dict(pair.split("=", 1) for pair in args[start : args.index("--service-discovery-namespace")])
    assert selector == plan.server.selector
    assert flag_value(args, "--service-discovery-namespace") == plan.identity.namespace
    assert flag_value(args, "--service-discovery-port") == str(plan.server.port)


def test_the_router_listens_on_every_address_for_requests_and_metrics() -> None:
    args = routed().args
    assert flag_value(args, "--host") == "0.0.0.0"
    assert flag_value(args, "--prometheus-host") == "0.0.0.0"


def test_the_api_key_reaches_the_router_from_the_secret_when_keys_are_required() -> None:
    deployment = by_kind(objects_of(**ROUTED, security={"require_api_key": True}), "Deployment")[0]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][container["command"].index("--api-key") + 1] == "$(ROUTER_API_KEY)"
    key_env = next(env for env in container["env"] if env["name"] == "ROUTER_API_KEY")
    assert key_env["valueFrom"]["secretKeyRef"]["name"].endswith("-api-key")


def test_the_router_gets_no_api_key_when_keys_are_not_required() -> None:
    assert "--api-key" not in routed().args


def test_no_router_object_is_rendered_when_routing_is_off() -> None:
    assert all(o["metadata"]["labels"]["app.kubernetes.io/component"] != "router" for o in objects_of())


def test_the_router_runs_at_least_two_replicas() -> None:
    with pytest.raises(ConfigError, match=r"vllm-serving:routing\.replicas"):
        make_config(routing={"enabled": True, "replicas": 1})


def test_the_router_image_is_tagged_with_the_release_its_flags_are_checked_against() -> None:
    deployment = by_kind(objects_of(**ROUTED), "Deployment")[0]
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == f"vllm/vllm-router:v{ROUTER_VERSION}"


def test_the_router_reads_pods_through_a_namespaced_role_only() -> None:
    objects = objects_of(**ROUTED)
    assert not [o for o in objects if o["kind"].startswith("Cluster")]
    (role,) = by_kind(objects, "Role")
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]
    (binding,) = by_kind(objects, "RoleBinding")
    assert binding["roleRef"]["kind"] == "Role"
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": role["metadata"]["name"], "namespace": role["metadata"]["namespace"]}
    ]


def test_the_router_pods_run_under_restricted_pod_security() -> None:
    pod = by_kind(objects_of(**ROUTED), "Deployment")[0]["spec"]["template"]["spec"]
    context = pod["containers"][0]["securityContext"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert context["allowPrivilegeEscalation"] is False
    assert context["capabilities"] == {"drop": ["ALL"]}


def test_the_router_has_a_disruption_budget_over_its_pods() -> None:
    objects = objects_of(**ROUTED)
    (pdb,) = by_kind(objects, "PodDisruptionBudget")
    assert pdb["spec"]["selector"] == by_kind(objects, "Deployment")[0]["spec"]["selector"]


def test_the_router_metrics_are_scraped_when_monitoring_is_on() -> None:
    objects = objects_of(**ROUTED, monitoring={"enabled": True, "release": "monitoring"})
    (monitor,) = by_kind(objects, "ServiceMonitor")
    assert monitor["spec"]["endpoints"][0]["port"] == "metrics"


def test_the_route_goes_to_the_router_service_when_routing_is_on() -> None:
    objects = objects_of(**ROUTED, security={"require_api_key": True}, exposure={"gateway": GATEWAY})
    (route,) = [o for o in objects if o["kind"] == "HTTPRoute"]
    (service,) = by_kind(objects, "Service")
    assert route["spec"]["rules"][0]["backendRefs"][0]["name"] == service["metadata"]["name"]


def test_the_smoke_test_calls_the_router_when_routing_is_on() -> None:
    plan = plan_of(make_config(**ROUTED))
    assert plan.routing is not None
    assert plan.traffic.service_url == plan.routing.url


def test_the_server_pods_admit_the_router_pods() -> None:
    objects = objects_of(**ROUTED)
    (server_policy,) = by_kind(objects, "NetworkPolicy", "server")
    router_pods = by_kind(objects, "Deployment")[0]["spec"]["selector"]
    assert any(rule["from"] == [{"podSelector": router_pods}] for rule in server_policy["spec"]["ingress"])


def test_the_router_may_reach_only_dns_the_servers_and_the_api_server() -> None:
    objects = objects_of(**{**ROUTED, "routing": {"enabled": True, "api_server_cidrs": ["10.0.0.1/32"]}})
    (policy,) = by_kind(objects, "NetworkPolicy")
    servers = [{"podSelector": {"matchLabels": by_kind(objects, "Service", "server")[0]["spec"]["selector"]}}]
    destinations = [rule["to"] for rule in policy["spec"]["egress"]]
    dns = [to for to in destinations if to not in (servers, [{"ipBlock": {"cidr": "10.0.0.1/32"}}])]
    assert servers in destinations and [{"ipBlock": {"cidr": "10.0.0.1/32"}}] in destinations
    assert all("kube-dns" in str(to) for to in dns)  # and nothing else


def test_routing_on_the_docker_target_is_refused_with_the_fix() -> None:
    with pytest.raises(ConfigError, match=r"vllm-serving:routing\.enabled: is true, but target is 'docker'"):
        make_config(**ROUTED, target="docker", docker={"host": "ssh://gpu-host"})


def test_routing_to_an_inference_pool_is_refused_naming_the_key() -> None:
    gateway = {**GATEWAY, "backend": "InferencePool", "endpoint_picker": {"service": "epp"}}
    with pytest.raises(ConfigError, match=r"vllm-serving:exposure\.gateway\.backend"):
        make_config(**ROUTED, security={"require_api_key": True}, exposure={"gateway": gateway})


def test_a_bad_api_server_cidr_is_refused_naming_the_key() -> None:
    with pytest.raises(ConfigError, match=r"vllm-serving:routing\.api_server_cidrs"):
        make_config(routing={"enabled": True, "api_server_cidrs": ["10.0.0.1/8"]})


def test_every_router_version_the_config_accepts_has_a_flag_table() -> None:
    versions = RoutingConfig.model_fields["version"].annotation.__args__  # type: ignore[union-attr]
    assert all(router_flags(version).version == version for version in versions)


def test_a_server_the_router_marks_unhealthy_raises_an_alert_when_alerts_are_on() -> None:
    objects = objects_of(**ROUTED, monitoring={"enabled": True, "release": "monitoring", "alerts": True})
    (rule,) = by_kind(objects, "PrometheusRule")
    alert = rule["spec"]["groups"][0]["rules"][0]
    assert alert["expr"].startswith("min by (worker) (vllm_router_worker_health{")


# A shared endpoint (routing.endpoint): one router for the servers of several stacks in one namespace.
FLEET = {"namespace": {"name": "llm"}, "replicas": 2, "security": {"require_api_key": False}}


def fleet_stack(instance: str, routed: bool, model: str) -> Any:
    cfg = make_config(**FLEET, engine={"served_model_name": model}, routing={"enabled": routed, "endpoint": "fleet"})
    return plan_of(cfg, instance)


def test_the_endpoint_s_router_discovers_every_stack_s_servers_by_the_endpoint_label() -> None:
    routing = fleet_stack("alpha", True, "alpha").routing
    assert routing is not None
    selector = routing.args[routing.args.index("--selector") + 1 : routing.args.index("--service-discovery-namespace")]
    assert "vllm-serving/endpoint=fleet" in selector and not [s for s in selector if "instance" in s]


def test_the_endpoint_s_router_routes_by_model_in_igw_mode() -> None:
    routing = fleet_stack("alpha", True, "alpha").routing
    assert routing is not None and "--enable-igw" in routing.args


def test_a_stack_joining_an_endpoint_labels_its_servers_with_it_and_runs_no_router() -> None:
    member = fleet_stack("beta", False, "beta")
    assert member.routing is None and member.server.labels["vllm-serving/endpoint"] == "fleet"


def test_the_endpoint_s_router_reaches_the_servers_of_another_stack_and_other_pods_do_not() -> None:
    owner, member = fleet_stack("alpha", True, "alpha"), fleet_stack("beta", False, "beta")
    policies = [
        *render_network_policies(owner.identity, owner.traffic),
        *render_network_policies(member.identity, member.traffic),
    ]
    assert owner.routing is not None
    router = Pod("router", "llm", owner.routing.labels, "10.1.0.50")
    beta_server = Pod("beta", "llm", member.server.labels, "10.1.0.11")
    alpha_server = Pod("alpha", "llm", owner.server.labels, "10.1.0.10")
    stranger = Pod("stranger", "llm", {"app.kubernetes.io/component": "router"}, "10.1.0.60")
    assert allowed(policies, router, beta_server, member.server.port)
    assert allowed(policies, router, alpha_server, owner.server.port)
    assert not allowed(policies, stranger, alpha_server, owner.server.port)


def test_an_endpoint_without_a_shared_namespace_is_refused_naming_the_key() -> None:
    with pytest.raises(ConfigError) as error:
        make_config(routing={"enabled": True, "endpoint": "fleet"}, replicas=2)
    assert [issue.key for issue in error.value.issues] == ["routing.endpoint"]


def test_an_endpoint_with_api_keys_is_refused_because_the_router_cannot_learn_the_models() -> None:
    with pytest.raises(ConfigError) as error:
        make_config(**{**FLEET, "security": {"require_api_key": True}}, routing={"enabled": True, "endpoint": "fleet"})
    assert [issue.key for issue in error.value.issues] == ["routing.endpoint"]


@pytest.mark.parametrize("address", ["10.100.0.1", "fd00:10:96::1"], ids=["IPv4", "IPv6"])
def test_without_api_server_cidrs_the_router_reaches_the_api_server_at_any_address(address: str) -> None:
    """An IPv6 cluster's `kubernetes` Service and API server endpoints are IPv6 addresses, which an IPv4 ipBlock
    never matches (tests/reachability.py in_block)."""
    objects = objects_of(**ROUTED)
    router = by_kind(objects, "Deployment")[0]["spec"]["template"]["metadata"]
    source = Pod("router", objects[0]["metadata"]["name"], router["labels"])
    policies = [o for o in objects if o["kind"] == "NetworkPolicy"]
    assert allowed(policies, source, Host("kube-apiserver", address), 443)


def test_the_router_pod_is_given_its_sleep_and_request_bound_to_finish_what_it_proxies_before_the_kubelet_kills_it() -> None:
    (deployment,) = by_kind(objects_of(routing={"enabled": True, "request_timeout_secs": 900}), "Deployment")
    assert deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 10 + 900 + 5


def router_container(**changes: Any) -> dict[str, Any]:
    (deployment,) = by_kind(objects_of(**{**ROUTED, **changes}), "Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return dict(container)


def test_the_router_sleeps_before_sigterm_so_the_endpoints_drop_it_before_it_stops_accepting() -> None:
    assert router_container()["lifecycle"] == {"preStop": {"exec": {"command": ["sleep", "10"]}}}


def test_the_router_sleeps_as_long_as_the_server_does() -> None:
    server = {"pre_stop_sleep_seconds": 25}
    assert router_container(server=server)["lifecycle"]["preStop"]["exec"]["command"] == ["sleep", "25"]
    assert routed(server=server).termination_grace_period_seconds == 25 + 1800 + 5
