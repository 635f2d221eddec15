"""Wait until the server's workload has rolled out: a Deployment or a StatefulSet by the rule `kubectl rollout
status` applies (kubernetes/kubernetes staging/src/k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go@18ff3ed0),
a LeaderWorkerSet once the controller has seen the object's latest generation, every group runs the current
template, every group is ready and the Available condition is True. A controller that writes no
`observedGeneration` must show all that at two polls in a row instead (`wait`).

Pulumi's own await cannot stand in: for a Deployment or a StatefulSet it runs to the resource's timeout however
early the pods fail (a crash loop held `pulumi up` for hours), and a LeaderWorkerSet's `pulumi.com/waitFor` reads
`.status` as it is right after the update, when `readyReplicas` still counts the old groups. This runs in the
rollout-gate Job (components/render/rollout_gate.py) with a ServiceAccount token whose Role may `get` this one
workload and list the namespace's pods (and, for a Deployment, its ReplicaSets). Stdlib only, so any python3
image runs it.

While it waits it reads the pods of the rollout's revision, so a template that cannot start fails in minutes, not
at the deadline (`PodWatch`): a container restarted `--restarts-limit` times since the gate first saw it, and for a
LeaderWorkerSet a group's leader pod replaced that often at one revision (LWS recreates a whole group whenever one
of its containers restarts, so a crash loop never shows as a restart count).

Exit 0 when the rollout is done; 1 when the pods fail (the line names the pod and its last exit or wait), when a
Deployment passes its progressDeadlineSeconds, when the API server has given no usable answer for
--unreachable-seconds, when it refuses the request (the line names the status and why) or when a token or answer is
beyond its bound; 2 on bad arguments. A rollout that never finishes is bounded by the Job's activeDeadlineSeconds:
the last line then says how far it got.
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
PODS_PATH = "/api/v1/namespaces/{namespace}/pods"
REPLICASETS_PATH = "/apis/apps/v1/namespaces/{namespace}/replicasets"
MAX_BODY_BYTES = 4 * 1024 * 1024  # a workload with its pod templates, or a page of pods, is well under this
MAX_TOKEN_BYTES = 64 * 1024
REQUEST_TIMEOUT_S = 30
REFUSED = (401, 403, 404)  # no retry helps: a token, a Role or the object is missing
PODS_PER_PAGE, MAX_PAGES = 50, 40
# The labels LWS puts on every pod of a group (kubernetes-sigs/lws api/leaderworkerset/v1/leaderworkerset_types.go).
NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
GROUP_LABEL = "leaderworkerset.sigs.k8s.io/group-index"
WORKER_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"  # "0" on the leader
REVISION_LABEL = "leaderworkerset.sigs.k8s.io/template-revision-hash"
# What names a revision's pods: the Deployment controller's annotation on the Deployment and its ReplicaSets, and the
# hash label it puts on the ReplicaSet and its pods; the StatefulSet controller's label on each pod
# (kubernetes/kubernetes pkg/controller/deployment/util/deployment_util.go, staging/src/k8s.io/api/apps/v1/types.go).
DEPLOYMENT_REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
STATEFULSET_REVISION_LABEL = "controller-revision-hash"
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


class Failed(Exception):
    """What the controller itself has given up on: a Deployment past its progressDeadlineSeconds."""


def _current(generation: int, observed: int | None) -> tuple[bool, str]:
    """Whether the controller has seen the latest generation, and a few words for it."""
    seen = "no observedGeneration" if observed is None else f"observed {observed}"
    return observed is None or observed >= generation, f"generation {generation} ({seen})"


def leaderworkerset_progress(lws: dict[str, Any]) -> tuple[bool, str]:
    """Whether the rollout is done, and a line saying how far it is. A controller that writes no
    `observedGeneration` (older LeaderWorkerSet releases) gives no generation to compare: see `wait`."""
    replicas = lws.get("spec", {}).get("replicas", 1)
    status = lws.get("status") or {}
    current, seen = _current(lws.get("metadata", {}).get("generation", 0), status.get("observedGeneration"))
    updated, ready = status.get("updatedReplicas", 0), status.get("readyReplicas", 0)
    conditions = status.get("conditions") or []
    available = any(c.get("type") == "Available" and c.get("status") == "True" for c in conditions)
    done = current and updated >= replicas and ready >= replicas and available
    return done, f"{seen}: {updated} of {replicas} groups updated, {ready} ready, Available={available}"


def deployment_progress(deployment: dict[str, Any]) -> tuple[bool, str]:
    """kubectl's rule: every replica updated, no old one left, every updated one available. Failed once the
    controller marks the rollout past its progressDeadlineSeconds."""
    name, replicas = deployment.get("metadata", {}).get("name", "?"), deployment.get("spec", {}).get("replicas", 1)
    status = deployment.get("status") or {}
    current, seen = _current(deployment.get("metadata", {}).get("generation", 0), status.get("observedGeneration", 0))
    for condition in status.get("conditions") or []:
        if current and condition.get("type") == "Progressing" and condition.get("reason") == "ProgressDeadlineExceeded":
            raise Failed(f"deployment {name} exceeded its progress deadline: {tail(condition.get('message') or '')}")
    updated, total, available = (status.get(key, 0) for key in ("updatedReplicas", "replicas", "availableReplicas"))
    done = current and updated >= replicas and total <= updated and available >= updated
    line = f"{seen}: {updated} of {replicas} replicas updated, {total - updated} old pending, {available} available"
    return done, line


def statefulset_progress(statefulset: dict[str, Any]) -> tuple[bool, str]:
    """kubectl's rule, without its shortcut for a rollingUpdate block: every replica ready, and the update revision
    the current one (the controller makes it so once every pod runs it), or past the partition when there is one."""
    spec, status = statefulset.get("spec", {}), statefulset.get("status") or {}
    replicas = spec.get("replicas", 1)
    partition = ((spec.get("updateStrategy") or {}).get("rollingUpdate") or {}).get("partition", 0)
    observed = status.get("observedGeneration", 0)
    current, seen = _current(statefulset.get("metadata", {}).get("generation", 0), observed)
    ready, updated = status.get("readyReplicas", 0), status.get("updatedReplicas", 0)
    revision = status.get("updateRevision", "")
    rolled = updated >= replicas - partition if partition else revision == status.get("currentRevision", "")
    done = current and observed > 0 and ready >= replicas and rolled
    return done, f"{seen}: {ready} of {replicas} ready, {updated} at revision {revision or '?'}"


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
class PodWatch:
    """What the gate learns from the rollout's pods across polls. A container fails when it restarted
    `restarts_limit` times since the gate first saw it (a pod the gate finds with restarts from long ago is not
    failing now), when it waits on a reason in NEVER_MENDS, or on one in MAY_MEND for `stuck_seconds`; a
    LeaderWorkerSet's group fails when its leader pod was replaced `restarts_limit` times at one template revision
    (a rolling update replaces it once, at a new revision)."""

    restarts_limit: int
    stuck_seconds: float
    leaders: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # (group, revision): leader pod UIDs
    stuck_since: dict[tuple[str, str, str], float] = field(default_factory=dict)  # (pod UID, container, cause)
    said: set[tuple[str, str]] = field(default_factory=set)  # (pod UID, line): each news line once
    exits: dict[str, str] = field(default_factory=dict)  # group: the latest exit seen in it
    first_restarts: dict[tuple[str, str], int] = field(default_factory=dict)  # (pod UID, container): when first seen

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
        restarts = container.get("restartCount", 0)
        since = restarts - self.first_restarts.setdefault((uid, str(container.get("name"))), restarts)
        if since >= self.restarts_limit:
            failures.append(f"{where} restarted {since} times while the gate watched; last {last_exit(container)}")
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


def match_labels(workload: dict[str, Any]) -> str:
    """The workload's selector as a label selector (the server's workloads select by matchLabels only)."""
    labels = ((workload.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    return ",".join(f"{key}={value}" for key, value in sorted(labels.items()))


def leaderworkerset_pods(api: Api, lws: dict[str, Any]) -> str | None:
    """Every group's pods: PodWatch keys the leaders by revision itself."""
    return f"{NAME_LABEL}={api.name}"


