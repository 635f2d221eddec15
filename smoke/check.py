"""Post-deploy smoke test: one chat completion against a vLLM OpenAI-compatible server. Standard library only.

    python smoke/check.py --base-url URL --model NAME [--api-key-file FILE] [--timeout-seconds N] [--host HOST]

Exit 0 when the server answers within the bound with the served model name and a non-empty message;
otherwise exit 1 with one line on stderr naming the URL, the HTTP status and the (truncated) response body
(wrong model, 401, 5xx, timeout, connection refused). Exit 2 on bad arguments. In a Kubernetes Job the
line becomes the pod's termination message (terminationMessagePolicy: FallbackToLogsOnError), which
pulumi-kubernetes puts into the failed Job's error.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from typing import Any

BODY_LIMIT = 600  # characters of a response body in the message; a termination message keeps 2,048 bytes
PROMPT = "Reply with the single word: ready"


class SmokeFailure(Exception):
    """The one line the check fails with."""


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    base = args.base_url.rstrip("/")
    url = base.removesuffix("/v1") + "/v1/chat/completions"  # an OpenAI-style base ending in /v1 works too
    try:
        key = _read_key(args.api_key_file)
        started = time.monotonic()
        status, body = _post(url, _request(args.model, args.max_tokens), key, args.timeout_seconds, args.host)
        answer = _check(status, body, args.model)
        if time.monotonic() - started > args.timeout_seconds:
            raise SmokeFailure(
                f"answered, but after {time.monotonic() - started:.1f} s, over the "
                f"{args.timeout_seconds:g} s bound: {_cut(body)}"
            )
    except SmokeFailure as failure:
        print(f"smoke test FAILED: POST {url}: {failure}", file=sys.stderr, flush=True)
        return 1
    print(f"smoke test passed: {args.model} answered {answer!r} in {time.monotonic() - started:.1f} s", flush=True)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Send one chat completion to a vLLM server and check the answer.")
    parser.add_argument("--base-url", required=True, help="Server base URL, e.g. http://vllm-prod-server.vllm.svc:8000")
    parser.add_argument("--model", required=True, help="The served model name the response must carry.")
    parser.add_argument("--api-key-file", help="File holding the API key (sent as a Bearer token); none sends no key.")
    parser.add_argument("--timeout-seconds", type=float, default=120.0, help="Bound on the whole request.")
    parser.add_argument("--max-tokens", type=int, default=16, help="max_tokens of the request.")
    parser.add_argument("--host", help="Host header to send (the KEDA HTTP add-on's interceptor routes on it).")
    return parser


def _read_key(path: str | None) -> str | None:
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            key = handle.read().strip()
    except OSError as error:
        raise SmokeFailure(f"cannot read the API key file {path}: {error.strerror}") from None
    if not key:
        raise SmokeFailure(f"the API key file {path} is empty")
    return key


def _request(model: str, max_tokens: int) -> bytes:
    body = {"model": model, "messages": [{"role": "user", "content": PROMPT}], "max_tokens": max_tokens, "temperature": 0}
    return json.dumps(body).encode()


def _post(url: str, data: bytes, key: str | None, timeout: float, host: str | None = None) -> tuple[int, str]:
    headers = {"Content-Type": "application/json"}
    if host:
        headers["Host"] = host
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, data=data, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")
    except TimeoutError:
        raise SmokeFailure(f"no answer within {timeout:g} s (timeout)") from None
    except urllib.error.URLError as error:
        reason = error.reason
        if isinstance(reason, TimeoutError):
            raise SmokeFailure(f"no answer within {timeout:g} s (timeout)") from None
        raise SmokeFailure(f"cannot connect: {reason}") from None
    except OSError as error:
        raise SmokeFailure(f"connection failed: {error}") from None


def _check(status: int, body: str, model: str) -> str:
    """The answer, or SmokeFailure naming the status and the body."""
    if status == 401:
        raise SmokeFailure(f"HTTP 401 (the API key was refused or is missing): {_cut(body)}")
    if status != 200:
        raise SmokeFailure(f"HTTP {status}: {_cut(body)}")
    try:
        response: Any = json.loads(body)
        served = response.get("model")
        message = response["choices"][0]["message"]
    except (ValueError, AttributeError, KeyError, IndexError, TypeError):
        raise SmokeFailure(f"HTTP 200 but not a chat completion: {_cut(body)}") from None
    if served != model:
        raise SmokeFailure(f"HTTP 200 but the response is from model {served!r}, not {model!r}: {_cut(body)}")
    # Any generated text counts, whitespace included: the check proves the model generates, not what it says
    # (a small model, or one at temperature 0, may well answer with newlines).
    answer = message.get("content") or message.get("reasoning_content") or message.get("reasoning") or ""
    if not answer:
        raise SmokeFailure(f"HTTP 200 but the answer is empty: {_cut(body)}")
    return answer


def _cut(body: str) -> str:
    flat = " ".join(body.split())
    return flat if len(flat) <= BODY_LIMIT else flat[:BODY_LIMIT] + f"... ({len(flat)} characters)"


if __name__ == "__main__":
    sys.exit(main())
