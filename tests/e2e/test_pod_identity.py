"""delivery.object_storage with `workload_identity: eks-pod-identity`, read with EKS Pod Identity's flow on a real
S3-compatible store. The rendered server carries no key; EKS adds AWS_CONTAINER_CREDENTIALS_FULL_URI and
AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE to the pod (docs/sources.md §S12), here pointing at a stand-in agent
(tests/e2e/pod_identity_agent.py) that hands out an assumed role's session, whose token moto checks on every read.
vLLM's own loader code reads the model with that env (tests/e2e/load_from_bucket.py): the config files and the
listing through boto3, the tensors through the Run:ai streamer's aws-sdk-cpp. A pod whose token the agent refuses
ends with the refusal instead of hanging until the startup probe kills it.

The instance metadata service is switched off in that env (tests/e2e/bucket_reads.py): no read can fall back to a
node's role.
"""

from __future__ import annotations

import json
import secrets
import struct
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e import rendered
from tests.e2e.bucket_reads import finished, load, pod_env
from tests.e2e.pod_identity_agent import CREDENTIALS_PATH, Agent, running_agent
from tests.e2e.store import Store

pytestmark = pytest.mark.e2e

# Who asked the agent, by the request's User-Agent: botocore's container provider sends urllib3's own
# (`python-urllib3/2.8.0`), the streamer's aws-sdk-cpp its name (`aws-sdk-cpp/1.11.584 ... md/aws-crt#0.32.8 ...`).
SDK_AGENTS = {"boto3": "python-urllib3/", "the streamer": "aws-sdk-cpp/"}
CREDENTIAL_KEYS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")


@dataclass(frozen=True)
class Load:
    agent: Agent
    result: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def launch(store: Store, api_key: str) -> rendered.Launch:
    return rendered.object_storage_launch(api_key, store.server.base_url, workload_identity="eks-pod-identity")


def identity_env(agent: Agent, token: str, home: Path) -> dict[str, str]:
    """What EKS adds to a pod of an associated ServiceAccount: the agent's URL and its projected token."""
    token_file = home / "eks-pod-identity-token"
    token_file.write_text(token, encoding="utf-8")
    return {"AWS_CONTAINER_CREDENTIALS_FULL_URI": agent.url, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": str(token_file)}


@pytest.fixture(scope="module")
def loads(
    e2e_python: Path, store: Store, launch: rendered.Launch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Load]]:
    """Two pods at once: one whose token the agent takes, one whose token it refuses."""
    token = "pod-token-" + secrets.token_hex(8)
    pods = {"accepted": token, "refused": "another-" + token}
    with running_agent(token, store.role_session) as accepted, running_agent(token, store.role_session) as refused:
        agents = {"accepted": accepted, "refused": refused}
        running = {}
        for name, pod_token in pods.items():
            home = tmp_path_factory.mktemp(f"home-{name}")
            env = pod_env(launch, home, identity_env(agents[name], pod_token, home))
            running[name] = load(e2e_python, launch, env)
        yield {name: Load(agents[name], finished(process)) for name, process in running.items()}


def tensor_names(checkpoint: Path) -> list[str]:
    """The tensors a safetensors file holds, from its header (an 8-byte length, then JSON)."""
    with checkpoint.open("rb") as file:
        (length,) = struct.unpack("<Q", file.read(8))
        header = json.loads(file.read(length))
    return sorted(name for name in header if name != "__metadata__")


def test_the_rendered_server_reads_the_bucket_with_no_key_of_its_own(launch: rendered.Launch) -> None:
    assert launch.env_from == ()
    assert not set(CREDENTIAL_KEYS) & set(launch.env)


def test_vllms_loader_streams_every_tensor_with_the_agents_session(loads: dict[str, Load], tiny_model: Path) -> None:
    result = loads["accepted"].result
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(json.loads(result.stdout)["tensors"]) == tensor_names(tiny_model / "model.safetensors")


def test_vllms_loader_pulls_the_model_config_with_the_agents_session(loads: dict[str, Load]) -> None:
    result = loads["accepted"].result
    assert result.returncode == 0, result.stderr[-3000:]
    assert "config.json" in json.loads(result.stdout)["pulled"]


@pytest.mark.parametrize("sdk", SDK_AGENTS)
def test_each_sdk_asked_the_agent_with_the_pods_token(loads: dict[str, Load], sdk: str) -> None:
    asked = [request for request in loads["accepted"].agent.requests if SDK_AGENTS[sdk] in request.user_agent.lower()]
    assert asked and all(r.authorized and r.path == CREDENTIALS_PATH for r in asked), loads["accepted"].agent.requests


def test_a_pod_whose_token_the_agent_refuses_ends_without_a_read(loads: dict[str, Load]) -> None:
    load = loads["refused"]
    assert load.result.returncode != 0
    assert load.agent.requests and not any(r.authorized for r in load.agent.requests)
    assert "403" in load.result.stderr, load.result.stderr[-3000:]
