"""Namespaces: each stack owns `vllm-<stack>` by default, a named one is used as it is, and the Namespace a
stack creates says which stack that is (app.kubernetes.io/instance)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pulumi.runtime import mocks as pulumi_mocks

from components.serving_stack import ServingStack, ServingStackArgs
from config.errors import ConfigError
from config.secrets import StackSecrets
from plan.names import instance_name, namespace_name
from tests.factories import STACKS, load_stack_file, make_config
from tests.harness import Registered, run_program
from tests.kubernetes_fixtures import configured, manifests, of_kind, plan_of
from tests.program import run_repository_stack

NAMESPACE = "kubernetes:core/v1:Namespace"


def namespaced(registered: Registered) -> set[str]:
    """The namespace of every namespaced Kubernetes object the program registered."""
    return {
        r.inputs["metadata"]["namespace"]
        for r in registered.resources
        if r.typ.startswith("kubernetes:") and r.typ != NAMESPACE and "namespace" in r.inputs.get("metadata", {})
    }


def shipped(name: str) -> Registered:
    registered, error = run_repository_stack(STACKS / f"Pulumi.{name}.yaml")
    assert error is None
    return registered


def test_prod_creates_and_uses_its_own_namespace():
    registered = shipped("prod")
    assert registered.one(NAMESPACE)["metadata"]["name"] == "vllm-prod"
    assert namespaced(registered) == {"vllm-prod"}


def test_dev_creates_and_uses_its_own_namespace():
    registered = shipped("dev")
    assert registered.one(NAMESPACE)["metadata"]["name"] == "vllm-dev"
    assert namespaced(registered) == {"vllm-dev"}


def stack_namespace(path: Path) -> str:
    """The namespace a stack file deploys to: namespace.name, else its instance name (components/stack.py)."""
    stack = path.name.removeprefix("Pulumi.").removesuffix(".yaml")
    return namespace_name(load_stack_file(path).namespace, instance_name(stack))


def test_no_two_shipped_stacks_deploy_to_one_namespace():
    names = [stack_namespace(path) for path in sorted(STACKS.glob("**/Pulumi.*.yaml"))]
    assert len(names) == len(set(names)) >= 2


def test_the_created_namespace_names_the_stack_that_owns_it():
    labels = shipped("prod").one(NAMESPACE)["metadata"]["labels"]
    assert (labels["app.kubernetes.io/instance"], labels["app.kubernetes.io/component"]) == ("vllm-prod", "namespace")


def test_the_created_namespace_keeps_the_restricted_pod_security_label():
    labels = shipped("dev").one(NAMESPACE)["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"


def test_a_named_namespace_is_used_and_not_created_by_default():
    objects = manifests(*configured(namespace={"name": "llm"}))
    assert of_kind(objects, "Namespace") == []
    assert {o["metadata"]["namespace"] for o in objects} == {"llm"}


def test_a_named_namespace_is_created_when_asked():
    created = of_kind(manifests(*configured(namespace={"name": "llm", "create": True})), "Namespace")
    assert [(n["metadata"]["name"], n["metadata"]["labels"]["app.kubernetes.io/instance"]) for n in created] == [
        ("llm", "llama")
    ]


def test_a_stack_can_use_its_own_default_namespace_without_creating_it():
    objects = manifests(*configured(namespace={"create": False}))
    assert of_kind(objects, "Namespace") == [] and {o["metadata"]["namespace"] for o in objects} == {"llama"}


def retain_on_delete_of_the_namespace(**namespace: Any) -> bool:
    """What the program asks the engine for the Namespace: retainOnDelete (the mocks only see inputs)."""
    seen: dict[str, bool] = {}
    original = pulumi_mocks.MockMonitor.RegisterResource

    def spy(monitor: Any, request: Any) -> Any:
        if request.type == NAMESPACE:
            seen[request.name] = request.retainOnDelete
        return original(monitor, request)

    cfg, _ = configured(namespace=namespace)
    pulumi_mocks.MockMonitor.RegisterResource = spy  # type: ignore[method-assign]
    try:
        run_program(lambda: ServingStack("llama", ServingStackArgs(plan_of(cfg), StackSecrets())))
    finally:
        pulumi_mocks.MockMonitor.RegisterResource = original  # type: ignore[method-assign]
    return seen["llama-namespace"]


def test_the_stacks_own_namespace_is_deleted_with_the_stack():
    assert retain_on_delete_of_the_namespace() is False


def test_a_created_namespace_can_be_kept_on_destroy():
    assert retain_on_delete_of_the_namespace(name="llm", create=True, retain_on_delete=True) is True


def rendered_issues(**changes: Any) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        make_config(**changes)
    return [issue.render() for issue in caught.value.issues]


def test_creating_a_kubernetes_system_namespace_is_refused():
    assert rendered_issues(namespace={"name": "default", "create": True}) == [
        "vllm-serving:namespace.name: is 'default', a namespace Kubernetes creates itself, and namespace.create would "
        "have this stack create it. Fix: set namespace.create: false to deploy into it, or remove namespace.name to "
        "use the stack's own namespace vllm-<stack>."
    ]


def test_keeping_a_namespace_the_stack_does_not_create_is_refused():
    assert rendered_issues(namespace={"name": "llm", "retain_on_delete": True}) == [
        "vllm-serving:namespace.retain_on_delete: is true, but this stack does not create the namespace, so there is "
        "nothing to keep on destroy. Fix: remove namespace.retain_on_delete, or set namespace.create: true."
    ]


def test_deploying_into_a_system_namespace_without_creating_it_loads():
    assert make_config(namespace={"name": "default"}).namespace.creates is False
