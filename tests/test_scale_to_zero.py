"""Scale to zero behind the KEDA HTTP add-on (docs/scale-to-zero.md): the HTTPScaledObject, the route and the
smoke test through the interceptor, the flows, the feasibility of a cold start against the request path's
longest wait, the cluster check of the add-on, and the refusals naming the key."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from catalog import keda_http
from cli.preflight import main
from cluster.checks import AddOnNeeds, check_http_add_on
from components.render.dashboard import render_dashboard
from components.render.exposure import curl_command
from components.render.manifests import stack_manifests
from components.render.network_policy import render_network_policies
from config.errors import ConfigError
from config.observability import HttpAddOnConfig
from plan import Plan
from reading.numbers import go_duration_seconds
from tests.cluster_facts import crd, facts, fixture
from tests.factories import REPO, STACKS, example_stack, load_stack_file
from tests.kubernetes_fixtures import plan_of
from tests.promtool import crd_errors
from tests.reachability import Pod, allowed
from validation import assess
from validation.cluster import capacity_needs, check_snapshots
from validation.keys import validate_config

EXAMPLE = STACKS / "examples" / "Pulumi.dev-scale-to-zero.yaml"
ZERO = {"enabled": True, "min_replica_count": 0, "http_add_on": {}}


def example_raw(**changes: Any) -> dict[str, Any]:
    """The dev scale-to-zero example's keys, groups changed one level deep."""
    raw = example_stack("dev-scale-to-zero").model_dump(exclude_unset=True)
    for key, value in changes.items():
        raw[key] = {**raw.get(key, {}), **value} if isinstance(value, dict) else value
    return raw


def example_plan(**changes: Any) -> Plan:
    return plan_of(validate_config(example_raw(**changes)))


def objects(plan: Plan, kind: str) -> list[dict[str, Any]]:
    return [o for o in stack_manifests(plan) if o["kind"] == kind]


def issue_keys(raw: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        validate_config(raw)
    return [issue.key for issue in caught.value.issues]


def assessed_issues(raw: dict[str, Any]) -> list[str]:
    return [issue.render() for issue in assess(validate_config(raw)).issues]


# --- the HTTPScaledObject ------------------------------------------------------------------------------


def test_the_dev_example_renders_an_http_scaled_object_valid_against_the_add_ons_crd() -> None:
    (scaled,) = objects(example_plan(), "HTTPScaledObject")
    assert crd_errors(scaled, "http.keda.sh_httpscaledobjects.yaml") == []


def test_the_http_scaled_object_sets_exactly_one_of_port_and_port_name_as_its_cel_rule_asks() -> None:
    (scaled,) = objects(example_plan(), "HTTPScaledObject")
    target = scaled["spec"]["scaleTargetRef"]
    assert ("port" in target) != ("portName" in target)


def test_the_add_on_replaces_the_scaled_object_rather_than_adding_a_second_one_on_the_same_target() -> None:
    assert objects(example_plan(), "ScaledObject") == []


def test_the_http_scaled_object_scales_the_server_from_zero_and_waits_on_its_service() -> None:
    plan = example_plan()
    (scaled,) = objects(plan, "HTTPScaledObject")
    spec = scaled["spec"]
    assert (spec["replicas"], spec["scaleTargetRef"]) == (
        {"min": 0, "max": 2},
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": plan.identity.names.server,
            "service": plan.identity.names.server,
            "port": plan.server.port,
        },
    )


def test_the_last_replica_goes_after_the_idle_period() -> None:
    (scaled,) = objects(example_plan(autoscaling={"http_add_on": {"scaledown_period_seconds": 1200}}), "HTTPScaledObject")
    assert scaled["spec"]["scaledownPeriod"] == 1200


def test_the_condition_wait_is_the_cold_starts_budget_capped_by_the_longest_wait() -> None:
    plan = example_plan()
    zero = plan.zero
    assert zero is not None
    (scaled,) = objects(plan, "HTTPScaledObject")
    expected = min(zero.cold_start.budget_seconds, 600)
    assert scaled["spec"]["timeouts"] == {"conditionWait": f"{expected}s", "responseHeader": "600s"}


