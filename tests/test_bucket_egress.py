"""A bucket with its own endpoint (an S3-compatible store) and private endpoints: the rendered NetworkPolicies
let the pods that fetch weights reach the store where it listens, and no more, evaluated with Kubernetes'
semantics (tests/reachability.py)."""

from __future__ import annotations

from typing import Any

import pytest

from plan.egress import bucket_endpoint
from tests.reachability import Host, Pod, allowed
from tests.test_landing import refused_key
from tests.test_platform_flows import HUB, PROFILES, Stack, with_profile

MINIO = Pod("minio-0", "minio", {"app": "minio"}, "10.1.5.7")
MINIO_ELSEWHERE = Pod("minio-0", "team-a", {"app": "minio"}, "10.1.6.7")
STS_INTERFACE_ENDPOINT = Host("sts.us-east-1.amazonaws.com (interface endpoint)", "10.20.1.15")


def streaming(endpoint_url: str | None = None, copy: bool = False, **network_policy: Any) -> Stack:
    bucket: dict[str, Any] = {"uri": "s3://models/llama/", "copy_from_hub": copy, "credentials_secret": "bucket-keys"}
    if endpoint_url is not None:
        bucket["endpoint_url"] = endpoint_url
    delivery = {"mode": "object_storage", "object_storage": bucket}
    model = {"revision": "0123456789abcdef0123456789abcdef01234567"} if copy else {}
    return with_profile("generic", delivery=delivery, network_policy=network_policy, model=model)


@pytest.mark.parametrize(
    "url",
    ["http://minio.minio.svc.cluster.local:9000", "http://minio.minio.svc:9000", "http://minio.minio:9000"],
)
def test_a_server_streams_from_an_in_cluster_store_on_its_port(url: str) -> None:
    stack = streaming(url)
    assert allowed(stack.policies, stack.leader, MINIO, 9000)


def test_the_in_cluster_store_is_reached_in_its_namespace_only() -> None:
    stack = streaming("http://minio.minio.svc.cluster.local:9000")
    assert not allowed(stack.policies, stack.leader, MINIO_ELSEWHERE, 9000)


def test_the_in_cluster_store_is_reached_on_its_port_only() -> None:
    stack = streaming("http://minio.minio.svc.cluster.local:9000")
    assert not allowed(stack.policies, stack.leader, MINIO, 9001)


def test_a_bare_service_name_is_the_stacks_own_namespace() -> None:
    stack = streaming("http://minio:9000")
    store = Pod("minio-0", stack.plan.identity.namespace, {"app": "minio"}, "10.1.5.8")
    assert allowed(stack.policies, stack.leader, store, 9000)


def test_object_storage_ports_name_the_pods_port_behind_the_services() -> None:
    stack = streaming("http://minio.minio.svc.cluster.local", object_storage_ports=[9000])
    assert [allowed(stack.policies, stack.leader, MINIO, port) for port in (9000, 80)] == [True, False]


def test_without_an_endpoint_url_the_stores_namespace_stays_closed() -> None:
    stack = streaming()
    assert not allowed(stack.policies, stack.leader, MINIO, 9000)


@pytest.mark.parametrize("profile", PROFILES)
def test_a_public_store_on_its_own_port_is_reached_on_that_port(profile: str) -> None:
    bucket = {"uri": "s3://models/llama/", "endpoint_url": "https://s3.example.com:9000", "credentials_secret": "keys"}
    stack = with_profile(profile, delivery={"mode": "object_storage", "object_storage": bucket})
    assert allowed(stack.policies, stack.leader, Host("s3.example.com", "203.0.113.9"), 9000)


def test_a_public_stores_port_opens_no_cluster_address() -> None:
    stack = streaming("https://s3.example.com:9000")
    assert not allowed(stack.policies, stack.leader, Host("a node", "10.0.3.4"), 9000)


