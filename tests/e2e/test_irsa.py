"""delivery.object_storage read with IRSA through an endpoint_url, on a real S3-compatible store. The rendered env
sets AWS_ENDPOINT_URL (the store) and AWS_ENDPOINT_URL_STS (delivery.object_storage.sts_endpoint_url, here a
stand-in STS: tests/e2e/sts_stand_in.py); the IRSA webhook adds the role and the projected token's path to the pod.
vLLM's boto3 reads (the config pull and the listing, tests/e2e/load_from_bucket.py --boto3-only) exchange the pod's
token at that STS and read the store with the session it hands out, whose token moto checks. The same pod without
AWS_ENDPOINT_URL_STS, as the program rendered it before, sends the exchange to the store, and the pull fails.

The streamer's own reads are not run: aws-sdk-cpp exchanges the token at the region's AWS STS whatever the env says
(docs/sources.md §S12), which this machine cannot reach.
"""

from __future__ import annotations

import json
import re
import secrets
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from config.delivery import STS_ENDPOINT_ENV
from tests.e2e import rendered
from tests.e2e.bucket_reads import finished, load, pod_env
from tests.e2e.store import Store
from tests.e2e.sts_stand_in import StandInSts, running_sts

pytestmark = pytest.mark.e2e

ROLE_ARN = "arn:aws:iam::123456789012:role/vllm-reader-role"
# What IRSA's webhook adds for a ServiceAccount annotated eks.amazonaws.com/role-arn (aws/amazon-eks-pod-identity-webhook
# README v0.6.8, "EKS Walkthrough"): the role and the projected token under /var/run/secrets/eks.amazonaws.com/, which
# the SDKs read as AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE (docs.aws.amazon.com/sdkref/latest/guide/
# feature-assume-role-credentials.html); and the region, where the webhook is given one.
TOKEN_PATH = "eks.amazonaws.com/serviceaccount/token"


@dataclass(frozen=True)
class Read:
    sts: StandInSts
    token: str
    result: subprocess.CompletedProcess[str]


def irsa_env(token: str, home: Path) -> dict[str, str]:
    token_file = home / TOKEN_PATH
    token_file.parent.mkdir(parents=True)
    token_file.write_text(token, encoding="utf-8")
    return {"AWS_ROLE_ARN": ROLE_ARN, "AWS_WEB_IDENTITY_TOKEN_FILE": str(token_file), "AWS_REGION": "us-east-1"}


@pytest.fixture(scope="module")
def reads(e2e_python: Path, store: Store, api_key: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Read]]:
    """Two pods at once, each with its own stand-in STS: the rendered env, and the same without the STS variable."""
    with running_sts(store.role_session) as rendered_sts, running_sts(store.role_session) as unused_sts:
        launch = rendered.object_storage_launch(
            api_key,
            store.server.base_url,
            service_account_annotations={"eks.amazonaws.com/role-arn": ROLE_ARN},
            sts_endpoint_url=rendered_sts.url,
        )
        pods = {"rendered": rendered_sts, "without the STS variable": unused_sts}
        running = {}
        for name, sts in pods.items():
            home = tmp_path_factory.mktemp("home-irsa")
            token = "eyJ.pod-token." + secrets.token_hex(8)
            pod = pod_env(launch, home, irsa_env(token, home))
            if name != "rendered":
                pod.pop(STS_ENDPOINT_ENV)
            running[name] = (sts, token, load(e2e_python, launch, pod, "--boto3-only"))
        yield {name: Read(sts, token, finished(process)) for name, (sts, token, process) in running.items()}


def test_the_rendered_server_exchanges_the_token_at_the_stated_sts(reads: dict[str, Read]) -> None:
    read = reads["rendered"]
    assert read.result.returncode == 0, read.result.stderr[-3000:]
    assert [(e.action, e.role_arn, e.token) for e in read.sts.exchanges][:1] == [
        ("AssumeRoleWithWebIdentity", ROLE_ARN, read.token)
    ]


def test_the_session_it_hands_out_pulls_the_config_and_lists_the_checkpoint(reads: dict[str, Read]) -> None:
    result = reads["rendered"].result
    assert result.returncode == 0, result.stderr[-3000:]
    read = json.loads(result.stdout)
    assert "config.json" in read["pulled"] and read["listed"] == [rendered.BUCKET_URI + "model.safetensors"]


def test_without_the_sts_variable_the_exchange_goes_to_the_store_and_the_pull_fails(
    reads: dict[str, Read], store: Store
) -> None:
    read = reads["without the STS variable"]
    assert read.result.returncode != 0 and read.sts.exchanges == []
    # moto's access log: the unsigned exchange, which its S3 authentication cannot take (the fill's calls got 200).
    assert re.search(r'POST / HTTP/1\.1\S*" 500', store.server.log.read_text(errors="replace")), read.result.stderr[-3000:]