def test_a_longer_wait_lets_the_condition_wait_cover_the_whole_budget() -> None:
    plan = example_plan(
        autoscaling={"http_add_on": {"client_timeout_seconds": 3600}},
        exposure={"gateway": {**example_raw()["exposure"]["gateway"], "request_timeout_seconds": 3600}},
    )
    assert plan.zero is not None
    (scaled,) = objects(plan, "HTTPScaledObject")
    assert scaled["spec"]["timeouts"]["conditionWait"] == f"{plan.zero.cold_start.budget_seconds}s"


def test_the_concurrency_target_is_the_derived_running_threshold() -> None:
    plan = example_plan()
    (scaled,) = objects(plan, "HTTPScaledObject")
    assert scaled["spec"]["scalingMetric"] == {"concurrency": {"targetValue": int(plan.scaling.thresholds.running)}}


# --- the route, the ReferenceGrant, the smoke test -------------------------------------------------------


def test_the_route_goes_to_the_interceptor_in_the_add_ons_namespace_with_the_host_it_routes_on() -> None:
    plan = example_plan()
    (route,) = objects(plan, "HTTPRoute")
    (rule,) = route["spec"]["rules"]
    (scaled,) = objects(plan, "HTTPScaledObject")
    assert (rule["backendRefs"], rule["filters"]) == (
        [{"group": "", "kind": "Service", "name": keda_http.INTERCEPTOR_SERVICE, "namespace": "keda", "port": 8080}],
        [{"type": "URLRewrite", "urlRewrite": {"hostname": scaled["spec"]["hosts"][0]}}],
    )


def test_the_route_is_valid_against_the_gateway_api_crd() -> None:
    (route,) = objects(example_plan(), "HTTPRoute")
    assert crd_errors(route, "gateway.networking.k8s.io_httproutes.yaml") == []


def test_a_reference_grant_in_the_add_ons_namespace_admits_the_route_to_the_interceptor_service_only() -> None:
    plan = example_plan()
    (grant,) = objects(plan, "ReferenceGrant")
    assert (grant["metadata"]["namespace"], grant["spec"]) == (
        "keda",
        {
            "from": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": plan.identity.namespace}],
            "to": [{"group": "", "kind": "Service", "name": keda_http.INTERCEPTOR_SERVICE}],
        },
    )


def test_the_reference_grant_is_valid_against_the_gateway_api_crd() -> None:
    (grant,) = objects(example_plan(), "ReferenceGrant")
    assert crd_errors(grant, "gateway.networking.k8s.io_referencegrants.yaml") == []


def smoke_args(plan: Plan) -> list[str]:
    (job,) = objects(plan, "Job")[-1:]
    return list(job["spec"]["template"]["spec"]["containers"][0]["command"])


def test_the_smoke_test_calls_the_interceptor_with_the_routed_host() -> None:
    plan = example_plan()
    args = smoke_args(plan)
    assert plan.zero is not None
    assert (args[args.index("--base-url") + 1], args[args.index("--host") + 1]) == (
        "http://keda-add-ons-http-interceptor-proxy.keda.svc:8080",
        plan.zero.route_host,
    )


def test_the_smoke_tests_bound_waits_out_the_cold_start_first() -> None:
    plan = example_plan()
    assert plan.zero is not None and plan.traffic.smoke is not None
    args = smoke_args(plan)
    assert float(args[args.index("--timeout-seconds") + 1]) == 120 + plan.zero.condition_wait_seconds


def test_the_curl_without_exposure_forwards_to_the_interceptor_and_sends_the_host() -> None:
    plan = example_plan(exposure={"gateway": None})
    curl = curl_command(plan.identity, plan.traffic)
    assert "kubectl port-forward -n keda svc/keda-add-ons-http-interceptor-proxy 8080:8080" in curl
    assert f"-H 'Host: {plan.identity.names.server}.{plan.identity.namespace}.svc'" in curl


# --- the flows -------------------------------------------------------------------------------------------


