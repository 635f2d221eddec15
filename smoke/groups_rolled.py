"""Wait until a LeaderWorkerSet's rollout is done: the controller has seen the object's latest generation, every
group runs the current template, every group is ready, and the Available condition is True. A controller that
writes no `observedGeneration` must show all that at two polls in a row instead (`wait`).

Pulumi cannot await that itself: its `pulumi.com/waitFor` reads `.status` as it is right after the update, when
`readyReplicas` still counts the old groups and nothing compares `observedGeneration` with `metadata.generation`.
This runs in the rollout-gate Job (components/render/rollout_gate.py) with a ServiceAccount token whose Role may
`get` this one LeaderWorkerSet. Stdlib only, so any python3 image runs it.

Exit 0 when the rollout is done; 1 when the API server refuses the request (the line names the status and why) or
a token or answer is beyond its bound; 2 on bad arguments. A rollout that never finishes is bounded by the Job's
activeDeadlineSeconds: the last line then says how far it got.
"""

from __future__ import annotations

import argparse
import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
PATH = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/{namespace}/leaderworkersets/{name}"
MAX_BODY_BYTES = 4 * 1024 * 1024  # a LeaderWorkerSet with both pod templates is well under this
MAX_TOKEN_BYTES = 64 * 1024
REQUEST_TIMEOUT_S = 30
REFUSED = (401, 403, 404)  # no retry helps: a token, a Role or the object is missing


class Refused(Exception):
    """What no retry mends: the API server's 401/403/404, a token file or an answer beyond its bound."""


def progress(lws: dict[str, Any]) -> tuple[bool, str]:
    """Whether the rollout is done, and a line saying how far it is. A controller that writes no
    `observedGeneration` (older LeaderWorkerSet releases) gives no generation to compare: see `wait`."""
    replicas = lws.get("spec", {}).get("replicas", 1)
    generation = lws.get("metadata", {}).get("generation", 0)
    status = lws.get("status") or {}
    observed = status.get("observedGeneration")
    updated, ready = status.get("updatedReplicas", 0), status.get("readyReplicas", 0)
    conditions = status.get("conditions") or []
    available = any(c.get("type") == "Available" and c.get("status") == "True" for c in conditions)
    current = observed is None or observed >= generation
    done = current and updated >= replicas and ready >= replicas and available
    seen = "no observedGeneration" if observed is None else f"observed {observed}"
    line = f"generation {generation} ({seen}): {updated} of {replicas} groups updated, {ready} ready, Available={available}"
    return done, line


def read_bounded(path: str, limit: int) -> str:
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise Refused(f"{path} is larger than {limit} bytes")
    return data.decode().strip()


def default_api_url() -> str:
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST", ""), os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    if not host:
        return ""
    return f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"


def fetch(url: str, token: str, context: ssl.SSLContext | None) -> dict[str, Any]:
    """The object; Refused on 401/403/404 or an oversized answer; OSError (URLError, timeouts, other HTTP errors)
    or ValueError (a garbled answer) for what may pass."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S, context=context) as response:
            body = response.read(MAX_BODY_BYTES + 1)
    except urllib.error.HTTPError as error:
        if error.code in REFUSED:
            reason = error.read(2048).decode(errors="replace")
            raise Refused(f"the API server answered {error.code} for {url}: {reason}") from error
        raise
    if len(body) > MAX_BODY_BYTES:
        raise Refused(f"the answer for {url} is larger than {MAX_BODY_BYTES} bytes")
    return dict(json.loads(body))


def wait(
    url: str,
    token_file: str,
    context: ssl.SSLContext | None,
    poll_seconds: float,
    say: Callable[[str], None] = print,
) -> int:
    """Poll until the rollout is done; print a line whenever its progress changes. Without `observedGeneration` a
    done status must hold at two polls in a row: the controller rewrites the status within moments of an update,
    so a status left from the previous generation does not outlast a poll interval while the controller runs."""
    last, done_before = "", False
    while True:
        try:
            lws = fetch(url, read_bounded(token_file, MAX_TOKEN_BYTES), context)
            done, line = progress(lws)
            settled = done and (done_before or "observedGeneration" in (lws.get("status") or {}))
            done_before = done
        except Refused as refused:
            say(f"FAIL {refused}")
            return 1
        except (OSError, ValueError) as error:  # the API server restarting, a token being rotated
            settled, done_before, line = False, False, f"retrying: {error}"
        text = ("OK " if settled else "") + line
        if text != last:
            say(text)
            last = text
        if settled:
            return 0
        time.sleep(poll_seconds)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--name", required=True, help="the LeaderWorkerSet")
    parser.add_argument("--poll-seconds", type=float, default=10.0)
    parser.add_argument("--api-url", default=default_api_url(), help="default: the in-cluster API server")
    parser.add_argument("--token-file", default=f"{ACCOUNT_DIR}/token")
    parser.add_argument("--ca-file", default=f"{ACCOUNT_DIR}/ca.crt", help="for an https API URL")
    args = parser.parse_args(argv)
    if not args.api_url:
        parser.error("--api-url is required outside a pod (KUBERNETES_SERVICE_HOST is not set)")
    if args.poll_seconds <= 0:
        parser.error("--poll-seconds must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    url = args.api_url.rstrip("/") + PATH.format(namespace=args.namespace, name=args.name)
    context = ssl.create_default_context(cafile=args.ca_file) if url.startswith("https://") else None
    return wait(url, args.token_file, context, args.poll_seconds)


if __name__ == "__main__":
    sys.exit(main())
