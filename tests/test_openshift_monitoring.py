"""OpenShift's monitoring for user-defined projects: the monitors and rules land where the user-workload
Prometheus selects them (no `release` label), and KEDA (the Custom Metrics Autoscaler) queries the Thanos
Querier's tenancy port with a bearer token through a TriggerAuthentication, a token Secret, a ServiceAccount
and a Role reading the namespace's metrics (openshift/openshift-docs
modules/nodes-cma-autoscaling-custom-prometheus-config.adoc@02546003; docs/sources.md §S8).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from components.render.manifests import stack_manifests
from config.stack import StackConfig
from plan.flows import ROLLOUT_GATE, Pods
from tests.cluster_facts import crd, facts, prometheus
from tests.factories import example_stack, make_config
from tests.kubernetes_fixtures import plan_of
from tests.promtool import crd_errors
from tests.test_offline_render import key, kubernetes_objects, offline_objects, plain
from validation.cluster import check_cluster
from validation.keys import validate_config

THANOS = "https://thanos-querier.openshift-monitoring.svc.cluster.local:9092"
AUTOSCALED = {"autoscaling": {"enabled": True, "min_replica_count": 1, "max_replica_count": 3}}
RDMA_EXAMPLE = "llama-405b-on-2x8-a100-80gb"
COMPONENT = "app.kubernetes.io/component"


def objects_of(cfg: StackConfig) -> list[dict[str, Any]]:
    return stack_manifests(plan_of(cfg))


def one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    """The one object of `kind` but the rollout gate's (its own account, Role and RoleBinding)."""
    (found,) = [o for o in objects if o["kind"] == kind and o["metadata"].get("labels", {}).get(COMPONENT) != ROLLOUT_GATE]
    return found


def openshift_405b() -> StackConfig:
    raw = example_stack(RDMA_EXAMPLE).model_dump(exclude_unset=True)
    multinode = {**raw["multinode"], "openshift_scc": "privileged"}
    return validate_config({**raw, "multinode": multinode, "cluster": {"profile": "openshift"}})


def test_on_openshift_the_triggers_query_the_thanos_querier_with_a_bearer_token_for_the_namespace() -> None:
    plan = plan_of(make_config(cluster={"profile": "openshift"}, **AUTOSCALED))
    objects = stack_manifests(plan)
    auth = one(objects, "TriggerAuthentication")
    for trigger in one(objects, "ScaledObject")["spec"]["triggers"]:
        metadata = trigger["metadata"]
        assert (metadata["serverAddress"], metadata["authModes"], metadata["namespace"]) == (
            THANOS,
            "bearer",
            plan.identity.namespace,
        )
        assert trigger["authenticationRef"] == {"name": auth["metadata"]["name"]}


def test_the_trigger_authentication_reads_the_token_and_ca_of_the_secret_bound_to_the_reader_account() -> None:
    objects = objects_of(make_config(cluster={"profile": "openshift"}, **AUTOSCALED))
    auth, secret, binding = one(objects, "TriggerAuthentication"), one(objects, "Secret"), one(objects, "RoleBinding")
    refs = {(r["parameter"], r["name"], r["key"]) for r in auth["spec"]["secretTargetRef"]}
    assert refs == {("bearerToken", secret["metadata"]["name"], "token"), ("ca", secret["metadata"]["name"], "ca.crt")}
    account = secret["metadata"]["annotations"]["kubernetes.io/service-account.name"]
    assert secret["type"] == "kubernetes.io/service-account-token"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account, "namespace": secret["metadata"]["namespace"]}]
    assert one(objects, "Role")["metadata"]["name"] == binding["roleRef"]["name"]


def test_the_reader_role_grants_what_the_tenancy_port_checks_and_nothing_to_write() -> None:
    role = one(objects_of(make_config(cluster={"profile": "openshift"}, **AUTOSCALED)), "Role")
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
        {"apiGroups": ["metrics.k8s.io"], "resources": ["pods", "nodes"], "verbs": ["get", "list", "watch"]},
    ]


@pytest.mark.parametrize(
    ("kind", "crd"),
    [("TriggerAuthentication", "keda.sh_triggerauthentications.yaml"), ("ScaledObject", "keda.sh_scaledobjects.yaml")],
)
def test_the_keda_objects_on_openshift_validate_strictly_against_the_keda_crds(kind: str, crd: str) -> None:
    objects = objects_of(make_config(cluster={"profile": "openshift"}, **AUTOSCALED))
    assert crd_errors(one(objects, kind), crd) == []