def pod_of(plan: Plan, component: str) -> Pod:
    return Pod(component, plan.identity.namespace, plan.identity.labels(component), named_ports={"http": plan.server.port})


INTERCEPTOR = Pod("interceptor", "keda", dict(keda_http.INTERCEPTOR_POD_LABELS), ip="10.1.0.20")
GATEWAY_PROXY = Pod("proxy", "gateway-system", {"gateway.networking.k8s.io/gateway-name": "inference-gateway"}, ip="10.1.0.30")


def test_the_interceptor_reaches_the_server_on_its_api_port() -> None:
    plan = example_plan()
    policies = render_network_policies(plan.identity, plan.traffic)
    assert allowed(policies, INTERCEPTOR, pod_of(plan, "server"), plan.server.port)


def test_the_gateways_proxy_no_longer_reaches_the_server_directly() -> None:
    plan = example_plan()
    policies = render_network_policies(plan.identity, plan.traffic)
    assert not allowed(policies, GATEWAY_PROXY, pod_of(plan, "server"), plan.server.port)


def test_the_smoke_test_reaches_the_interceptor_and_not_the_server() -> None:
    plan = example_plan()
    policies = render_network_policies(plan.identity, plan.traffic)
    smoke = pod_of(plan, "smoke-test")
    assert (
        allowed(policies, smoke, INTERCEPTOR, 8080),
        allowed(policies, smoke, pod_of(plan, "server"), plan.server.port),
    ) == (
        True,
        False,
    )


# --- feasibility -----------------------------------------------------------------------------------------


def test_an_8b_streamed_from_a_bucket_fits_a_ten_minute_wait() -> None:
    zero = example_plan().zero
    assert zero is not None
    assert (zero.longest_wait.seconds, zero.fits, zero.cold_start.seconds <= 600) == (600, True, True)


