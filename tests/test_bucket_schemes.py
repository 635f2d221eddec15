"""What each bucket scheme's client needs beyond the URI (docs/sources.md §S12): an az:// bucket names no storage
account, so the stack names one and the server gets AZURE_STORAGE_ACCOUNT_NAME (and AZURE_STORAGE_ENDPOINT for a
custom endpoint); a gs:// bucket cannot be read with a Secret's environment, so that stack is refused."""

from __future__ import annotations

from typing import Any

from tests.kubernetes_fixtures import env_of, manifests, server, stack_with
from tests.test_landing import refusals, refused_key

AZURE_WI = {"azure.workload.identity/client-id": "00000000-0000-0000-0000-000000000000"}
AZURE = {"uri": "az://models/llama-70b/", "azure_storage_account": "mymodels", "service_account_annotations": AZURE_WI}


def bucket(**fields: Any) -> dict[str, Any]:
    return {"mode": "object_storage", "object_storage": fields}


def server_env(**fields: Any) -> dict[str, Any]:
    # A private endpoint's subnet is opened (validation/delivery.py refuses a private endpoint_url without it).
    policy = {"private_endpoint_cidrs": ["10.0.0.0/16"]}
    return env_of(server(manifests(*stack_with("prod", delivery=bucket(**fields), network_policy=policy))))


def test_an_az_bucket_without_an_account_is_refused_naming_the_key() -> None:
    issue = refused_key(
        "delivery.object_storage.azure_storage_account", delivery=bucket(**{**AZURE, "azure_storage_account": None})
    )
    assert "'az://models/llama-70b/'" in issue.message and "AZURE_STORAGE_ACCOUNT_NAME" in issue.message


def test_an_az_bucket_with_its_account_is_accepted() -> None:
    assert refusals(delivery=bucket(**AZURE)) == []


def test_the_server_gets_the_account_the_streamer_reads() -> None:
    assert server_env(**AZURE)["AZURE_STORAGE_ACCOUNT_NAME"] == "mymodels"


def test_an_az_endpoint_url_is_the_blob_endpoint_not_an_s3_one() -> None:
    env = server_env(**AZURE, endpoint_url="https://mymodels.privatelink.blob.core.windows.net")
    assert env["AZURE_STORAGE_ENDPOINT"] == "https://mymodels.privatelink.blob.core.windows.net"
    assert "AWS_ENDPOINT_URL" not in env and "RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING" not in env


def test_an_s3_bucket_gets_no_azure_variable() -> None:
    env = server_env(uri="s3://models/llama-70b/", credentials_secret="keys", endpoint_url="http://minio:9000")
    assert not [name for name in env if name.startswith("AZURE_")] and env["AWS_ENDPOINT_URL"] == "http://minio:9000"


def test_an_account_on_an_s3_bucket_is_refused_naming_the_key() -> None:
    changes = bucket(uri="s3://models/llama/", credentials_secret="keys", azure_storage_account="mymodels")
    assert "not az://" in refused_key("delivery.object_storage.azure_storage_account", delivery=changes).message


def test_an_account_name_azure_would_refuse_is_refused_naming_the_key() -> None:
    assert refused_key(
        "delivery.object_storage.azure_storage_account", delivery=bucket(**{**AZURE, "azure_storage_account": "My_Models"})
    )


def test_a_gs_bucket_read_with_a_secret_alone_is_refused_naming_the_secret() -> None:
    issue = refused_key(
        "delivery.object_storage.credentials_secret", delivery=bucket(uri="gs://models/llama/", credentials_secret="keys")
    )
    assert "'keys'" in issue.message and "Workload Identity" in issue.fix


def test_a_gs_bucket_with_workload_identity_is_accepted() -> None:
    assert refusals(delivery=bucket(uri="gs://models/llama/", workload_identity="gke-workload-identity")) == []


def test_the_account_variable_in_extra_env_is_refused_as_the_programs() -> None:
    issue = refused_key(
        "vllm.extra_env",
        delivery=bucket(**AZURE),
        vllm={"extra_env": {"AZURE_STORAGE_ACCOUNT_NAME": "x"}},
    )
    assert "delivery.object_storage.azure_storage_account" in issue.message + issue.fix


def test_a_refusal_never_shows_the_uris_query_string() -> None:
    uri = "az://models/llama/?comp=list&restype=container"
    issue = refused_key(
        "delivery.object_storage.azure_storage_account", delivery=bucket(uri=uri, service_account_annotations=AZURE_WI)
    )
    assert "comp=list" not in issue.message
