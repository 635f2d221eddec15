"""An existing namespace (namespace.create: false) enforces its own Pod Security level, which the stack's pods must
meet: Pod Security admission rejects a pod that violates the level of the namespace's
`pod-security.kubernetes.io/enforce` label (kubernetes.io/docs/concepts/security/pod-security-admission).
The RDMA ranks of a multi-node group add IPC_LOCK and run as UID 0, which neither "baseline" nor "restricted"
admits (kubernetes.io/docs/concepts/security/pod-security-standards, "Capabilities" and "Running as Non-root"),
so only a "privileged" namespace takes them (docs/multinode.md "Pod security")."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cluster.facts import facts_from_items
from components.render.manifests import stack_manifests
from config.stack import StackConfig
from tests.cluster_facts import fixture, namespace
from tests.factories import example_stack, make_config
from tests.kubernetes_fixtures import plan_of
from tests.test_openshift_admission import pod_specs
from validation.cluster import check_cluster
from validation.keys import validate_config

ENFORCE = "pod-security.kubernetes.io/enforce"
RDMA_EXAMPLE = "llama-405b-on-2x8-a100-80gb"
TEAM = "ml-serving"
LEVELS = ("privileged", "baseline", "restricted")


def in_existing_namespace(cfg: StackConfig) -> StackConfig:
    raw = cfg.model_dump(exclude_unset=True)
    return validate_config({**raw, "namespace": {"name": TEAM}})


def admitted_at(level: str, pod: dict[str, Any]) -> bool:
    """Pod Security admission's verdict on what these pods set: an added capability other than NET_BIND_SERVICE
    fails baseline (and so restricted); UID 0 or runAsNonRoot false fails restricted."""
    containers = [*pod.get("initContainers", []), *pod["containers"]]
    contexts = [c.get("securityContext", {}) for c in containers]
    added = {cap for context in contexts for cap in context.get("capabilities", {}).get("add", [])}
    baseline = not (added - {"NET_BIND_SERVICE"})
    root = any(c.get("runAsUser") == 0 or c.get("runAsNonRoot") is False for c in contexts)
    return level == "privileged" or (baseline and (level == "baseline" or not root))


def namespace_findings(cfg: StackConfig, labels: dict[str, str]) -> list[tuple[str, str, str]]:
    items = [i for i in json.loads(fixture("all-right").read_text())["items"] if i["kind"] != "Namespace"]
    result = check_cluster(plan_of(cfg), facts_from_items([*items, namespace(TEAM, labels)], "test"))
    return [(f.level, f.message, f.fix) for f in result.findings if f.check == "namespace"]


@pytest.mark.parametrize("level", LEVELS)
def test_the_cluster_check_passes_a_namespace_only_if_it_admits_every_pod_of_the_rdma_group(level: str) -> None:
    cfg = in_existing_namespace(example_stack(RDMA_EXAMPLE))
    pods = list(pod_specs(stack_manifests(plan_of(cfg))))
    blocked = any(finding[0] == "block" for finding in namespace_findings(cfg, {ENFORCE: level}))
    assert blocked == (not all(admitted_at(level, pod) for pod in pods))


def test_a_restricted_namespace_blocks_the_rdma_group_naming_the_label_and_the_fix() -> None:
    ((level, message, fix),) = namespace_findings(in_existing_namespace(example_stack(RDMA_EXAMPLE)), {ENFORCE: "restricted"})
    assert level == "block" and f"{ENFORCE}: restricted" in message and "IPC_LOCK" in message
    assert f"kubectl label namespace {TEAM} {ENFORCE}=privileged --overwrite" in fix and "multinode.ipc_lock" in fix


@pytest.mark.parametrize("level", LEVELS)
def test_every_level_admits_a_stack_without_rdma(level: str) -> None:
    cfg = in_existing_namespace(make_config())
    assert all(admitted_at(level, pod) for pod in pod_specs(stack_manifests(plan_of(cfg))))
    assert [finding[0] for finding in namespace_findings(cfg, {ENFORCE: level})] == ["ok"]


def test_a_namespace_without_the_label_is_left_to_the_clusters_default() -> None:
    assert [finding[0] for finding in namespace_findings(in_existing_namespace(example_stack(RDMA_EXAMPLE)), {})] == ["ok"]