def statefulset_pods(api: Api, statefulset: dict[str, Any]) -> str | None:
    """The pods of the update revision; None before the controller has named it."""
    revision = (statefulset.get("status") or {}).get("updateRevision")
    return f"{match_labels(statefulset)},{STATEFULSET_REVISION_LABEL}={revision}" if revision else None


def deployment_pods(api: Api, deployment: dict[str, Any]) -> str | None:
    """The pods of the Deployment's ReplicaSet at its revision; None before the controller has made it."""
    meta = deployment.get("metadata") or {}
    revision = (meta.get("annotations") or {}).get(DEPLOYMENT_REVISION_ANNOTATION)
    for replicaset in api.items(REPLICASETS_PATH, match_labels(deployment)) if revision else []:
        rs_meta = replicaset.get("metadata") or {}
        owned = any(owner.get("uid") == meta.get("uid") for owner in rs_meta.get("ownerReferences") or [])
        template_hash = (rs_meta.get("labels") or {}).get(POD_TEMPLATE_HASH_LABEL)
        if owned and template_hash and (rs_meta.get("annotations") or {}).get(DEPLOYMENT_REVISION_ANNOTATION) == revision:
            return f"{match_labels(deployment)},{POD_TEMPLATE_HASH_LABEL}={template_hash}"
    return None