def test_the_cold_start_adds_node_provisioning_image_pull_load_engine_start_and_compile() -> None:
    plan = example_plan()
    zero = plan.zero
    assert zero is not None
    terms = {t.name: t.seconds for t in plan.delivery.budget.terms}
    expected = 120 + terms["image pull"] + terms["load"] + terms["engine start"] + terms["compile + graphs"]
    assert zero.cold_start.seconds == -int(-expected // 1)


def prod_at_zero(**autoscaling: Any) -> dict[str, Any]:
    raw = load_stack_file(STACKS / "examples" / "Pulumi.prod-on-efs.yaml").model_dump(exclude_unset=True)
    raw["autoscaling"] = {**raw["autoscaling"], **ZERO, **autoscaling}
    return raw


def test_prod_with_weights_on_efs_is_refused_at_zero_naming_the_cold_start_and_the_wait() -> None:
    raw = prod_at_zero()
    zero = plan_of(validate_config(raw)).zero
    assert zero is not None
    (message,) = assessed_issues(raw)
    assert (
        message.startswith("vllm-serving:autoscaling.min_replica_count: is 0, but a start from zero takes "),
        f"{zero.cold_start.seconds} s" in message,
        "600 s (autoscaling.http_add_on.client_timeout_seconds)" in message,
        "autoscaling.min_replica_count: 1" in message,
    ) == (True, True, True, True)


def test_prod_at_zero_is_a_config_error_not_a_deploy() -> None:
    assert assess(validate_config(prod_at_zero())).outcome.name == "CONFIG_ERROR"


def test_prod_keeping_one_replica_behind_the_add_on_is_accepted() -> None:
    assert assessed_issues(prod_at_zero(min_replica_count=1)) == []


def test_the_gateways_default_request_timeout_binds_and_is_named_as_the_key_to_raise() -> None:
    gateway = {**example_raw()["exposure"]["gateway"], "request_timeout_seconds": 300}
    (message,) = assessed_issues(example_raw(exposure={"gateway": gateway}))
    assert (
        "300 s (exposure.gateway.request_timeout_seconds)" in message
        and "raise exposure.gateway.request_timeout_seconds" in message
    )


def test_the_interceptors_install_wide_request_timeout_bounds_the_wait_too() -> None:
    (message,) = assessed_issues(example_raw(autoscaling={"http_add_on": {"request_timeout_seconds": 120}}))
    assert "120 s (autoscaling.http_add_on.request_timeout_seconds)" in message


# --- refusals, naming the key ------------------------------------------------------------------------------


def test_zero_without_the_add_on_is_refused_with_the_fix() -> None:
    raw = example_raw(autoscaling={"http_add_on": None})
    with pytest.raises(ConfigError) as caught:
        validate_config(raw)
    (issue,) = caught.value.issues
    assert (issue.key, "autoscaling.http_add_on" in issue.fix) == ("autoscaling.min_replica_count", True)


def test_an_ingress_cannot_reach_the_interceptor_in_another_namespace() -> None:
    ingress = {"class_name": "nginx", "host": "llm.example.com", "controller_namespace": "ingress-nginx"}
    assert issue_keys(example_raw(exposure={"gateway": None, "ingress": ingress})) == ["exposure.ingress"]


def test_an_inference_pool_would_bypass_the_interceptor() -> None:
    picker = {"service": "vllm-dev-epp"}  # with its picker, so the interceptor is the only reason
    gateway = {**example_raw()["exposure"]["gateway"], "backend": "InferencePool", "endpoint_picker": picker}
    assert issue_keys(example_raw(exposure={"gateway": gateway})) == ["exposure.gateway.backend"]


def test_the_router_in_front_is_refused_because_its_service_is_ready_while_no_server_is() -> None:
    assert issue_keys(example_raw(routing={"enabled": True})) == ["routing.enabled"]


def test_an_add_on_older_than_0_14_is_refused() -> None:
    assert issue_keys(example_raw(autoscaling={"http_add_on": {"version": "0.12.2"}})) == ["autoscaling.http_add_on.version"]


def test_the_add_on_without_autoscaling_is_refused() -> None:
    keys = issue_keys(example_raw(autoscaling={"enabled": False, "min_replica_count": 1}))
    assert keys == ["autoscaling.http_add_on"]


def test_a_negative_node_provisioning_time_is_refused_naming_the_key() -> None:
    keys = issue_keys(example_raw(autoscaling={"http_add_on": {"node_provisioning_seconds": -1}}))
    assert keys == ["autoscaling.http_add_on.node_provisioning_seconds"]


def test_an_unknown_add_on_key_is_refused_naming_it() -> None:
    keys = issue_keys(example_raw(autoscaling={"http_add_on": {"interceptor_timeout": 5}}))
    assert keys == ["autoscaling.http_add_on.interceptor_timeout"]


# --- the cluster check -------------------------------------------------------------------------------------

NEEDS = AddOnNeeds("0.15.0", "keda", None)


def interceptor(image: str, env: list[dict[str, str]] | None = None, namespace: str = "keda") -> dict[str, Any]:
    container: dict[str, Any] = {"name": "interceptor", "image": image, "env": env or []}
    return {
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {"name": "keda-add-ons-http-interceptor", "namespace": namespace},
        "spec": {"template": {"spec": {"containers": [container]}}},
    }


def levels(*items: dict[str, Any], needs: AddOnNeeds = NEEDS) -> list[str]:
    return [f.level for f in check_http_add_on(facts(*items), needs)]


def test_without_the_add_ons_crd_zero_is_blocked_with_the_install_command() -> None:
    (finding,) = check_http_add_on(facts(), NEEDS)
    assert (finding.level, "helm install http-add-on kedacore/keda-add-ons-http -n keda" in finding.fix) == ("block", True)


def test_the_stated_release_running_in_the_stated_namespace_passes() -> None:
    image = "ghcr.io/kedacore/http-add-on-interceptor:0.15.0"
    assert levels(crd(keda_http.HTTP_SCALED_OBJECT_CRD), interceptor(image)) == ["ok"]


def test_an_interceptor_older_than_0_14_blocks() -> None:
    image = "ghcr.io/kedacore/http-add-on-interceptor:0.12.2"
    assert levels(crd(keda_http.HTTP_SCALED_OBJECT_CRD), interceptor(image)) == ["block"]


def test_an_interceptor_in_another_namespace_blocks_naming_the_key() -> None:
    image = "ghcr.io/kedacore/http-add-on-interceptor:0.15.0"
    (finding,) = check_http_add_on(facts(crd(keda_http.HTTP_SCALED_OBJECT_CRD), interceptor(image, namespace="addons")), NEEDS)
    assert (finding.level, finding.fix) == ("block", "set autoscaling.http_add_on.namespace: addons.")


def test_an_install_wide_request_timeout_the_stack_does_not_state_warns_with_its_seconds() -> None:
    image = "ghcr.io/kedacore/http-add-on-interceptor:0.15.0"
    env = [{"name": "KEDA_HTTP_REQUEST_TIMEOUT", "value": "5m"}]
    (finding,) = check_http_add_on(facts(crd(keda_http.HTTP_SCALED_OBJECT_CRD), interceptor(image, env)), NEEDS)
    assert (finding.level, finding.fix) == ("warn", "set autoscaling.http_add_on.request_timeout_seconds: 300.")


@pytest.mark.parametrize(("text", "seconds"), [("300s", 300.0), ("1h30m", 5400.0), ("500ms", 0.5), ("0s", 0.0), ("5 m", None)])
def test_go_durations_read_as_seconds(text: str, seconds: float | None) -> None:
    assert go_duration_seconds(text) == seconds


# --- dashboard, report, docs ---------------------------------------------------------------------------------


def test_the_dashboard_shows_the_requests_held_at_the_interceptor_for_this_route() -> None:
    plan = example_plan()
    board = render_dashboard(plan.monitoring, plan.scaling.workload, plan.zero)
    exprs = [t["expr"] for p in board["panels"] for t in p["targets"]]
    assert (
        f'sum(interceptor_request_concurrency{{route_name="{plan.identity.instance}",route_namespace="{plan.identity.namespace}"}})'
        in exprs
    )


def test_the_preflight_json_reports_the_cold_start_and_the_longest_wait(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(EXAMPLE), "--json"]) == 0
    zero = json.loads(capsys.readouterr().out)["scale_to_zero"]
    assert (zero["fits"], zero["longest_wait"]) == (
        True,
        {"key": "autoscaling.http_add_on.client_timeout_seconds", "seconds": 600},
    )


