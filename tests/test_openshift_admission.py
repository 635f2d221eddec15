"""Every pod an openshift stack renders passes a model of OpenShift's default `restricted-v2` SCC, and runs as
an arbitrary UID in group 0 (docs/sources.md §S8, docs/security.md "OpenShift").

The model (openshift/cluster-kube-apiserver-operator bindata restricted-v2): runAsUser MustRunAsRange and
fsGroup MustRunAs over the project's `openshift.io/sa.scc.uid-range`, so a fixed value outside it is
rejected; runAsNonRoot; allowPrivilegeEscalation false; capabilities drop ALL (only NET_BIND_SERVICE may be
added); seccomp RuntimeDefault; no privileged container, host namespace or hostPath volume.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from components.render.manifests import render_manifests
from plan.names import HF_HOME, HOME
from tests.factories import make_config
from tests.kubernetes_fixtures import plan_of

PROJECT_UID_RANGE = range(1000680000, 1000690000)  # an example project's openshift.io/sa.scc.uid-range
ID_FIELDS = ("runAsUser", "runAsGroup", "fsGroup")
WRITABLE = (HOME, "/tmp", HF_HOME)  # where vLLM, Triton, torch.compile and huggingface_hub write
FEATURES: dict[str, dict[str, Any]] = {
    "one replica": {},
    "per-replica volumes": {"replicas": 2, "delivery": {"mode": "per_replica_volume"}},
    "a bucket copy": {
        "model": {"revision": "0e9e39f249a16976918f6564b8830bc894c89659"},
        "delivery": {
            "mode": "object_storage",
            "object_storage": {"uri": "s3://models/llama/", "copy_from_hub": True, "credentials_secret": "keys"},
        },
    },
    "the API key and the smoke test": {"security": {"require_api_key": True}},
}


def pod_specs(value: Any) -> Iterator[dict[str, Any]]:
    """Every pod spec in the rendered objects: any mapping that lists containers."""
    if isinstance(value, dict):
        if "containers" in value:
            yield value
        for child in value.values():
            yield from pod_specs(child)
    elif isinstance(value, list):
        for child in value:
            yield from pod_specs(child)


def scc_violations(pod: dict[str, Any]) -> list[str]:
    found: list[str] = []
    context = pod.get("securityContext", {})
    containers = [*pod.get("initContainers", []), *pod["containers"]]
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(key):
            found.append(key)
    found += [f"hostPath volume {v['name']}" for v in pod.get("volumes", []) if "hostPath" in v]
    for owner, settings in [("pod", context), *((c["name"], c.get("securityContext", {})) for c in containers)]:
        found += [
            f"{owner}: {key} {settings[key]} outside the range"
            for key in ID_FIELDS
            if key in settings and settings[key] not in PROJECT_UID_RANGE
        ]
    for container in containers:
        settings = container.get("securityContext", {})
        name = container["name"]
        if not (settings.get("runAsNonRoot") or context.get("runAsNonRoot")):
            found.append(f"{name}: runAsNonRoot")
        if settings.get("allowPrivilegeEscalation") is not False:
            found.append(f"{name}: allowPrivilegeEscalation")
        if settings.get("privileged"):
            found.append(f"{name}: privileged")
        capabilities = settings.get("capabilities", {})
        if "ALL" not in capabilities.get("drop", []) or set(capabilities.get("add", [])) - {"NET_BIND_SERVICE"}:
            found.append(f"{name}: capabilities")
        seccomp = settings.get("seccompProfile") or context.get("seccompProfile") or {}
        if seccomp.get("type") != "RuntimeDefault":
            found.append(f"{name}: seccompProfile")
    return found


def rendered_pods(**groups: Any) -> list[dict[str, Any]]:
    return list(pod_specs(render_manifests(plan_of(make_config(**groups)))))


@pytest.mark.parametrize("feature", FEATURES, ids=str)
def test_every_openshift_pod_passes_the_restricted_v2_scc(feature: str) -> None:
    pods = rendered_pods(cluster={"profile": "openshift"}, **FEATURES[feature])
    assert pods and [scc_violations(pod) for pod in pods] == [[] for _ in pods]


def test_an_openshift_pod_with_a_forced_uid_fails_the_restricted_v2_scc() -> None:
    pods = rendered_pods(cluster={"profile": "openshift"}, security={"run_as_user": 10001})
    assert "pod: runAsUser 10001 outside the range" in scc_violations(pods[0])


def test_a_generic_pod_fixes_its_uid_which_restricted_v2_would_reject() -> None:
    assert "pod: runAsUser 10001 outside the range" in scc_violations(rendered_pods()[0])


@pytest.mark.parametrize("feature", FEATURES, ids=str)
def test_an_openshift_pod_writes_only_to_volumes_so_an_arbitrary_uid_in_group_0_can(feature: str) -> None:
    for pod in rendered_pods(cluster={"profile": "openshift"}, **FEATURES[feature]):
        for container in pod["containers"]:
            mounted = {m["mountPath"] for m in container.get("volumeMounts", []) if not m.get("readOnly")}
            assert container["securityContext"]["readOnlyRootFilesystem"] is True
            assert {HOME, "/tmp"} <= mounted, container["name"]
