"""A bucket endpoint_url naming a private endpoint (an AWS interface endpoint, an Azure private endpoint) resolves to
private addresses of the cluster's network, which the egress policy's Hub rule carves out: without
network_policy.private_endpoint_cidrs every read would be dropped, so the stack is refused naming that key; with them
the rendered egress reaches the endpoint's subnet (catalog/private_endpoints.py, validation/delivery.py)."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.private_endpoints import private_endpoint
from tests.reachability import Host, allowed
from tests.test_deployable import refusal
from tests.test_landing import refusals, refused_key
from tests.test_platform_flows import with_profile

KEY = "network_policy.private_endpoint_cidrs"
VPCE = "https://bucket.vpce-0a1b2c3d-4e5f6a7b.s3.us-east-1.vpce.amazonaws.com"
AZURE = "https://mymodels.privatelink.blob.core.windows.net"
ENDPOINT_INTERFACE = Host("the S3 interface endpoint's network interface", "10.0.3.7")
BUCKETS: dict[str, dict[str, Any]] = {
    "AWS": {"uri": "s3://models/llama/", "credentials_secret": "keys", "endpoint_url": VPCE},
    "Azure": {
        "uri": "az://models/llama/",
        "azure_storage_account": "mymodels",
        "service_account_annotations": {"azure.workload.identity/client-id": "0" * 8},
        "endpoint_url": AZURE,
    },
}


def delivery(cloud: str) -> dict[str, Any]:
    return {"mode": "object_storage", "object_storage": BUCKETS[cloud]}


@pytest.mark.parametrize("url", [VPCE, AZURE, "https://vpce-0a1b-sts.sts.cn-north-1.vpce.amazonaws.com.cn"])
def test_a_private_endpoint_name_is_recognised(url: str) -> None:
    assert private_endpoint(url) is not None


@pytest.mark.parametrize(
    "url",
    ["https://s3.us-east-1.amazonaws.com", "https://mymodels.blob.core.windows.net", "https://x.vpce.amazonaws.com.example"],
)
def test_a_public_or_foreign_name_is_not(url: str) -> None:
    assert private_endpoint(url) is None


@pytest.mark.parametrize("cloud", BUCKETS)
def test_a_private_endpoint_without_its_cidrs_is_refused_naming_the_key(cloud: str) -> None:
    assert "every request to it would be dropped" in refused_key(KEY, delivery=delivery(cloud)).message


def test_the_program_registers_nothing_for_a_private_endpoint_without_its_cidrs() -> None:
    error, registered = refusal({"delivery": delivery("AWS")})
    assert KEY in error and registered == 0


@pytest.mark.parametrize("cloud", BUCKETS)
def test_a_private_endpoint_with_its_cidrs_is_accepted(cloud: str) -> None:
    assert refusals(delivery=delivery(cloud), network_policy={"private_endpoint_cidrs": ["10.0.0.0/16"]}) == []


def test_the_server_reaches_the_endpoints_subnet_once_it_is_stated() -> None:
    stack = with_profile("generic", delivery=delivery("AWS"), network_policy={"private_endpoint_cidrs": ["10.0.0.0/16"]})
    assert allowed(stack.policies, stack.leader, ENDPOINT_INTERFACE, 443)


def test_the_hub_rule_alone_would_drop_the_reads() -> None:
    stack = with_profile("generic", delivery=delivery("AWS"), network_policy={"private_endpoint_cidrs": ["10.9.0.0/16"]})
    assert not allowed(stack.policies, stack.leader, ENDPOINT_INTERFACE, 443)


def test_with_the_egress_policy_off_a_private_endpoint_is_accepted() -> None:
    assert refusals(delivery=delivery("AWS"), network_policy={"enabled": False}) == []


def test_a_hub_rule_that_no_longer_carves_private_ranges_out_is_accepted() -> None:
    assert refusals(delivery=delivery("AWS"), network_policy={"hub_egress_except_cidrs": ["169.254.0.0/16"]}) == []


def test_the_refusal_never_shows_the_endpoints_query_string() -> None:
    bucket = {**BUCKETS["AWS"], "endpoint_url": VPCE + "/?X-Amz-Credential=AKIAEXAMPLE"}
    issue = refused_key(KEY, delivery={"mode": "object_storage", "object_storage": bucket})
    assert "AKIAEXAMPLE" not in issue.message


def test_an_sts_interface_endpoint_named_without_its_cidrs_is_refused_naming_the_key() -> None:
    bucket = {
        "uri": "s3://models/llama/",
        "endpoint_url": "https://s3.us-east-1.amazonaws.com",
        "service_account_annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/r"},
        "sts_endpoint_url": "https://vpce-0a1b2c3d-4e5f6a7b.sts.us-east-1.vpce.amazonaws.com",
    }
    issue = refused_key(KEY, delivery={"mode": "object_storage", "object_storage": bucket})
    assert "delivery.object_storage.sts_endpoint_url" in issue.message
