"""Each workload identity renders what it needs and nothing more: the ServiceAccount annotation, the Azure pod
label, and egress to the token endpoint only of the identity in use (docs/sources.md §S8)."""

from __future__ import annotations

from typing import Any

import pytest

from components.render.manifests import render_manifests
from components.render.network_policy import render_network_policies
from plan import Plan
from tests.factories import make_config
from tests.kubernetes_fixtures import one, plan_of

AZURE_LABEL = "azure.workload.identity/use"
METADATA_BLOCKS = {"169.254.169.254/32", "169.254.169.252/32", "169.254.170.23/32"}
BUCKETS: dict[str, dict[str, Any]] = {
    "irsa": {
        "uri": "s3://models/llama/",
        "service_account_annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/r"},
    },
    "eks-pod-identity": {"uri": "s3://models/llama/", "workload_identity": "eks-pod-identity"},
    "gke-workload-identity": {
        "uri": "gs://models/llama/",
        "service_account_annotations": {"iam.gke.io/gcp-service-account": "sa@p.iam.gserviceaccount.com"},
    },
    "azure-workload-identity": {
        "uri": "az://models/llama/",
        "azure_storage_account": "mymodels",
        "service_account_annotations": {"azure.workload.identity/client-id": "00000000-0000-0000-0000-000000000000"},
    },
}


def plan_for(identity: str) -> Plan:
    return plan_of(make_config(delivery={"mode": "object_storage", "object_storage": BUCKETS[identity]}))


def objects(identity: str) -> list[dict[str, Any]]:
    return render_manifests(plan_for(identity))


def server_template_labels(identity: str) -> dict[str, str]:
    return one(objects(identity), "Deployment")["spec"]["template"]["metadata"]["labels"]


def metadata_egress(identity: str) -> set[tuple[str, int]]:
    plan = plan_for(identity)
    server = render_network_policies(plan.identity, plan.traffic)[0]
    return {
        (peer["ipBlock"]["cidr"], port["port"])
        for rule in server["spec"]["egress"]
        for peer in rule["to"]
        if "ipBlock" in peer and peer["ipBlock"]["cidr"] in METADATA_BLOCKS
        for port in rule["ports"]
    }


@pytest.mark.parametrize("identity", BUCKETS)
def test_the_identity_of_a_bucket_is_the_one_its_annotation_or_key_names(identity: str) -> None:
    assert plan_for(identity).delivery.workload_identity == identity


def test_azure_workload_identity_labels_the_server_pod_template_for_the_webhook() -> None:
    assert server_template_labels("azure-workload-identity")[AZURE_LABEL] == "true"


@pytest.mark.parametrize("identity", ["irsa", "eks-pod-identity", "gke-workload-identity"])
def test_other_identities_leave_the_azure_label_off(identity: str) -> None:
    assert AZURE_LABEL not in server_template_labels(identity)


def test_irsa_opens_no_metadata_endpoint_it_calls_public_sts_on_443() -> None:
    assert metadata_egress("irsa") == set()


def test_eks_pod_identity_reaches_its_agent_only() -> None:
    assert metadata_egress("eks-pod-identity") == {("169.254.170.23/32", 80)}


def test_gke_workload_identity_reaches_the_metadata_server_on_both_dataplanes_only() -> None:
    assert metadata_egress("gke-workload-identity") == {("169.254.169.254/32", 80), ("169.254.169.252/32", 988)}


def test_azure_workload_identity_opens_no_metadata_endpoint_its_token_is_projected() -> None:
    assert metadata_egress("azure-workload-identity") == set()


def test_a_shared_volume_stack_has_no_workload_identity() -> None:
    assert plan_of(make_config()).delivery.workload_identity is None
