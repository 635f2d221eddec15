"""A stand-in for EKS Pod Identity's agent, on loopback: GET /v1/credentials answers with a role session when the
request's Authorization header is the pod's token, else 403, and every request is recorded.

The real agent listens on 169.254.170.23:80 on each node, and EKS sets a pod's AWS_CONTAINER_CREDENTIALS_FULL_URI
to it and AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE to its projected token (docs/sources.md §S12). The SDKs accept
that address or a loopback one (aws-sdk-cpp GeneralHTTPCredentialsProvider `IsAllowedIp`), so only the host
differs here: this machine cannot take the agent's link-local address.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from tests.e2e.stand_in import QuietHandler, serving

CREDENTIALS_PATH = "/v1/credentials"
SESSION_LIFETIME = timedelta(hours=1)


@dataclass(frozen=True)
class Request:
    path: str
    authorized: bool  # the Authorization header was the pod's token
    user_agent: str  # which SDK asked: botocore's or aws-sdk-cpp's


@dataclass
class Agent:
    token: str  # what the pod's token file holds
    session: dict[str, str]  # AccessKeyId, SecretAccessKey, Token
    url: str = ""
    requests: list[Request] = field(default_factory=list)

    def answer(self, path: str, authorization: str | None, user_agent: str) -> tuple[int, dict[str, str]]:
        authorized = authorization == self.token
        self.requests.append(Request(path, authorized, user_agent))
        if path != CREDENTIALS_PATH:
            return 404, {"message": "not found"}
        if not authorized:
            return 403, {"message": "the service account token is not valid"}
        expiration = (datetime.now(UTC) + SESSION_LIFETIME).strftime("%Y-%m-%dT%H:%M:%SZ")
        return 200, self.session | {"Expiration": expiration}


def _handler(agent: Agent) -> type[QuietHandler]:
    class Handler(QuietHandler):
        def do_GET(self) -> None:
            status, body = agent.answer(self.path, self.headers.get("Authorization"), self.headers.get("User-Agent", ""))
            self.reply(status, json.dumps(body).encode(), "application/json")

    return Handler


@contextmanager
def running_agent(token: str, session: dict[str, str]) -> Iterator[Agent]:
    agent = Agent(token, session)
    with serving(_handler(agent)) as port:
        agent.url = f"http://127.0.0.1:{port}{CREDENTIALS_PATH}"
        yield agent
