"""IRSA with an endpoint_url: botocore applies AWS_ENDPOINT_URL to its STS client too, so vLLM's boto3 reads (the
listing, the config pull) and the copy Job would send IRSA's token exchange to the bucket's endpoint. The server and
the copy Job get AWS_ENDPOINT_URL_STS, which botocore takes first: the STS of the region an AWS S3 endpoint names,
or delivery.object_storage.sts_endpoint_url; a stack whose endpoint names no region and no STS is refused naming
that key (plan/delivery.py sts_endpoint_url, validation/delivery.py, docs/sources.md §S12)."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.aws_endpoints import s3_region, sts_endpoint
from tests.kubernetes_fixtures import env_of, manifests, model_cache_job, pod_spec, server, stack_with
from tests.test_deployable import refusal, rendered
from tests.test_landing import refusals, refused_key

ROLE = {"eks.amazonaws.com/role-arn": "arn:aws:iam::111122223333:role/vllm-model-reader"}
# The endpoint_url boto3's PrivateLink guide gives for an S3 interface endpoint.
VPCE = "https://bucket.vpce-abc123-abcdefgh.s3.us-east-1.vpce.amazonaws.com"
STS = "AWS_ENDPOINT_URL_STS"
# The interface endpoint's subnet, which the egress policy must open (validation/delivery.py).
VPC = {"private_endpoint_cidrs": ["10.0.0.0/16"]}


def bucket(**fields: Any) -> dict[str, Any]:
    return {"mode": "object_storage", "object_storage": {"uri": "s3://models/llama/", **fields}}


def server_env(**fields: Any) -> dict[str, Any]:
    return env_of(server(manifests(*stack_with("prod", delivery=bucket(**fields), network_policy=VPC))))


@pytest.mark.parametrize(
    ("endpoint_url", "region"),
    [
        (VPCE, "us-east-1"),
        ("https://s3.eu-west-1.amazonaws.com", "eu-west-1"),
        ("https://s3-us-west-2.amazonaws.com", "us-west-2"),
        ("https://s3.dualstack.ap-southeast-2.amazonaws.com", "ap-southeast-2"),
        ("https://s3-fips.us-gov-west-1.amazonaws.com", "us-gov-west-1"),
        ("https://s3.cn-north-1.amazonaws.com.cn", "cn-north-1"),
        ("https://s3.amazonaws.com", "us-east-1"),
    ],
)
def test_an_aws_s3_endpoint_names_its_region(endpoint_url: str, region: str) -> None:
    assert s3_region(endpoint_url) == region


@pytest.mark.parametrize(
    "endpoint_url",
    ["http://minio.minio:9000", "https://s3.internal.example", "https://s3.us-east-1.amazonaws.com.example.org"],
)
def test_a_host_outside_aws_names_no_region(endpoint_url: str) -> None:
    assert s3_region(endpoint_url) is None


def test_a_china_region_gets_its_partitions_sts() -> None:
    assert sts_endpoint("cn-north-1") == "https://sts.cn-north-1.amazonaws.com.cn"


def test_the_server_exchanges_the_token_at_the_endpoints_regional_sts() -> None:
    env = server_env(service_account_annotations=ROLE, endpoint_url=VPCE)
    assert (env["AWS_ENDPOINT_URL"], env[STS]) == (VPCE, "https://sts.us-east-1.amazonaws.com")


def test_a_stated_sts_endpoint_wins_over_the_region() -> None:
    stated = "https://vpce-0def-sts.sts.us-east-1.vpce.amazonaws.com"
    assert server_env(service_account_annotations=ROLE, endpoint_url=VPCE, sts_endpoint_url=stated)[STS] == stated


@pytest.mark.parametrize(
    "fields",
    [
        {"service_account_annotations": ROLE},  # no endpoint_url: boto3 finds STS itself
        {"workload_identity": "eks-pod-identity", "endpoint_url": VPCE},  # the agent, no exchange
        {"service_account_annotations": ROLE, "credentials_secret": "keys", "endpoint_url": VPCE},  # the keys win
    ],
    ids=["no endpoint", "EKS Pod Identity", "a Secret"],
)
def test_no_sts_endpoint_where_nothing_exchanges_a_token_through_the_endpoint(fields: dict[str, Any]) -> None:
    assert STS not in server_env(**fields)


def test_the_copy_job_exchanges_the_token_at_the_same_sts() -> None:
    changes = bucket(service_account_annotations=ROLE, endpoint_url=VPCE, copy_from_hub=True)
    job = model_cache_job(manifests(*stack_with("prod", delivery=changes, model={"revision": "aaaa111"}, network_policy=VPC)))
    assert env_of(job["spec"]["template"]["spec"]["containers"][0])[STS] == "https://sts.us-east-1.amazonaws.com"


def test_the_program_registers_the_sts_endpoint_on_the_server() -> None:
    objects = rendered({"delivery": bucket(service_account_annotations=ROLE, endpoint_url=VPCE), "network_policy": VPC})
    deployment = next(obj for obj in objects if obj["kind"] == "Deployment")
    env = {item["name"]: item.get("value") for item in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env[STS] == "https://sts.us-east-1.amazonaws.com"


def test_irsa_through_a_store_outside_aws_is_refused_naming_the_key() -> None:
    issue = refused_key(
        "delivery.object_storage.sts_endpoint_url",
        delivery=bucket(service_account_annotations=ROLE, endpoint_url="http://minio.minio:9000"),
    )
    assert "'http://minio.minio:9000'" in issue.message and "https://sts.REGION.amazonaws.com" in issue.fix


def test_the_program_registers_nothing_for_irsa_through_a_store_outside_aws() -> None:
    error, registered = refusal({"delivery": bucket(service_account_annotations=ROLE, endpoint_url="http://minio:9000")})
    assert "delivery.object_storage.sts_endpoint_url" in error and registered == 0


def test_irsa_through_a_private_name_with_its_sts_stated_is_accepted() -> None:
    stated = {"endpoint_url": "https://s3.internal.example", "sts_endpoint_url": "https://sts.us-east-1.amazonaws.com"}
    assert refusals(delivery=bucket(service_account_annotations=ROLE, **stated)) == []


def test_an_sts_endpoint_nothing_reads_is_refused_naming_the_key() -> None:
    changes = bucket(credentials_secret="keys", sts_endpoint_url="https://sts.us-east-1.amazonaws.com")
    assert "only IRSA's token exchange" in refused_key("delivery.object_storage.sts_endpoint_url", delivery=changes).message


def test_the_refusal_never_shows_the_endpoints_credentials() -> None:
    issue = refused_key(
        "delivery.object_storage.sts_endpoint_url",
        delivery=bucket(service_account_annotations=ROLE, endpoint_url="http://minio:9000/?X-Amz-Signature=abc"),
    )
    assert "abc" not in issue.message


def test_the_sts_variable_in_extra_env_is_refused_as_the_programs() -> None:
    issue = refused_key(
        "vllm.extra_env",
        delivery=bucket(service_account_annotations=ROLE, endpoint_url=VPCE),
        vllm={"extra_env": {STS: "https://sts.example"}},
    )
    assert "delivery.object_storage.sts_endpoint_url" in issue.message + issue.fix


def test_the_adapters_init_container_exchanges_the_token_at_the_same_sts() -> None:
    adapter = {"name": "ops", "uri": "s3://models/adapters/ops/", "rank": 8, "target_modules": ["q_proj"]}
    changes = bucket(service_account_annotations=ROLE, endpoint_url=VPCE)
    objects = manifests(*stack_with("prod", delivery=changes, lora={"adapters": [adapter]}, network_policy=VPC))
    (init,) = [c for c in pod_spec(objects)["initContainers"] if c["name"] == "lora-adapters"]
    assert env_of(init)[STS] == "https://sts.us-east-1.amazonaws.com"
