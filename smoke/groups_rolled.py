"""Wait until a LeaderWorkerSet's rollout is done: the controller has seen the object's latest generation, every
group runs the current template, every group is ready, and the Available condition is True. A controller that
writes no `observedGeneration` must show all that at two polls in a row instead (`wait`).

Pulumi cannot await that itself: its `pulumi.com/waitFor` reads `.status` as it is right after the update, when
`readyReplicas` still counts the old groups and nothing compares `observedGeneration` with `metadata.generation`.
This runs in the rollout-gate Job (components/render/rollout_gate.py) with a ServiceAccount token whose Role may
`get` this one LeaderWorkerSet and list the namespace's pods. Stdlib only, so any python3 image runs it.

While it waits it reads the groups' pods, so a template that cannot start fails in minutes, not at the deadline
(`GroupWatch`): LeaderWorkerSet recreates a whole group whenever one of its containers restarts, so a crash
loop never shows as a pod's restart count, only as the group's leader pod replaced again and again.

Exit 0 when the rollout is done; 1 when the groups fail (the line names the pod and its last exit or wait),
when the API server has given no usable answer for --unreachable-seconds, when it refuses the request (the
line names the status and why) or when a token or answer is beyond its bound; 2 on bad arguments. A rollout
that never finishes is bounded by the Job's activeDeadlineSeconds: the last line then says how far it got.
"""

from __future__ import annotations

import argparse
import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
PATH = "/apis/leaderworkerset.x-k8s.io/v1/namespaces/{namespace}/leaderworkersets/{name}"
PODS_PATH = "/api/v1/namespaces/{namespace}/pods"
MAX_BODY_BYTES = 4 * 1024 * 1024  # a LeaderWorkerSet with both pod templates, or a page of pods, is well under this
MAX_TOKEN_BYTES = 64 * 1024
REQUEST_TIMEOUT_S = 30
REFUSED = (401, 403, 404)  # no retry helps: a token, a Role or the object is missing
PODS_PER_PAGE, MAX_PAGES = 50, 40
# The labels LWS puts on every pod of a group (kubernetes-sigs/lws api/leaderworkerset/v1/leaderworkerset_types.go).
NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
GROUP_LABEL = "leaderworkerset.sigs.k8s.io/group-index"
WORKER_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"  # "0" on the leader
REVISION_LABEL = "leaderworkerset.sigs.k8s.io/template-revision-hash"
# The kubelet's waiting reasons (kubernetes/kubernetes pkg/kubelet/images/types.go, kuberuntime_container.go): an
# image name that does not parse, or `Never` pull without the image, mends only with a new template; a failed pull
# or a missing Secret or ConfigMap key may mend (the registry back, the object created), so those fail once they
# have lasted --stuck-seconds, past two more of the kubelet's pull attempts (its back-off caps at 5 minutes).
NEVER_MENDS = frozenset({"InvalidImageName", "ErrImageNeverPull"})
MAY_MEND = {
    "ErrImagePull": "image pull",
    "ImagePullBackOff": "image pull",
    "CreateContainerConfigError": "container config",
    "CreateContainerError": "container creation",
}
QUIET_WAITING = frozenset({"ContainerCreating", "PodInitializing"})
RESTARTS_LIMIT = 3  # a rolling update replaces a group once; three more at one revision is a loop
STUCK_SECONDS = 600
# An API server restart or a token rotation passes in seconds; minutes without an answer is a blocked path.
UNREACHABLE_SECONDS = 300
MESSAGE_LINES, MESSAGE_CHARS = 3, 400


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


def tail(message: str) -> str:
    """The last lines of a termination message or a waiting message (a traceback ends with its cause), bounded."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return " | ".join(lines[-MESSAGE_LINES:])[-MESSAGE_CHARS:]


def container_statuses(pod: dict[str, Any]) -> list[dict[str, Any]]:
    status = pod.get("status") or {}
    return [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]


def last_exit(container: dict[str, Any]) -> str:
    """How the container ended before its latest restart; empty if it never restarted."""
    ended = (container.get("lastState") or {}).get("terminated")
    if not ended:
        return ""
    text = f"container {container.get('name')} exited {ended.get('exitCode')} ({ended.get('reason', 'no reason')})"
    message = tail(ended.get("message") or "")
    return f"{text}: {message}" if message else text


def unschedulable(pod: dict[str, Any]) -> str:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("reason") == "Unschedulable":
            return f"Pending, Unschedulable: {tail(condition.get('message') or '')}"
    return ""


def waiting_on(container: dict[str, Any]) -> tuple[str, str]:
    """The container's waiting reason and the tail of its message; empty while it runs or has ended."""
    waiting = (container.get("state") or {}).get("waiting") or {}
    return waiting.get("reason", ""), tail(waiting.get("message") or "")


