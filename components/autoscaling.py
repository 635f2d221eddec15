"""KedaAutoscaler: a KEDA ScaledObject that scales the vLLM workload on vLLM's own Prometheus metrics.

KEDA then owns the replica count (through its HPA `keda-hpa-<name>`); the Deployment must not send
spec.replicas any more (the server component ignores that field when autoscaling is on).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi

from catalog import keda_http
from components.kube import register
from components.render.keda import render_autoscaler
from plan.scaling import ScalingPlan, hpa_name
from plan.zero import ZeroPlan

TYPE_TOKEN = "vllm-serving:index:KedaAutoscaler"


@dataclass(frozen=True)
class KedaAutoscalerArgs:
    scaling: ScalingPlan  # thresholds, workload, Prometheus address and KEDA features, decided in the plan
    namespace: pulumi.Input[str]  # where the workload runs (ServingStack.namespace)
    wait_for: Sequence[pulumi.Resource] = field(default_factory=tuple)  # the scale target's rollout (its gate)
    zero: ZeroPlan | None = None  # the KEDA HTTP add-on: its HTTPScaledObject replaces the ScaledObject


class KedaAutoscaler(pulumi.ComponentResource):
    """One ScaledObject; with the KEDA HTTP add-on one HTTPScaledObject (the add-on makes its ScaledObject), or an
    InterceptorRoute and the ScaledObject on the add-on's external scaler.

    Attributes:
        resources: what it registered, the ScaledObject (or HTTPScaledObject) last.
        scaled_object: the keda.sh/v1alpha1 ScaledObject, or the http.keda.sh/v1alpha1 HTTPScaledObject.
        scaled_object_name: its Kubernetes name.
        routes: with the add-on, the HTTPScaledObject or InterceptorRoute its interceptor routes by; else none.
        hpa_name: the HPA KEDA creates for it (the at-max-replicas alert watches it).
    """

    def __init__(self, name: str, args: KedaAutoscalerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        self.scaled_object_name = args.scaling.scaled_object_name
        self.hpa_name = hpa_name(self.scaled_object_name)
        registered: list[pulumi.Resource] = []
        manifests = render_autoscaler(args.scaling, args.zero)
        for manifest in manifests:  # OpenShift: the Thanos token first
            suffix = _SUFFIX.get(manifest["kind"], manifest["kind"].lower())
            options = pulumi.ResourceOptions(parent=self, depends_on=[*args.wait_for, *registered])
            registered.append(register(f"{name}-{suffix}", manifest, options, namespace=args.namespace))
        self.resources = registered
        self.routes = [r for m, r in zip(manifests, registered, strict=True) if m["kind"] in ROUTE_KINDS]
        self.scaled_object = registered[-1]
        self.register_outputs({"scaledObjectName": self.scaled_object_name, "hpaName": self.hpa_name})


# What the add-on's interceptor routes by: its routing table is rebuilt from an informer on each kind, and a host
# not in it gets 404 (kedacore/http-add-on interceptor/main.go@4dd989f1:112-125, middleware/routing.go@088c6646:38-44).
ROUTE_KINDS = (keda_http.HTTP_SCALED_OBJECT, keda_http.INTERCEPTOR_ROUTE)

# Pulumi resource names per kind (`<component>-<suffix>`): part of every URN, so they never change.
_SUFFIX = {
    "ServiceAccount": "thanos-sa",
    "Secret": "thanos-token",
    "Role": "thanos-role",
    "RoleBinding": "thanos-role-binding",
    "TriggerAuthentication": "thanos-trigger-auth",
}