def test_the_docs_state_the_cold_starts_the_program_computes() -> None:
    page = (REPO / "docs" / "scale-to-zero.md").read_text(encoding="utf-8")
    dev = example_plan().zero
    prod = plan_of(validate_config(prod_at_zero())).zero
    assert dev is not None and prod is not None
    stated = set(map(int, re.findall(r"cold\s+start\s+from\s+zero\s+of\s+(\d+)\s+s", page)))
    assert stated == {dev.cold_start.seconds, prod.cold_start.seconds}


def test_the_capacity_check_asks_room_for_one_replica_at_zero() -> None:
    assert capacity_needs(example_plan()).min_replicas == 1


def test_without_monitoring_the_add_on_still_scales_because_it_counts_requests_itself() -> None:
    assert assessed_issues(example_raw(monitoring={"enabled": False})) == []


def test_without_monitoring_the_prometheus_scaled_object_is_still_refused() -> None:
    raw = example_raw(autoscaling={"min_replica_count": 1, "http_add_on": None}, monitoring={"enabled": False})
    assert "autoscaling.enabled" in issue_keys(raw)


# --- the InterceptorRoute (v1beta1) ---------------------------------------------------------------------------


def route_plan() -> Plan:
    return example_plan(autoscaling={"http_add_on": {"resource": "InterceptorRoute"}})


def test_an_interceptor_route_is_valid_against_the_add_ons_crd() -> None:
    (route,) = objects(route_plan(), "InterceptorRoute")
    assert crd_errors(route, "http.keda.sh_interceptorroutes.yaml") == []