def identity(pod: dict[str, Any]) -> tuple[str, str, dict[str, str]]:
    meta = pod.get("metadata") or {}
    return meta.get("uid", ""), meta.get("name", "?"), meta.get("labels") or {}


@dataclass
class GroupWatch:
    """What the gate learns from the groups' pods across polls. A group fails when its leader pod was replaced
    `restarts_limit` times at one template revision (a rolling update replaces it once, at a new revision), or
    a container of one pod restarted that often (a LeaderWorkerSet without RecreateGroupOnPodRestart); a
    container fails when it waits on a reason in NEVER_MENDS, or on one in MAY_MEND for `stuck_seconds`."""

    restarts_limit: int
    stuck_seconds: float
    leaders: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # (group, revision): leader pod UIDs
    stuck_since: dict[tuple[str, str, str], float] = field(default_factory=dict)  # (pod UID, container, cause)
    said: set[tuple[str, str]] = field(default_factory=set)  # (pod UID, line): each news line once
    exits: dict[str, str] = field(default_factory=dict)  # group: the latest exit seen in it

    def observe(self, pods: list[dict[str, Any]], now: float) -> tuple[list[str], str]:
        """The news lines of this poll, and a failure line (empty while nothing failed)."""
        news: list[str] = []
        failures: list[str] = []
        stuck: dict[tuple[str, str, str], float] = {}
        for pod in pods:
            uid, name, labels = identity(pod)
            if labels.get(WORKER_LABEL) == "0":
                self.leaders.setdefault((labels.get(GROUP_LABEL, ""), labels.get(REVISION_LABEL, "")), set()).add(uid)
            news += self._news(pod)
            for container in container_statuses(pod):
                failures += self._container_failures(uid, name, container, now, stuck)
        self.stuck_since = stuck  # a wait that has ended starts afresh if it comes back
        failures += self._recreation_failures()
        return news, (failures[0] if failures else "")

    def _news(self, pod: dict[str, Any]) -> list[str]:
        """Each exit, wait and scheduling failure of the pod, the first time a poll sees it."""
        uid, name, labels = identity(pod)
        found = [unschedulable(pod)]
        for container in container_statuses(pod):
            exited, (reason, _) = last_exit(container), waiting_on(container)
            if exited:
                self.exits[labels.get(GROUP_LABEL, "")] = f"pod {name} {exited}"
            if reason and reason not in QUIET_WAITING:
                found.append(f"container {container.get('name')} waiting: {reason}")
            found.append(exited)
        fresh = [line for line in found if line and (uid, line) not in self.said]
        self.said |= {(uid, line) for line in fresh}
        return [f"pod {name} {line}" for line in fresh]

    def _container_failures(
        self, uid: str, name: str, container: dict[str, Any], now: float, stuck: dict[tuple[str, str, str], float]
    ) -> list[str]:
        where = f"pod {name} container {container.get('name')}"
        reason, message = waiting_on(container)
        failures = []
        if reason in NEVER_MENDS:
            failures.append(f"{where} cannot start: {reason}: {message}")
        elif reason in MAY_MEND:
            key = (uid, str(container.get("name")), MAY_MEND[reason])
            since = stuck[key] = self.stuck_since.get(key, now)
            if now - since >= self.stuck_seconds:
                failures.append(f"{where} has waited {now - since:.0f} s on its {key[2]}: {reason}: {message}")
        if container.get("restartCount", 0) >= self.restarts_limit:
            failures.append(f"{where} restarted {container['restartCount']} times; last {last_exit(container)}")
        return failures

    def _recreation_failures(self) -> list[str]:
        failures = []
        for (group, revision), uids in sorted(self.leaders.items()):
            if len(uids) - 1 >= self.restarts_limit:
                last = self.exits.get(group, "no exit seen: the pods went before a poll read them")
                failures.append(
                    f"group {group} was recreated {len(uids) - 1} times at revision {revision or '?'} (LeaderWorkerSet "
                    f"recreates a group when any of its containers restarts); last: {last}"
                )
        return failures


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


