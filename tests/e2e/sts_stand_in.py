"""A stand-in for AWS STS, on loopback: AssumeRoleWithWebIdentity answers with a role session, and every call is
recorded with the token and role it carried. botocore posts the Query protocol's form (Action, RoleArn,
WebIdentityToken, ...) and parses the XML answer the STS API reference gives
(docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRoleWithWebIdentity.html)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs
from xml.sax.saxutils import escape

from tests.e2e.stand_in import QuietHandler, serving

SESSION_LIFETIME = timedelta(hours=1)
MAX_BODY_BYTES = 1 << 16  # a token exchange's form is a few kilobytes


@dataclass(frozen=True)
class Exchange:
    action: str
    role_arn: str
    token: str


@dataclass
class StandInSts:
    session: dict[str, str]  # AccessKeyId, SecretAccessKey, Token
    url: str = ""
    exchanges: list[Exchange] = field(default_factory=list)

    def answer(self, form: dict[str, list[str]]) -> bytes:
        def first(name: str) -> str:
            return form.get(name, [""])[0]

        self.exchanges.append(Exchange(first("Action"), first("RoleArn"), first("WebIdentityToken")))
        expiration = (datetime.now(UTC) + SESSION_LIFETIME).strftime("%Y-%m-%dT%H:%M:%SZ")
        credentials = (
            f"<AccessKeyId>{escape(self.session['AccessKeyId'])}</AccessKeyId>"
            f"<SecretAccessKey>{escape(self.session['SecretAccessKey'])}</SecretAccessKey>"
            f"<SessionToken>{escape(self.session['Token'])}</SessionToken><Expiration>{expiration}</Expiration>"
        )
        role = escape(first("RoleArn"))
        return (
            '<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">'
            f"<AssumeRoleWithWebIdentityResult><Credentials>{credentials}</Credentials>"
            f"<AssumedRoleUser><Arn>{role}/vllm-server</Arn><AssumedRoleId>AROA:vllm-server</AssumedRoleId></AssumedRoleUser>"
            "</AssumeRoleWithWebIdentityResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata>"
            "</AssumeRoleWithWebIdentityResponse>"
        ).encode()


def _handler(sts: StandInSts) -> type[QuietHandler]:
    class Handler(QuietHandler):
        def do_POST(self) -> None:
            length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY_BYTES)
            self.reply(200, sts.answer(parse_qs(self.rfile.read(length).decode(errors="replace"))), "text/xml")

    return Handler


@contextmanager
def running_sts(session: dict[str, str]) -> Iterator[StandInSts]:
    sts = StandInSts(session)
    with serving(_handler(sts)) as port:
        sts.url = f"http://127.0.0.1:{port}"
        yield sts