def test_a_store_at_a_private_address_is_reached_at_that_address_only() -> None:
    stack = streaming("http://10.30.0.5:7480")
    reached = [allowed(stack.policies, stack.leader, Host("rgw", ip), 7480) for ip in ("10.30.0.5", "10.30.0.6")]
    assert reached == [True, False]


def test_the_bucket_copy_job_reaches_the_store_it_fills() -> None:
    stack = streaming("http://minio.minio.svc.cluster.local:9000", copy=True)
    assert allowed(stack.policies, stack.download, MINIO, 9000)


def test_without_a_copy_no_download_pod_runs_and_no_model_cache_policy_is_rendered() -> None:
    stack = streaming("http://minio.minio.svc.cluster.local:9000")
    names = [policy["metadata"]["name"] for policy in stack.policies]
    assert (stack.downloads, "llama-model-cache" in names) == ([], False)


def test_an_interface_endpoint_of_sts_is_closed_by_default() -> None:
    stack = streaming()
    assert not allowed(stack.policies, stack.leader, STS_INTERFACE_ENDPOINT, 443)


def test_private_endpoint_cidrs_open_the_interface_endpoints_on_443() -> None:
    stack = streaming(private_endpoint_cidrs=["10.20.0.0/16"])
    assert allowed(stack.policies, stack.leader, STS_INTERFACE_ENDPOINT, 443)


def test_private_endpoint_cidrs_open_no_other_port() -> None:
    stack = streaming(private_endpoint_cidrs=["10.20.0.0/16"])
    assert not allowed(stack.policies, stack.leader, STS_INTERFACE_ENDPOINT, 8443)


def test_private_endpoint_cidrs_open_a_private_stores_port() -> None:
    stack = streaming("https://rgw.corp.example:7480", private_endpoint_cidrs=["10.30.0.0/24"])
    assert allowed(stack.policies, stack.leader, Host("rgw", "10.30.0.5"), 7480)


def test_the_download_job_reaches_a_hub_mirror_behind_a_private_endpoint() -> None:
    stack = streaming(private_endpoint_cidrs=["10.20.0.0/16"])
    assert allowed(stack.policies, stack.download, Host("hub mirror", "10.20.3.3"), 443)


def test_a_shared_volume_server_reaches_no_private_endpoint() -> None:
    stack = with_profile("generic", network_policy={"private_endpoint_cidrs": ["10.20.0.0/16"]})
    assert not allowed(stack.policies, stack.leader, STS_INTERFACE_ENDPOINT, 443)


def test_the_hub_stays_reachable_beside_an_in_cluster_store() -> None:
    stack = streaming("http://minio.minio.svc.cluster.local:9000")
    assert allowed(stack.policies, stack.leader, HUB, 443)


def test_an_https_endpoint_without_a_port_listens_on_443() -> None:
    assert bucket_endpoint("https://minio.minio.svc", "llama", None).ports == (443,)


def test_an_http_endpoint_without_a_port_listens_on_80() -> None:
    assert bucket_endpoint("http://minio.minio.svc", "llama", None).ports == (80,)


def test_a_private_endpoint_cidr_with_host_bits_is_refused_naming_the_key() -> None:
    issue = refused_key("network_policy.private_endpoint_cidrs", network_policy={"private_endpoint_cidrs": ["10.20.0.1/16"]})
    assert "'10.20.0.1/16'" in issue.message and "10.0.0.0/8" in issue.fix


def test_an_object_storage_port_out_of_range_is_refused_naming_the_key() -> None:
    assert refused_key("network_policy.object_storage_ports[0]", network_policy={"object_storage_ports": [70000]})


def test_an_empty_object_storage_ports_list_is_refused_naming_the_key() -> None:
    issue = refused_key("network_policy.object_storage_ports", network_policy={"object_storage_ports": []})
    assert issue.fix


def test_a_single_private_endpoint_cidr_not_in_a_list_is_refused_naming_the_key() -> None:
    issue = refused_key("network_policy.private_endpoint_cidrs", network_policy={"private_endpoint_cidrs": "10.0.0.0/8"})
    assert "expected a list" in issue.message
