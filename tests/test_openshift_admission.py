"""Every pod an openshift stack renders passes a model of OpenShift's default `restricted-v2` SCC, and runs as
an arbitrary UID in group 0 (docs/sources.md §S8, docs/security.md "OpenShift").

The model (openshift/cluster-kube-apiserver-operator bindata restricted-v2): runAsUser MustRunAsRange and
fsGroup MustRunAs over the project's `openshift.io/sa.scc.uid-range`, so a fixed value outside it is
rejected; runAsNonRoot; allowPrivilegeEscalation false; capabilities drop ALL (only NET_BIND_SERVICE may be
added); seccomp RuntimeDefault; no privileged container, host namespace or hostPath volume; volumes of the
types configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected and secret only.
A pod is admitted by restricted-v2 or by an SCC its ServiceAccount may `use` (a rendered Role and RoleBinding:
the multi-node RDMA ranks, docs/multinode.md "Pod security").
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from components.render.manifests import render_manifests, stack_manifests
from config.errors import ConfigError
from config.stack import StackConfig
from plan.names import HF_HOME, HOME
from tests.factories import STACKS, example_stack, load_stack_file, make_config
from tests.kubernetes_fixtures import plan_of
from validation.keys import validate_config

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


@dataclass(frozen=True)
class Scc:
    """The fields of a SecurityContextConstraints the model checks; "*" allows any capability or seccomp type."""

    name: str
    uids_from_range: bool  # runAsUser MustRunAsRange and fsGroup MustRunAs over the project's range
    allowed_capabilities: frozenset[str]
    must_drop_all: bool
    allow_privilege_escalation: bool
    seccomp: frozenset[str]
    allow_privileged: bool
    allow_host: bool  # host namespaces and hostPath volumes
    volumes: frozenset[str]  # the volume types admitted


# OpenShift's default for every authenticated user and ServiceAccount.
RESTRICTED_V2 = Scc(
    "restricted-v2",
    uids_from_range=True,
    allowed_capabilities=frozenset({"NET_BIND_SERVICE"}),
    must_drop_all=True,
    allow_privilege_escalation=False,
    seccomp=frozenset({"RuntimeDefault"}),
    allow_privileged=False,
    allow_host=False,
    volumes=frozenset(
        {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"}
    ),
)
# OpenShift's `privileged` SCC: any UID, capability and seccomp profile; only for who is granted `use` on it.
PRIVILEGED = Scc("privileged", False, frozenset({"*"}), False, True, frozenset({"*"}), True, True, frozenset({"*"}))


def scc_violations(pod: dict[str, Any], scc: Scc = RESTRICTED_V2) -> list[str]:
    found: list[str] = []
    context = pod.get("securityContext", {})
    containers = [*pod.get("initContainers", []), *pod["containers"]]
    if not scc.allow_host:
        found += [key for key in ("hostNetwork", "hostPID", "hostIPC") if pod.get(key)]
        found += [f"hostPath volume {v['name']}" for v in pod.get("volumes", []) if "hostPath" in v]
    if "*" not in scc.volumes:
        found += [f"volume {v['name']}: {kind}" for v in pod.get("volumes", []) for kind in set(v) - {"name"} - scc.volumes]
    for owner, settings in [("pod", context), *((c["name"], c.get("securityContext", {})) for c in containers)]:
        found += [
            f"{owner}: {key} {settings[key]} outside the range"
            for key in ID_FIELDS
            if scc.uids_from_range and key in settings and settings[key] not in PROJECT_UID_RANGE
        ]
    for container in containers:
        found += _container_violations(container, context, scc)
    return found


def _container_violations(container: dict[str, Any], context: dict[str, Any], scc: Scc) -> list[str]:
    settings, name, found = container.get("securityContext", {}), container["name"], []
    non_root = settings.get("runAsNonRoot", context.get("runAsNonRoot"))
    if scc.uids_from_range and not non_root:
        found.append(f"{name}: runAsNonRoot")
    if not scc.allow_privilege_escalation and settings.get("allowPrivilegeEscalation") is not False:
        found.append(f"{name}: allowPrivilegeEscalation")
    if settings.get("privileged") and not scc.allow_privileged:
        found.append(f"{name}: privileged")
    capabilities = settings.get("capabilities", {})
    added = set(capabilities.get("add", []))
    if scc.must_drop_all and "ALL" not in capabilities.get("drop", []):
        found.append(f"{name}: capabilities drop ALL")
    if "*" not in scc.allowed_capabilities and added - scc.allowed_capabilities:
        found.append(f"{name}: capabilities add {sorted(added - scc.allowed_capabilities)}")
    seccomp = settings.get("seccompProfile") or context.get("seccompProfile") or {}
    if "*" not in scc.seccomp and seccomp.get("type") not in scc.seccomp:
        found.append(f"{name}: seccompProfile")
    return found


def granted_sccs(objects: list[dict[str, Any]], account: str | None) -> list[Scc]:
    """restricted-v2, then each SCC a rendered Role grants `use` of to the pod's ServiceAccount by a RoleBinding."""
    bound = {
        o["roleRef"]["name"]
        for o in objects
        if o["kind"] == "RoleBinding" and any(s.get("name") == account for s in o["subjects"])
    }
    names = [
        name
        for o in objects
        if o["kind"] == "Role" and o["metadata"]["name"] in bound
        for rule in o["rules"]
        if "use" in rule["verbs"] and "securitycontextconstraints" in rule["resources"]
        for name in rule["resourceNames"]
    ]
    return [RESTRICTED_V2, *(KNOWN_SCCS[name] for name in names)]


