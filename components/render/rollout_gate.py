"""The rollout gate of the server (plan/rollout_gate.py): a ServiceAccount whose Role may `get` the one workload
and `list` pods (and a Deployment's ReplicaSets), a ConfigMap holding smoke/rolled_out.py and a Job that runs it
until the workload has rolled out, or its pods cannot start. Pure.

The Job's name ends in a digest of the workload's spec, so whatever rolls the pods creates a new Job, which runs,
and the completed one goes after it (a GitOps tool prunes it; Pulumi replaces create-first): a Job's template is
immutable, so one kept under its name could not be applied again. Its pod template carries the API key's
fingerprint, which the server's templates carry too and the digest cannot see (it is filled in at deploy time), so
a rotation replaces it under its name, deleted first (docs/sources.md §S7.1). An unchanged stack keeps the
completed Job.
"""

from __future__ import annotations

import json
from typing import Any

from components.render.resources import container_resources
from components.render.security import (
    api_key_annotations,
    container_security_context,
    render_restricted_job,
    render_role_grant,
    render_service_account,
)
from plan.names import cache_key
from plan.rollout_gate import RolloutGatePlan, gate_script

SCRIPT_DIR = "/opt/rollout-gate"
SCRIPT_NAME = "rolled_out.py"
# The API group and resource of each workload kind the gate reads.
WORKLOAD_RESOURCES = {
    "Deployment": ("apps", "deployments"),
    "StatefulSet": ("apps", "statefulsets"),
    "LeaderWorkerSet": ("leaderworkerset.x-k8s.io", "leaderworkersets"),
}


def gate_job_name(gate: RolloutGatePlan, workload: dict[str, Any]) -> str:
    """`<gate>-<digest of the workload's spec>`: any change to the spec rolls the pods, and runs a new gate."""
    return f"{gate.name}-{cache_key(json.dumps(workload['spec'], sort_keys=True))}"


def _metadata(gate: RolloutGatePlan) -> dict[str, Any]:
    return {"name": gate.name, "namespace": gate.namespace, "labels": dict(gate.labels)}


def render_gate_access(gate: RolloutGatePlan) -> list[dict[str, Any]]:
    """Its ServiceAccount (no token unless a pod asks: the Job's does), `get` on the one workload and `list` on
    the namespace's pods: a Role cannot narrow a list to a label selector, and the rollout's pods are how the gate
    sees a crash loop (smoke/rolled_out.py PodWatch). A Deployment's gate lists ReplicaSets too: the one at the
    Deployment's revision names its pods."""
    account = render_service_account(gate.name, gate.namespace, gate.labels)
    group, resource = WORKLOAD_RESOURCES[gate.kind]
    rules = [
        {"apiGroups": [group], "resources": [resource], "resourceNames": [gate.workload], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
    ]
    if gate.kind == "Deployment":
        rules.append({"apiGroups": ["apps"], "resources": ["replicasets"], "verbs": ["list"]})
    return [account, *render_role_grant(gate.name, gate.namespace, gate.labels, rules, gate.name)]


def render_gate_configmap(gate: RolloutGatePlan) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _metadata(gate), "data": {SCRIPT_NAME: gate_script()}}


def render_gate_job(gate: RolloutGatePlan, workload: dict[str, Any], api_key_secret: str | None) -> dict[str, Any]:
    """The Job, its token projected by automountServiceAccountToken (the API server's CA and a bound token)."""
    container = {
        "name": "rollout-gate",
        "image": gate.image,
        "imagePullPolicy": "IfNotPresent",
        "command": [
            "python3",
            "-B",
            f"{SCRIPT_DIR}/{SCRIPT_NAME}",
            "--namespace",
            gate.namespace,
            "--kind",
            gate.kind,
            "--name",
            gate.workload,
            "--poll-seconds",
            str(gate.poll_seconds),
        ],
        "env": [{"name": "PYTHONUNBUFFERED", "value": "1"}],
        "volumeMounts": [{"name": "script", "mountPath": SCRIPT_DIR, "readOnly": True}],
        "resources": container_resources("50m", 0.125),
        "securityContext": container_security_context(),
        "terminationMessagePolicy": "FallbackToLogsOnError",  # how far the rollout got reaches `pulumi up`
    }
    volumes = [{"name": "script", "configMap": {"name": gate.name, "defaultMode": 0o444}}]
    return render_restricted_job(
        gate.security,
        {**_metadata(gate), "name": gate_job_name(gate, workload)},
        [container],
        volumes,
        # The first failure fails `pulumi up` (a second pod would count restarts afresh, as long again); an evicted
        # gate pod is replaced without counting.
        backoff_limit=0,
        ignore_disruptions=True,
        deadline_seconds=gate.deadline_seconds,
        service_account=gate.name,
        pod_extra={"automountServiceAccountToken": True},
        pod_annotations=api_key_annotations(api_key_secret),
    )


def render_rollout_gate(gate: RolloutGatePlan, workload: dict[str, Any], api_key_secret: str | None) -> list[dict[str, Any]]:
    """The account, Role, RoleBinding, the script's ConfigMap, then the Job."""
    return [
        *render_gate_access(gate),
        render_gate_configmap(gate),
        render_gate_job(gate, workload, api_key_secret),
    ]
