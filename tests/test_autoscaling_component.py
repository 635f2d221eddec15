"""The KedaAutoscaler component under Pulumi mocks: what it registers, with which parent and fields."""

from __future__ import annotations

from typing import Any

import pulumi

from components.autoscaling import TYPE_TOKEN, KedaAutoscaler, KedaAutoscalerArgs
from components.render.keda import render_scaled_object_spec
from config.observability import AutoscalingConfig
from plan.scaling import Capacity, ScalingPlan, Workload
from tests.harness import Registered, resolve, run_program
from tests.plan_parts import scaling_of
from tests.promtool import crd_errors

SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
CAPACITY = Capacity(max_num_seqs=256, kv_cache_tokens=448_224, tokens_per_request=1024, gpu_memory_utilization=0.9)
LABELS = {"app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": "llama"}
WORKLOAD = Workload(namespace="llm", model_name="llama-8b", deployment_name="llama-server")


def scaling(**changes: Any) -> ScalingPlan:
    values: dict[str, Any] = {"cfg": AutoscalingConfig(enabled=True), "capacity": CAPACITY, "workload": WORKLOAD}
    return scaling_of(**{**values, **changes})


def args(namespace: pulumi.Input[str] = "llm", **changes: Any) -> KedaAutoscalerArgs:
    return KedaAutoscalerArgs(scaling(**changes), namespace)


def build(autoscaler_args: KedaAutoscalerArgs) -> Registered:
    return run_program(lambda: KedaAutoscaler("llama", autoscaler_args))


def test_registers_the_component_and_one_scaled_object() -> None:
    registered = build(args())
    assert registered.types == [SCALED_OBJECT, TYPE_TOKEN]


def test_scaled_object_is_a_child_of_the_component() -> None:
    made: list[KedaAutoscaler] = []
    run_program(lambda: made.append(KedaAutoscaler("llama", args())))
    urn = resolve(made[0].scaled_object.urn)
    assert urn.endswith(f"::{TYPE_TOKEN}${SCALED_OBJECT}::llama-scaledobject")


def test_scaled_object_spec_is_the_rendered_spec_verbatim() -> None:
    spec = build(args()).one(SCALED_OBJECT)["spec"]
    assert spec == render_scaled_object_spec(scaling())


def test_scaled_object_metadata_uses_the_plans_name_and_namespace() -> None:
    metadata = build(args()).one(SCALED_OBJECT)["metadata"]
    assert metadata == {"name": "llama", "namespace": "llm", "labels": LABELS}


def test_scaled_object_name_is_the_plans() -> None:
    inputs = build(args(name="chat")).one(SCALED_OBJECT)
    assert inputs["metadata"]["name"] == "chat"
    assert inputs["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["name"] == "keda-hpa-chat"


def test_the_namespace_may_be_an_output() -> None:
    inputs = build(args(namespace=pulumi.Output.from_input("serving"))).one(SCALED_OBJECT)
    assert inputs["metadata"]["namespace"] == "serving"


def test_registered_scaled_object_keeps_camel_case_keys() -> None:
    spec = build(args()).one(SCALED_OBJECT)["spec"]
    assert {"scaleTargetRef", "minReplicaCount", "maxReplicaCount", "pollingInterval"} <= set(spec)


def test_every_trigger_queries_the_given_prometheus() -> None:
    triggers = build(args(server_address="http://prom.obs.svc:9090")).one(SCALED_OBJECT)["spec"]["triggers"]
    assert {t["metadata"]["serverAddress"] for t in triggers} == {"http://prom.obs.svc:9090"}


def test_registered_scaled_object_matches_the_crd_schema() -> None:
    inputs = build(args()).one(SCALED_OBJECT)
    assert crd_errors(inputs, "keda.sh_scaledobjects.yaml") == []


def test_vllm_0_7_2_scales_on_its_cache_gauge() -> None:
    triggers = build(args(version="0.7.2")).one(SCALED_OBJECT)["spec"]["triggers"]
    kv = next(t for t in triggers if t["name"] == "kv_cache")
    gauge = 'vllm:gpu_cache_usage_perc{namespace="llm",model_name="llama-8b"}'
    assert kv["metadata"]["query"] == f"(sum(avg by (pod) ({gauge}))) * 1000"
