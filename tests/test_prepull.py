"""server.prepull_image: a DaemonSet on the server's GPU nodes keeps the vLLM image pulled (a sleeping container,
no GPU, no network flow, not awaited)."""

from __future__ import annotations

from typing import Any

import kubernetes_validate

from components.render.manifests import network_manifests
from tests.kubernetes_fixtures import configured, manifests, of_kind, one, plan_of
from tests.program import run_main
from tests.reachability import Host, Pod, allowed


def prepull_objects(**server: Any) -> list[dict[str, Any]]:
    cfg, report = configured(server={"prepull_image": True, **server})
    return manifests(cfg, report)


def test_no_daemonset_is_rendered_unless_the_stack_asks_for_it() -> None:
    assert of_kind(manifests(*configured()), "DaemonSet") == []


def test_the_daemonset_runs_on_the_servers_gpu_nodes() -> None:
    objects = prepull_objects()
    server = one(objects, "Deployment")["spec"]["template"]["spec"]
    prepull = one(objects, "DaemonSet")["spec"]["template"]["spec"]
    assert (prepull["tolerations"], prepull["affinity"]) == (server["tolerations"], server["affinity"])


def test_its_container_is_the_servers_image_sleeping_without_a_gpu() -> None:
    objects = prepull_objects()
    server = one(objects, "Deployment")["spec"]["template"]["spec"]["containers"][0]
    container = one(objects, "DaemonSet")["spec"]["template"]["spec"]["containers"][0]
    assert (container["image"], container["command"]) == (server["image"], ["sleep", "infinity"])
    assert not any("gpu" in key for key in container["resources"]["limits"])


def test_pulumi_does_not_await_the_pull_on_every_node() -> None:
    assert one(prepull_objects(), "DaemonSet")["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}


def test_the_daemonset_validates_strictly() -> None:
    daemonset = one(prepull_objects(image_pull_secrets=["registry"]), "DaemonSet")
    kubernetes_validate.validate(daemonset, "1.37.0", strict=True)


def test_the_image_pull_secrets_reach_the_prepull_pods() -> None:
    daemonset = one(prepull_objects(image_pull_secrets=["registry"]), "DaemonSet")
    assert daemonset["spec"]["template"]["spec"]["imagePullSecrets"] == [{"name": "registry"}]


def test_the_prepull_pods_have_no_flow_in_or_out() -> None:
    cfg, _ = configured(server={"prepull_image": True})
    plan = plan_of(cfg)
    labels = one(manifests(*configured(server={"prepull_image": True})), "DaemonSet")["spec"]["template"]["metadata"]
    pod = Pod("prepull", plan.identity.namespace, labels["labels"])
    policies = network_manifests(plan)
    outside, server = Host("internet", "8.8.8.8"), Pod("server", plan.identity.namespace, dict(plan.server.labels))
    assert not any(allowed(policies, pod, peer, 443) or allowed(policies, peer, pod, 8000) for peer in (outside, server))


def test_the_program_registers_the_daemonset_with_the_server() -> None:
    config = {"model": {"id": "meta-llama/Llama-3.1-8B-Instruct"}, "gpu": {"product": "A100-SXM4-80GB"}}
    registered, error = run_main({**config, "server": {"prepull_image": True}})
    assert error is None
    assert registered.one("kubernetes:apps/v1:DaemonSet")["metadata"]["name"].endswith("-image-prepull")
