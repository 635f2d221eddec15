"""Pod Security Standards "restricted" (kubernetes.io/docs/concepts/security/pod-security-standards) and
the namespace, ServiceAccount and Secrets the pods use. Pure."""

from __future__ import annotations

from typing import Any

from plan.security import PodSecurity

# The key inside each Secret; the HF token is mounted as this file, VLLM_API_KEY reads the other.
HF_TOKEN_KEY = "token"
API_KEY_KEY = "api-key"
# The api_key_previous secret, beside api_key in the same Secret, and the server's variable for it: not VLLM_*, which
# vLLM warns of as an unknown setting of its own (envs.py).
API_KEY_PREVIOUS_KEY = "api-key-previous"
API_KEY_PREVIOUS_ENV = "API_KEY_PREVIOUS"
HF_TOKEN_DIR = "/var/run/secrets/huggingface"  # HF_TOKEN_PATH = HF_TOKEN_DIR/token
RESTRICTED_SECCOMP = {"type": "RuntimeDefault"}
# On each pod template that reads the API key: its fingerprint (plan/security.py api_key_revision), filled in by
# the components (components/kube.py fill); offline it stays this placeholder, like the Secret's value.
API_KEY_REVISION_ANNOTATION = "vllm-serving.io/api-key-revision"
API_KEY_REVISION_PLACEHOLDER = "<api_key fingerprint>"


def pod_security_context(security: PodSecurity) -> dict[str, Any]:
    """Fixed non-root UID/GID, and fsGroup to make the cache volume writable by them; where the platform
    assigns them (OpenShift restricted-v2, plan/security.py) none is set."""
    ids = {"runAsUser": security.run_as_user, "runAsGroup": security.run_as_group, "fsGroup": security.fs_group}
    context: dict[str, Any] = {"runAsNonRoot": True, **{key: value for key, value in ids.items() if value is not None}}
    if security.fs_group is not None:
        # Without this the kubelet re-chowns every file of a 100+ GiB cache on each pod start.
        context["fsGroupChangePolicy"] = "OnRootMismatch"
    return context | {"seccompProfile": dict(RESTRICTED_SECCOMP)}


def container_security_context() -> dict[str, Any]:
    """Writable paths (HOME, /tmp, /dev/shm, cache) are volumes, so the root filesystem stays read-only."""
    return {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": dict(RESTRICTED_SECCOMP),
    }


def render_namespace(name: str, labels: dict[str, str], level: str = "restricted") -> dict[str, Any]:
    psa = {f"pod-security.kubernetes.io/{mode}": level for mode in ("enforce", "audit", "warn")}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {**labels, **psa}}}


RBAC_API = "rbac.authorization.k8s.io/v1"
# OpenShift authorises an SCC for a pod by RBAC: `use` on securitycontextconstraints in the pod's namespace, for
# the pod's ServiceAccount (docs.openshift.com, "Managing security context constraints", "Role-based access to
# security context constraints").
SCC_GROUP, SCC_RESOURCE = "security.openshift.io", "securitycontextconstraints"


def render_scc_use(name: str, namespace: str, labels: dict[str, str], scc: str, account: str) -> list[dict[str, Any]]:
    """A Role allowing `use` of one SCC and its RoleBinding to one ServiceAccount."""
    rule = {"apiGroups": [SCC_GROUP], "resources": [SCC_RESOURCE], "resourceNames": [scc], "verbs": ["use"]}
    return render_role_grant(name, namespace, labels, [rule], account)


def render_role_grant(
    name: str, namespace: str, labels: dict[str, str], rules: list[dict[str, Any]], account: str
) -> list[dict[str, Any]]:
    """A Role of these rules and its RoleBinding to one ServiceAccount of the namespace."""
    metadata = {"name": name, "namespace": namespace, "labels": dict(labels)}
    role = {"apiVersion": RBAC_API, "kind": "Role", "metadata": metadata, "rules": rules}
    binding = {
        "apiVersion": RBAC_API,
        "kind": "RoleBinding",
        "metadata": dict(metadata, labels=dict(labels)),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
    }
    return [role, binding]