@dataclass(frozen=True)
class Api:
    url: str  # the API server, no trailing slash
    namespace: str
    name: str  # the LeaderWorkerSet
    token_file: str
    context: ssl.SSLContext | None

    def get(self, url: str) -> dict[str, Any]:
        return fetch(url, read_bounded(self.token_file, MAX_TOKEN_BYTES), self.context)

    def leaderworkerset(self) -> dict[str, Any]:
        return self.get(self.url + PATH.format(namespace=self.namespace, name=self.name))

    def pods(self) -> list[dict[str, Any]]:
        """The groups' pods, page by page (an expired `continue` answers 410, which the next poll retries)."""
        pods: list[dict[str, Any]] = []
        query = {"labelSelector": f"{NAME_LABEL}={self.name}", "limit": str(PODS_PER_PAGE)}
        for _ in range(MAX_PAGES):
            page = self.get(self.url + PODS_PATH.format(namespace=self.namespace) + "?" + urllib.parse.urlencode(query))
            pods += page.get("items") or []
            query["continue"] = (page.get("metadata") or {}).get("continue") or ""
            if not query["continue"]:
                return pods
        raise Refused(f"more than {PODS_PER_PAGE * MAX_PAGES} pods carry {NAME_LABEL}={self.name}")


def wait(
    api: Api,
    watch: GroupWatch,
    poll_seconds: float,
    unreachable_seconds: float = UNREACHABLE_SECONDS,
    say: Callable[[str], None] = print,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Poll until the rollout is done or the groups fail; print a line whenever its progress changes, and each
    exit or wait of a group's container once. Without `observedGeneration` a done status must hold at two polls
    in a row: the controller rewrites the status within moments of an update, so a status left from the
    previous generation does not outlast a poll interval while the controller runs."""
    last, done_before, failing_since = "", False, None
    while True:
        news: list[str] = []
        failure = ""
        try:
            lws = api.leaderworkerset()
            done, line = progress(lws)
            settled = done and (done_before or "observedGeneration" in (lws.get("status") or {}))
            done_before = done
            if not settled:
                news, failure = watch.observe(api.pods(), clock())
        except Refused as refused:
            say(f"FAIL {refused}")
            return 1
        except (OSError, ValueError) as error:  # the API server restarting, a token being rotated
            settled, done_before, line = False, False, f"retrying: {error}"
            failing_since = clock() if failing_since is None else failing_since
            if clock() - failing_since >= unreachable_seconds:
                say(
                    f"FAIL no usable answer from the API server for {clock() - failing_since:.0f} s ({error}): is the gate's "
                    "NetworkPolicy egress to it admitted? (docs/multinode.md)"
                )
                return 1
        else:
            failing_since = None
        for text in news:
            say(text)
        if failure:
            say(f"FAIL {failure}")
            return 1
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
    parser.add_argument("--restarts-limit", type=int, default=RESTARTS_LIMIT, help="group recreations that fail")
    parser.add_argument("--stuck-seconds", type=float, default=STUCK_SECONDS, help="a failed pull's wait that fails")
    parser.add_argument("--unreachable-seconds", type=float, default=UNREACHABLE_SECONDS, help="no answer that fails")
    parser.add_argument("--api-url", default=default_api_url(), help="default: the in-cluster API server")
    parser.add_argument("--token-file", default=f"{ACCOUNT_DIR}/token")
    parser.add_argument("--ca-file", default=f"{ACCOUNT_DIR}/ca.crt", help="for an https API URL")
    args = parser.parse_args(argv)
    if not args.api_url:
        parser.error("--api-url is required outside a pod (KUBERNETES_SERVICE_HOST is not set)")
    if args.poll_seconds <= 0:
        parser.error("--poll-seconds must be positive")
    if args.restarts_limit < 1:
        parser.error("--restarts-limit must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    url = args.api_url.rstrip("/")
    context = ssl.create_default_context(cafile=args.ca_file) if url.startswith("https://") else None
    api = Api(url, args.namespace, args.name, args.token_file, context)
    watch = GroupWatch(args.restarts_limit, args.stuck_seconds)
    return wait(api, watch, args.poll_seconds, args.unreachable_seconds)


if __name__ == "__main__":
    sys.exit(main())
