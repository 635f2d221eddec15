"""A local HTTP server that answers as the Hugging Face Hub does, for the requests huggingface_hub makes.

`GET /api/models/{repo}/revision/{rev}` (model_info), `HEAD`/`GET /{repo}/resolve/{rev}/{file}` with Range
(hf_hub_download, file_exists, get_safetensors_metadata's header reads). Errors carry the Hub's
`X-Error-Code` header, from which huggingface_hub raises RepositoryNotFoundError, RevisionNotFoundError,
GatedRepoError (401 without a token) and EntryNotFoundError. Point huggingface_hub at it with HF_ENDPOINT.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar


@dataclass
class Repo:
    files: dict[str, bytes]
    gated: bool = False
    licence_accepted: bool = True  # by the account of any token sent
    sha: str = ""
    revisions: tuple[str, ...] = ("main",)
    requests: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sha = self.sha or hashlib.sha1("".join(sorted(self.files)).encode()).hexdigest()


_INFO = re.compile(r"^/api/models/(?P<repo>[^/]+/[^/]+)/revision/(?P<rev>[^/?]+)")
_RESOLVE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<file>[^?]+)")


class _Handler(BaseHTTPRequestHandler):
    repos: ClassVar[dict[str, Repo]] = {}

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _error(self, status: int, code: str, message: str) -> None:
        data = json.dumps({"error": message}).encode()
        self.send_response(status)
        self.send_header("X-Error-Code", code)
        self.send_header("X-Error-Message", message)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _repo(self, name: str, revision: str) -> Repo | None:
        repo = self.repos.get(name)
        if repo is None:
            self._error(404, "RepoNotFound", "Repository not found")
            return None
        repo.requests.append(f"{self.command} {self.path}")
        if revision not in repo.revisions and revision != repo.sha:
            self._error(404, "RevisionNotFound", "Invalid rev id")
            return None
        return repo

    def _answer(self, body: bool) -> None:
        info, resolve = _INFO.match(self.path), _RESOLVE.match(self.path)
        if info:
            repo = self._repo(info["repo"], info["rev"])
            if repo is not None:
                siblings = [{"rfilename": name} for name in repo.files]
                data = {
                    "id": info["repo"],
                    "sha": repo.sha,
                    "gated": "manual" if repo.gated else False,
                    "private": False,
                    "siblings": siblings,
                }
                self._send(200, json.dumps(data).encode(), "application/json", body, repo.sha)
            return
        if not resolve:
            self._error(404, "RepoNotFound", "Repository not found")
            return
        repo = self._repo(resolve["repo"], resolve["rev"])
        if repo is None:
            return
        if repo.gated and "authorization" not in {key.lower() for key in self.headers}:
            self._error(401, "GatedRepo", "Access to model is restricted. You must have access to it and be authenticated.")
            return
        if repo.gated and not repo.licence_accepted:
            self._error(403, "GatedRepo", "Access to model is restricted and you are not in the authorized list.")
            return
        content = repo.files.get(resolve["file"])
        if content is None:
            self._error(404, "EntryNotFound", "Entry not found")
            return
        span = re.match(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        if span:
            start = int(span[1])
            end = min(int(span[2]) if span[2] else len(content) - 1, len(content) - 1)
            self._send(206, content[start : end + 1], "application/octet-stream", body, repo.sha, len(content))
        else:
            self._send(200, content, "application/octet-stream", body, repo.sha)

    def _send(self, status: int, data: bytes, kind: str, body: bool, sha: str, total: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Repo-Commit", sha)
        self.send_header("ETag", f'"{hashlib.sha1(data).hexdigest()}"')
        self.send_header("Accept-Ranges", "bytes")
        if total is not None:
            self.send_header("Content-Range", f"bytes {0}-{len(data) - 1}/{total}")
        self.end_headers()
        if body:
            self.wfile.write(data)


@contextmanager
def serving(repos: dict[str, Repo]) -> Iterator[str]:
    """Serve `repos` on a free local port; yields the endpoint URL."""
    handler = type("Handler", (_Handler,), {"repos": repos})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