@dataclass(frozen=True)
class Kind:
    path: str  # the one object, by namespace and name
    progress: Callable[[dict[str, Any]], tuple[bool, str]]
    rollout_selector: Callable[[Api, dict[str, Any]], str | None]  # the label selector of the rollout's pods


KINDS = {
    "Deployment": Kind("/apis/apps/v1/namespaces/{namespace}/deployments/{name}", deployment_progress, deployment_pods),
    "StatefulSet": Kind("/apis/apps/v1/namespaces/{namespace}/statefulsets/{name}", statefulset_progress, statefulset_pods),
    "LeaderWorkerSet": Kind(
        "/apis/leaderworkerset.x-k8s.io/v1/namespaces/{namespace}/leaderworkersets/{name}",
        leaderworkerset_progress,
        leaderworkerset_pods,
    ),
}


@dataclass(frozen=True)
class Api:
    url: str  # the API server, no trailing slash
    namespace: str
    kind: Kind
    name: str  # the workload
    token_file: str
    context: ssl.SSLContext | None

    def get(self, url: str) -> dict[str, Any]:
        return fetch(url, read_bounded(self.token_file, MAX_TOKEN_BYTES), self.context)

    def workload(self) -> dict[str, Any]:
        return self.get(self.url + self.kind.path.format(namespace=self.namespace, name=self.name))

    def items(self, path: str, selector: str) -> list[dict[str, Any]]:
        """The namespace's objects at `path` that `selector` matches, page by page (an expired `continue` answers
        410, which the next poll retries)."""
        found: list[dict[str, Any]] = []
        query = {"labelSelector": selector, "limit": str(PODS_PER_PAGE)}
        for _ in range(MAX_PAGES):
            page = self.get(self.url + path.format(namespace=self.namespace) + "?" + urllib.parse.urlencode(query))
            found += page.get("items") or []
            query["continue"] = (page.get("metadata") or {}).get("continue") or ""
            if not query["continue"]:
                return found
        raise Refused(f"more than {PODS_PER_PAGE * MAX_PAGES} objects at {path} carry {selector}")

    def rollout_pods(self, workload: dict[str, Any]) -> list[dict[str, Any]]:
        selector = self.kind.rollout_selector(self, workload)
        return self.items(PODS_PATH, selector) if selector else []


def wait(
    api: Api,
    watch: PodWatch,
    poll_seconds: float,
    unreachable_seconds: float = UNREACHABLE_SECONDS,
    say: Callable[[str], None] = print,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Poll until the rollout is done or its pods fail; print a line whenever its progress changes, and each
    exit or wait of a pod's container once. Without `observedGeneration` a done status must hold at two polls
    in a row: the controller rewrites the status within moments of an update, so a status left from the
    previous generation does not outlast a poll interval while the controller runs."""
    last, done_before, failing_since = "", False, None
    while True:
        news: list[str] = []
        failure = ""
        try:
            workload = api.workload()
            done, line = api.kind.progress(workload)
            settled = done and (done_before or "observedGeneration" in (workload.get("status") or {}))
            done_before = done
            if not settled:
                news, failure = watch.observe(api.rollout_pods(workload), clock())
        except (Refused, Failed) as refused:
            say(f"FAIL {refused}")
            return 1
        except (OSError, ValueError) as error:  # the API server restarting, a token being rotated
            settled, done_before, line = False, False, f"retrying: {error}"
            failing_since = clock() if failing_since is None else failing_since
            if clock() - failing_since >= unreachable_seconds:
                say(
                    f"FAIL no usable answer from the API server for {clock() - failing_since:.0f} s ({error}): is the gate's "
                    "NetworkPolicy egress to it admitted? (routing.api_server_cidrs, docs/kubernetes.md)"
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
    parser.add_argument("--kind", required=True, choices=sorted(KINDS), help="the workload's kind")
    parser.add_argument("--name", required=True, help="the workload")
    parser.add_argument("--poll-seconds", type=float, default=10.0)
    parser.add_argument("--restarts-limit", type=int, default=RESTARTS_LIMIT, help="restarts (or group recreations) that fail")
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
    api = Api(url, args.namespace, KINDS[args.kind], args.name, args.token_file, context)
    watch = PodWatch(args.restarts_limit, args.stuck_seconds)
    return wait(api, watch, args.poll_seconds, args.unreachable_seconds)


if __name__ == "__main__":
    sys.exit(main())