def render_service_account(name: str, namespace: str, labels: dict[str, str]) -> dict[str, Any]:
    """The pods never call the Kubernetes API, so no token is mounted."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "automountServiceAccountToken": False,
    }


def render_secret(name: str, namespace: str, labels: dict[str, str], data: dict[str, Any]) -> dict[str, Any]:
    """`data`: each key of the Secret and its value, normally a placeholder the components fill with a Pulumi secret
    Output (stored encrypted in state)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "stringData": dict(data),
    }


def api_key_annotations(secret_name: str | None) -> dict[str, str]:
    """The pod template's annotation for the API key it reads (none without one): vLLM and the router read the
    key at start only, so a rotated key must change the template for the pods to roll (docs/security.md)."""
    return {API_KEY_REVISION_ANNOTATION: API_KEY_REVISION_PLACEHOLDER} if secret_name else {}


def api_key_env(secret_name: str, previous: bool) -> list[dict[str, Any]]:
    """vLLM reads the key from VLLM_API_KEY or --api-key only (no file option), so an env var from a
    secretKeyRef is the least exposed form: it stays out of the pod spec and the process arguments. With the
    previous key as well, both are variables that `api_key_args` hands to --api-key."""
    keys = [("VLLM_API_KEY", API_KEY_KEY)] + ([(API_KEY_PREVIOUS_ENV, API_KEY_PREVIOUS_KEY)] if previous else [])
    return [{"name": env, "valueFrom": {"secretKeyRef": {"name": secret_name, "key": key}}} for env, key in keys]


def api_key_args(previous: bool) -> list[str]:
    """VLLM_API_KEY holds one key, so two go on the command line, expanded by the kubelet from the variables
    (vllm_flags.SEVERAL_API_KEYS_SINCE: the release redacts them in its start-up log); none with one key."""
    return ["--api-key", "$(VLLM_API_KEY)", f"$({API_KEY_PREVIOUS_ENV})"] if previous else []


# A podFailurePolicy rule (batch/v1, GA in Kubernetes 1.31): the controller sets DisruptionTarget on a pod it
# evicts, preempts or deletes with its node (kubernetes.io/docs/concepts/workloads/pods/disruptions, "Pod
# disruption conditions"); such a pod's failure is not the program's.
IGNORE_DISRUPTIONS = {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}


def render_restricted_job(
    security: PodSecurity,
    metadata: dict[str, Any],
    containers: list[dict[str, Any]],
    volumes: list[dict[str, Any]],
    *,
    backoff_limit: int,
    deadline_seconds: int,
    service_account: str | None = None,
    pod_extra: dict[str, Any] | None = None,
    pod_annotations: dict[str, str] | None = None,
    ignore_disruptions: bool = False,
) -> dict[str, Any]:
    """A one-shot Job under Pod Security "restricted": no retries in the pod, no API token (unless `pod_extra`
    asks: the rollout gate's), no Service variables; the download, bucket-copy, smoke-test and rollout-gate Jobs
    are all this shape. `ignore_disruptions`: a pod that fails because it was disrupted (evicted, preempted, its
    node drained: the DisruptionTarget condition) does not count against `backoff_limit`."""
    pod_spec: dict[str, Any] = {"restartPolicy": "Never"}
    if service_account is not None:
        pod_spec["serviceAccountName"] = service_account
    pod_spec |= {
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "securityContext": pod_security_context(security),
        "containers": containers,
        "volumes": volumes,
        **(pod_extra or {}),
    }
    spec: dict[str, Any] = {"backoffLimit": backoff_limit, "activeDeadlineSeconds": deadline_seconds}
    if ignore_disruptions:
        spec["podFailurePolicy"] = {"rules": [IGNORE_DISRUPTIONS]}
    spec["template"] = {"metadata": _pod_metadata(metadata["labels"], pod_annotations or {}), "spec": pod_spec}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": spec}


def _pod_metadata(labels: dict[str, str], annotations: dict[str, str]) -> dict[str, Any]:
    return {"labels": dict(labels), **({"annotations": dict(annotations)} if annotations else {})}