def test_an_explicit_server_address_on_openshift_renders_no_thanos_access() -> None:
    cfg = make_config(
        cluster={"profile": "openshift"}, autoscaling={**AUTOSCALED["autoscaling"], "server_address": "http://p:9090"}
    )
    objects = objects_of(cfg)
    assert "TriggerAuthentication" not in {o["kind"] for o in objects}
    assert "authenticationRef" not in one(objects, "ScaledObject")["spec"]["triggers"][0]


def test_other_profiles_query_their_prometheus_without_a_token() -> None:
    objects = objects_of(make_config(**AUTOSCALED))
    trigger = one(objects, "ScaledObject")["spec"]["triggers"][0]
    assert "authModes" not in trigger["metadata"] and "TriggerAuthentication" not in {o["kind"] for o in objects}


@pytest.mark.parametrize("kind", ["ServiceMonitor", "PrometheusRule"])
def test_on_openshift_the_monitors_and_rules_carry_no_release_label(kind: str) -> None:
    labels = one(objects_of(make_config(cluster={"profile": "openshift"})), kind)["metadata"]["labels"]
    assert "release" not in labels


def test_on_openshift_an_explicit_monitoring_release_is_kept() -> None:
    objects = objects_of(make_config(cluster={"profile": "openshift"}, monitoring={"release": "kps"}))
    assert one(objects, "ServiceMonitor")["metadata"]["labels"]["release"] == "kps"


def test_the_generic_profile_keeps_the_release_label() -> None:
    assert "release" in one(objects_of(make_config()), "ServiceMonitor")["metadata"]["labels"]


def test_the_flows_list_keda_querying_thanos_on_its_tenancy_port() -> None:
    flows = plan_of(make_config(cluster={"profile": "openshift"}, **AUTOSCALED)).traffic.flows.flows
    keda = [f for f in flows if f.reason == "KEDA's triggers query the Thanos Querier"]
    assert [(f.source, f.destination, f.ports[0].port) for f in keda] == [
        ((Pods((), ("openshift-keda",)),), (Pods((), ("openshift-monitoring",)),), 9092)
    ]


def test_without_autoscaling_no_keda_flow_is_listed() -> None:
    flows = plan_of(make_config(cluster={"profile": "openshift"})).traffic.flows.flows
    assert not [f for f in flows if "Thanos" in f.reason]


def test_the_405b_example_on_openshift_renders_the_scc_grant_and_the_thanos_access_as_the_program_registers(
    tmp_path: Path,
) -> None:
    raw = openshift_405b().model_dump(exclude_unset=True)
    path = tmp_path / "Pulumi.openshift-405b.yaml"
    path.write_text(yaml.safe_dump({"config": {f"vllm-serving:{k}": v for k, v in raw.items()}}))
    registered, offline = kubernetes_objects(path), offline_objects(path)
    assert sorted(registered) == sorted(key(obj) for obj in offline)
    assert {"TriggerAuthentication", "Role", "RoleBinding"} <= {obj["kind"] for obj in offline}
    for obj in offline:
        assert registered[key(obj)] == plain(obj), key(obj)


def test_the_cluster_check_accepts_keda_querying_thanos_where_the_user_workload_prometheus_selects_the_stack() -> None:
    # The user-workload Prometheus selects every monitor and rule of user projects: empty selectors.
    selects_all: dict[str, Any] = {
        f"{field}{part}": {} for field in ("serviceMonitor", "rule") for part in ("Selector", "NamespaceSelector")
    }
    items = [
        crd("servicemonitors.monitoring.coreos.com"),
        crd("prometheusrules.monitoring.coreos.com"),
        prometheus("user-workload", "openshift-user-workload-monitoring", selects_all),
    ]
    result = check_cluster(plan_of(make_config(cluster={"profile": "openshift"}, **AUTOSCALED)), facts(*items))
    assert [(f.level, f.message) for f in result.findings if f.check == "prometheus"] == [
        (
            "ok",
            "Prometheus openshift-user-workload-monitoring/user-workload selects the ServiceMonitor and the PrometheusRule.",
        )
    ]


def test_on_openshift_the_cluster_check_reads_keda_in_openshift_keda_unless_keda_namespace_is_set() -> None:
    assert make_config(cluster={"profile": "openshift"}).cluster.keda_operator_namespace == "openshift-keda"
    assert make_config(cluster={"profile": "openshift", "keda_namespace": "keda"}).cluster.keda_operator_namespace == "keda"
    assert make_config().cluster.keda_operator_namespace == "keda"
