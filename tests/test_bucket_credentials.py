"""A bucket read with neither a Secret nor a workload identity: the streamer's SDK would ask the node's instance
metadata service, which the server's egress policy keeps closed, so the stack is refused naming the key; with the
policy off it is accepted with a warning that the node's own role reads it (validation/delivery.py,
plan/delivery.py node_credentials_warnings, docs/sources.md §S12)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.factories import make_config
from tests.kubernetes_fixtures import plan_of
from tests.reachability import allowed
from tests.test_deployable import refusal
from tests.test_landing import refusals, refused_key
from tests.test_platform_flows import GKE_METADATA, with_profile

URI = "gs://models/llama-3.1-8b-instruct/"
NO_CREDENTIALS = {"mode": "object_storage", "object_storage": {"uri": URI}}
# Each way of giving the server credentials (docs/model-delivery.md), on a bucket its client reads them for.
CREDENTIALS: dict[str, dict[str, Any]] = {
    "a Secret": {"uri": "s3://models/llama/", "credentials_secret": "bucket-keys"},
    "IRSA": {
        "uri": "s3://models/llama/",
        "service_account_annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/r"},
    },
    "GKE Workload Identity": {
        "uri": URI,
        "service_account_annotations": {"iam.gke.io/gcp-service-account": "r@p.iam.gserviceaccount.com"},
    },
    "Azure Workload Identity": {
        "uri": "az://models/llama/",
        "azure_storage_account": "mymodels",
        "service_account_annotations": {"azure.workload.identity/client-id": "0" * 8},
    },
    "EKS Pod Identity": {"uri": "s3://models/llama/", "workload_identity": "eks-pod-identity"},
    "a GKE principal granted to the ServiceAccount": {"uri": URI, "workload_identity": "gke-workload-identity"},
}


def bucket(**fields: Any) -> dict[str, Any]:
    return {"mode": "object_storage", "object_storage": {"uri": URI, **fields}}


def test_a_bucket_with_neither_a_secret_nor_an_identity_is_refused_naming_the_key() -> None:
    issue = refused_key("delivery.object_storage", delivery=NO_CREDENTIALS)
    assert repr(URI) in issue.message and "169.254.169.254" in issue.message


def test_the_refusal_names_every_way_to_give_the_server_credentials() -> None:
    fix = refused_key("delivery.object_storage", delivery=NO_CREDENTIALS).fix
    for key in ("eks.amazonaws.com/role-arn", "iam.gke.io/gcp-service-account", "azure.workload.identity/client-id"):
        assert key in fix
    assert "workload_identity" in fix and "credentials_secret" in fix


def test_a_long_uri_is_truncated_in_the_refusal() -> None:
    long_uri = "gs://models/" + "a" * 200 + "/"
    issue = refused_key("delivery.object_storage", delivery={"mode": "object_storage", "object_storage": {"uri": long_uri}})
    assert long_uri not in issue.message and long_uri[:60] in issue.message


@pytest.mark.parametrize("way", sorted(CREDENTIALS))
def test_a_bucket_with_credentials_is_accepted(way: str) -> None:
    assert refusals(delivery=bucket(**CREDENTIALS[way])) == []


def test_the_program_registers_nothing_for_a_bucket_without_credentials() -> None:
    error, registered = refusal({"delivery": NO_CREDENTIALS})
    assert "delivery.object_storage" in error and registered == 0


def test_with_the_egress_policy_off_the_node_role_read_is_accepted_with_a_warning() -> None:
    warnings = plan_of(make_config(delivery=NO_CREDENTIALS, network_policy={"enabled": False})).delivery.warnings
    assert [w for w in warnings if "node's own credentials" in w and repr(URI) in w]


def test_a_bucket_with_credentials_gets_no_node_role_warning() -> None:
    cfg = make_config(delivery=bucket(**CREDENTIALS["IRSA"]), network_policy={"enabled": False})
    assert not [w for w in plan_of(cfg).delivery.warnings if "node's own credentials" in w]


def test_a_gke_principal_named_without_an_annotation_reaches_the_metadata_server() -> None:
    stack = with_profile("gke", delivery=bucket(workload_identity="gke-workload-identity"))
    assert allowed(stack.policies, stack.leader, GKE_METADATA, 80)