KNOWN_SCCS = {scc.name: scc for scc in (RESTRICTED_V2, PRIVILEGED)}


def admitted(pod: dict[str, Any], objects: list[dict[str, Any]]) -> list[str]:
    """SCC admission: the pod is admitted by the first granted SCC it passes; [] when one does, else the
    restricted-v2 violations."""
    sccs = granted_sccs(objects, pod.get("serviceAccountName"))
    return [] if any(not scc_violations(pod, scc) for scc in sccs) else scc_violations(pod)


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
        # The rollout gate writes nothing: `python3 -B`, the stdlib, its lines on stdout.
        for container in [c for c in pod["containers"] if c["name"] != "rollout-gate"]:
            mounted = {m["mountPath"] for m in container.get("volumeMounts", []) if not m.get("readOnly")}
            assert container["securityContext"]["readOnlyRootFilesystem"] is True
            assert {HOME, "/tmp"} <= mounted, container["name"]


def on_openshift(cfg: StackConfig, **changes: Any) -> StackConfig:
    raw = cfg.model_dump(exclude_unset=True)
    return validate_config({**raw, "cluster": {**raw.get("cluster", {}), "profile": "openshift"}, **changes})


KUBERNETES_STACKS = [
    path
    for path in sorted([*STACKS.glob("Pulumi.*.yaml"), *(STACKS / "examples").glob("Pulumi.*.yaml")])
    if load_stack_file(path).target == "kubernetes"
]
RDMA_EXAMPLE = "llama-405b-on-2x8-a100-80gb"
RDMA = {"rdma_resources": {"rdma/ib": 1}, "nccl_env": {"NCCL_IB_HCA": "mlx5"}}
SCC_GRANT = {"multinode": {**RDMA, "openshift_scc": "privileged"}}


def openshift_stack(path: Path) -> StackConfig:
    cfg = load_stack_file(path)
    return on_openshift(cfg, **(SCC_GRANT if cfg.multinode.adds_ipc_lock else {}))


@pytest.mark.parametrize("path", KUBERNETES_STACKS, ids=lambda path: path.stem.removeprefix("Pulumi."))
def test_every_pod_of_every_stack_on_openshift_is_admitted_by_an_scc_its_account_may_use(path: Path) -> None:
    objects = stack_manifests(plan_of(openshift_stack(path)))
    pods = list(pod_specs(objects))
    assert pods and [admitted(pod, objects) for pod in pods] == [[] for _ in pods]


def test_the_rdma_example_on_openshift_without_an_scc_is_refused_naming_the_key_and_the_fix() -> None:
    with pytest.raises(ConfigError) as refused:
        on_openshift(example_stack(RDMA_EXAMPLE))
    (issue,) = refused.value.issues
    assert issue.key == "multinode.rdma_resources" and "multinode.openshift_scc" in issue.fix
    assert "restricted-v2" in issue.message


