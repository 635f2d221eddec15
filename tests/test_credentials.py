"""No credential outside a Secret (validation/credentials.py): in URIs, endpoints and plain-text environment."""

from __future__ import annotations

from typing import Any

import pytest

from config.errors import ConfigIssue
from tests.factories import make_config
from tests.test_landing import refusals, refused_key

PASSWORD = "hunter2-p4ss"
OBJECT_STORAGE: dict[str, Any] = {
    "delivery": {
        "mode": "object_storage",
        "object_storage": {"uri": "s3://models/llama-8b/", "credentials_secret": "bucket-keys"},
    },
    "vllm": {"version": "0.33.0"},
}


def bucket(**fields: str) -> dict[str, Any]:
    return {
        **OBJECT_STORAGE,
        "delivery": {
            "mode": "object_storage",
            "object_storage": {"uri": "s3://models/llama-8b/", "credentials_secret": "bucket-keys", **fields},
        },
    }


def assert_never_shown(issues: list[ConfigIssue], secret: str) -> None:
    assert issues and all(secret not in issue.render() for issue in issues)


def test_the_object_storage_stack_used_here_is_accepted() -> None:
    assert make_config(**bucket(endpoint_url="https://minio.example.com:9000")).delivery.object_storage is not None


def test_a_password_in_the_bucket_uri_is_refused_without_printing_it() -> None:
    issue = refused_key("delivery.object_storage.uri", **bucket(uri=f"s3://admin:{PASSWORD}@models/llama/"))
    assert "credentials_secret" in issue.fix
    assert_never_shown(refusals(**bucket(uri=f"s3://admin:{PASSWORD}@models/llama/")), PASSWORD)


def test_a_sas_token_in_the_bucket_uri_is_refused() -> None:
    uri = f"az://models/llama/?sv=2022-11-02&sp=r&sig={PASSWORD}"
    assert "SAS token" in refused_key("delivery.object_storage.uri", **bucket(uri=uri)).message
    assert_never_shown(refusals(**bucket(uri=uri)), PASSWORD)


def test_a_password_in_the_endpoint_url_is_refused_without_printing_it() -> None:
    changes = bucket(endpoint_url=f"https://admin:{PASSWORD}@minio.example.com")
    assert "credentials_secret" in refused_key("delivery.object_storage.endpoint_url", **changes).fix
    assert_never_shown(refusals(**changes), PASSWORD)


def test_a_presigned_endpoint_url_is_refused() -> None:
    changes = bucket(endpoint_url=f"https://s3.example.com/?X-Amz-Signature={PASSWORD}")
    assert refused_key("delivery.object_storage.endpoint_url", **changes)
    assert_never_shown(refusals(**changes), PASSWORD)


def test_an_endpoint_url_without_a_scheme_is_refused_without_printing_its_password() -> None:
    changes = bucket(endpoint_url=f"admin:{PASSWORD}@minio.example.com:9000")
    assert "scheme" in refused_key("delivery.object_storage.endpoint_url", **changes).message
    assert_never_shown(refusals(**changes), PASSWORD)


def test_an_endpoint_url_with_a_host_and_port_but_no_scheme_is_refused() -> None:
    issue = refused_key("delivery.object_storage.endpoint_url", **bucket(endpoint_url="minio.example.com:9000"))
    assert "https://" in issue.fix


def test_a_bucket_uri_with_a_dot_dot_segment_is_refused() -> None:
    assert "`..`" in refused_key("delivery.object_storage.uri", **bucket(uri="s3://models/llama/../other/")).message


@pytest.mark.parametrize(
    "name",
    [
        "AZURE_STORAGE_CONNECTION_STRING",
        "AZURE_STORAGE_SAS_TOKEN",
        "MY_SECRET_THING",
        "DB_PASSWORD",
        "SERVICE_KEY",
        "HF_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
    ],
)
def test_a_credential_in_extra_env_is_recognised_by_its_name(name: str) -> None:
    issue = refused_key("vllm.extra_env", vllm={"extra_env": {name: "x"}})
    assert name in issue.message and "credentials_secret" in issue.fix


@pytest.mark.parametrize("name", ["SSH_PUBLIC_KEY", "VLLM_USE_V1", "PYTORCH_CUDA_ALLOC_CONF", "AWS_ACCESS_KEY_ID_FILE"])
def test_a_variable_that_holds_no_secret_is_accepted(name: str) -> None:
    assert name in make_config(vllm={"extra_env": {name: "1"}}).vllm.extra_env


@pytest.mark.parametrize(
    "value",
    [
        f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={PASSWORD};EndpointSuffix=core.windows.net",
        f"BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature=sv=2022&sig={PASSWORD}",
        f"sv=2022-11-02&ss=b&sig={PASSWORD}",
        "AKIAIOSFODNN7EXAMPLE",
        "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
    ],
)
def test_a_credential_in_extra_env_is_recognised_by_its_shape(value: str) -> None:
    issue = refused_key("vllm.extra_env", vllm={"extra_env": {"STORAGE": value}})
    assert "STORAGE" in issue.message and "credentials_secret" in issue.fix
    assert value not in issue.render()


def test_a_credential_in_the_nccl_env_is_refused() -> None:
    changes = {
        "engine": {"tensor_parallel_size": 2, "nnodes": 2},
        "multinode": {"nccl_env": {"NCCL_SOCKET_IFNAME": "AKIAIOSFODNN7EXAMPLE"}},
    }
    assert refused_key("multinode.nccl_env", **changes)


@pytest.mark.parametrize("name", ["HTTPS_PROXY", "https_proxy", "ALL_PROXY"])
def test_a_proxy_url_with_a_password_in_extra_env_is_refused_without_printing_it(name: str) -> None:
    issue = refused_key("vllm.extra_env", vllm={"extra_env": {name: f"http://svc:{PASSWORD}@proxy.corp:3128"}})
    assert (name in issue.message, "user:pass@" in issue.message, PASSWORD in issue.render()) == (True, True, False)


def test_a_proxy_url_without_user_info_is_accepted() -> None:
    proxy = {"HTTPS_PROXY": "http://proxy.corp:3128", "NO_PROXY": "10.0.0.0/8,.svc"}
    assert make_config(vllm={"extra_env": proxy}).vllm.extra_env == proxy