def test_the_interceptor_routes_scaled_object_is_valid_against_the_keda_crd() -> None:
    (scaled,) = objects(route_plan(), "ScaledObject")
    assert crd_errors(scaled, "keda.sh_scaledobjects.yaml") == []


def test_the_interceptor_routes_scaled_object_triggers_on_the_add_ons_external_scaler_only() -> None:
    plan = route_plan()
    (scaled,) = objects(plan, "ScaledObject")
    assert (scaled["spec"]["minReplicaCount"], scaled["spec"]["cooldownPeriod"], scaled["spec"]["triggers"]) == (
        0,
        900,
        [
            {
                "type": "external-push",
                "metadata": {
                    "interceptorRoute": plan.identity.instance,
                    "scalerAddress": "keda-add-ons-http-external-scaler.keda:9090",
                },
            }
        ],
    )


def test_the_interceptor_route_waits_for_readiness_as_long_as_the_http_scaled_object_would() -> None:
    plan = route_plan()
    assert plan.zero is not None
    (route,) = objects(plan, "InterceptorRoute")
    assert (route["spec"]["timeouts"]["readiness"], objects(plan, "HTTPScaledObject")) == (
        f"{plan.zero.condition_wait_seconds}s",
        [],
    )


def test_with_an_interceptor_route_the_cluster_check_looks_for_its_crd() -> None:
    needs = AddOnNeeds("0.15.0", "keda", None, keda_http.INTERCEPTOR_ROUTE_CRD)
    (finding,) = check_http_add_on(facts(crd(keda_http.HTTP_SCALED_OBJECT_CRD)), needs)
    assert (finding.level, keda_http.INTERCEPTOR_ROUTE_CRD in finding.message) == ("block", True)


def test_a_route_without_a_request_timeout_is_refused_at_zero_since_the_gateways_own_is_unknown() -> None:
    gateway = {**example_raw()["exposure"]["gateway"], "request_timeout_seconds": None}
    assert issue_keys(example_raw(exposure={"gateway": gateway})) == ["exposure.gateway.request_timeout_seconds"]


def test_the_cluster_check_on_a_snapshot_without_the_add_on_blocks_and_skips_the_fallback_release_advice() -> None:
    result = check_snapshots(example_plan(), [fixture("eks-karpenter-scale-from-zero")])
    found = {(f.check, f.level) for f in result.findings}
    assert ("keda-http-add-on", "block") in found and ("keda", "warn") not in found


def test_the_docs_state_the_add_ons_defaults_the_config_has() -> None:
    page = " ".join((REPO / "docs" / "scale-to-zero.md").read_text(encoding="utf-8").split())
    defaults = HttpAddOnConfig()
    stated = (
        f"`scaledown_period_seconds` idle ({defaults.scaledown_period_seconds} by default)",
        f"(`http_add_on.node_provisioning_seconds`, {defaults.node_provisioning_seconds} by default",
        f"(`http_add_on.client_timeout_seconds`, {defaults.client_timeout_seconds})",
        f"(`keda-add-ons-http-interceptor-proxy:{defaults.interceptor_port}` by default)",
    )
    assert [claim for claim in stated if claim not in page] == []


def server_service(plan: Plan) -> dict[str, Any]:
    (service,) = [s for s in objects(plan, "Service") if s["metadata"]["name"] == plan.identity.names.server]
    return service


def test_the_server_service_at_zero_is_not_awaited_since_pulumi_waits_for_a_pod_it_selects() -> None:
    """pulumi-kubernetes awaits a ClusterIP Service until its Endpoints hold a pod (docs/sources.md §S8.2): at zero
    replicas that is never, and every `pulumi up` would fail on it after ten minutes."""
    plan = example_plan()
    assert (plan.server.replicas, server_service(plan)["metadata"]["annotations"]) == (0, {"pulumi.com/skipAwait": "true"})


def test_a_server_service_keeping_a_replica_behind_the_add_on_is_awaited() -> None:
    plan = example_plan(autoscaling={**ZERO, "min_replica_count": 1})
    assert "annotations" not in server_service(plan)["metadata"]