def test_the_rdma_ranks_fail_restricted_v2_so_only_the_granted_scc_admits_them() -> None:
    objects = stack_manifests(plan_of(on_openshift(example_stack(RDMA_EXAMPLE), **SCC_GRANT)))
    group = next(o for o in objects if o["kind"] == "LeaderWorkerSet")
    leader = group["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]
    assert "vllm: capabilities add ['IPC_LOCK']" in scc_violations(leader)
    assert [scc.name for scc in granted_sccs(objects, leader["serviceAccountName"])] == ["restricted-v2", "privileged"]


def test_without_the_role_binding_the_rdma_ranks_are_not_admitted() -> None:
    objects = stack_manifests(plan_of(on_openshift(example_stack(RDMA_EXAMPLE), **SCC_GRANT)))
    without = [o for o in objects if o["kind"] != "RoleBinding"]
    group = next(o for o in objects if o["kind"] == "LeaderWorkerSet")
    assert admitted(group["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"], without) != []


def test_the_download_pods_of_the_rdma_example_need_no_scc_beyond_restricted_v2() -> None:
    objects = stack_manifests(plan_of(on_openshift(example_stack(RDMA_EXAMPLE), **SCC_GRANT)))
    jobs = [o["spec"]["template"]["spec"] for o in objects if o["kind"] == "Job"]
    assert jobs and [scc_violations(job) for job in jobs] == [[] for _ in jobs]
    assert all(granted_sccs(objects, job.get("serviceAccountName")) == [RESTRICTED_V2] for job in jobs)


def test_the_bucket_copy_of_the_rdma_example_runs_as_the_ranks_account_yet_restricted_v2_admits_it() -> None:
    example = example_stack(RDMA_EXAMPLE)
    model = {**example.model_dump(exclude_unset=True)["model"], "revision": "0e9e39f249a16976918f6564b8830bc894c89659"}
    cfg = on_openshift(example, **SCC_GRANT, model=model, delivery=FEATURES["a bucket copy"]["delivery"])
    plan = plan_of(cfg)
    objects = stack_manifests(plan)
    (copy,) = [o["spec"]["template"]["spec"] for o in objects if o["metadata"]["name"] == plan.delivery.copy_job]
    scc = admitting_scc(copy, objects)
    assert (copy["serviceAccountName"], scc.name, kubelet_refusals(copy, scc)) == ("llama-server", "restricted-v2", [])


def test_an_scc_named_off_openshift_is_refused() -> None:
    raw = example_stack(RDMA_EXAMPLE).model_dump(exclude_unset=True)
    with pytest.raises(ConfigError) as refused:
        validate_config({**raw, **SCC_GRANT, "cluster": {"profile": "gke"}})
    assert [issue.key for issue in refused.value.issues] == ["multinode.openshift_scc"]


def test_a_host_path_volume_fails_restricted_v2_but_passes_privileged() -> None:
    pod = rendered_pods(cluster={"profile": "openshift"})[0]
    pod["volumes"] = [*pod["volumes"], {"name": "host", "hostPath": {"path": "/dev/infiniband"}}]
    assert "volume host: hostPath" in scc_violations(pod) and scc_violations(pod, PRIVILEGED) == []


IMAGE_USER = 0  # the vllm/vllm-openai image (and the smoke test's python image) run as root (docs/sources.md §A.6)


def kubelet_refusals(pod: dict[str, Any], scc: Scc) -> list[str]:
    """The kubelet's runAsNonRoot check after the admitting SCC's UID strategy (kubernetes/kubernetes
    pkg/kubelet/kuberuntime/security_context_others.go@ccde63b9c16241780f42d25550c200aa38e53989:28-44
    verifyRunAsNonRoot: runAsNonRoot with no runAsUser and an image whose user is root refuses the container).
    restricted-v2's MustRunAsRange assigns a UID from the project's range; RunAsAny (the privileged SCC) assigns
    none (openshift/apiserver-library-go
    pkg/securitycontextconstraints/user/runasany.go@395b1ce99edee877d8cf263d32f9ac45df055e57:21-24)."""
    context, found = pod.get("securityContext", {}), []
    assigned = PROJECT_UID_RANGE.start if scc.uids_from_range else None
    for container in [*pod.get("initContainers", []), *pod["containers"]]:
        settings = container.get("securityContext", {})
        non_root = settings.get("runAsNonRoot", context.get("runAsNonRoot"))
        uid = settings.get("runAsUser", context.get("runAsUser", assigned))
        if non_root and (IMAGE_USER if uid is None else uid) == 0:
            found.append(f"{container['name']}: runAsNonRoot and the image runs as root")
    return found


def admitting_scc(pod: dict[str, Any], objects: list[dict[str, Any]]) -> Scc:
    """The SCC OpenShift admits the pod with: the first granted one it passes (restricted-v2 is tried first)."""
    return next(scc for scc in granted_sccs(objects, pod.get("serviceAccountName")) if not scc_violations(pod, scc))


@pytest.mark.parametrize("path", KUBERNETES_STACKS, ids=lambda path: path.stem.removeprefix("Pulumi."))
def test_every_container_of_every_openshift_stack_starts_under_the_scc_that_admits_it(path: Path) -> None:
    objects = stack_manifests(plan_of(openshift_stack(path)))
    pods = list(pod_specs(objects))
    assert [kubelet_refusals(pod, admitting_scc(pod, objects)) for pod in pods] == [[] for _ in pods]
