"""KedaAutoscaler: a KEDA ScaledObject that scales the vLLM workload on vLLM's own Prometheus metrics.

KEDA then owns the replica count (through its HPA `keda-hpa-<name>`); the Deployment must not send
spec.replicas any more (the server component ignores that field when autoscaling is on).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi

from components.kube import register
from components.render.keda import keda_objects
from plan.scaling import ScalingPlan, hpa_name

TYPE_TOKEN = "vllm-serving:index:KedaAutoscaler"


@dataclass(frozen=True)
class KedaAutoscalerArgs:
    scaling: ScalingPlan  # thresholds, workload, Prometheus address and KEDA features, decided in the plan
    namespace: pulumi.Input[str]  # where the workload runs (ServingStack.namespace)
    wait_for: Sequence[pulumi.Resource] = field(default_factory=tuple)  # the scale target


class KedaAutoscaler(pulumi.ComponentResource):
    """One ScaledObject.

    Attributes:
        scaled_object: the keda.sh/v1alpha1 ScaledObject.
        scaled_object_name: its Kubernetes name.
        hpa_name: the HPA KEDA creates for it (the at-max-replicas alert watches it).
    """

    def __init__(self, name: str, args: KedaAutoscalerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        self.scaled_object_name = args.scaling.scaled_object_name
        self.hpa_name = hpa_name(self.scaled_object_name)
        access: list[pulumi.Resource] = []
        *auth, scaled_object = keda_objects(args.scaling)
        for obj in auth:  # OpenShift: the Thanos token KEDA's triggers authenticate with
            access.append(
                register(
                    f"{name}-{_SUFFIX[obj['kind']]}",
                    obj,
                    pulumi.ResourceOptions(parent=self, depends_on=access[-1:]),
                    namespace=args.namespace,
                )
            )
        self.scaled_object = register(
            f"{name}-scaledobject",
            scaled_object,
            pulumi.ResourceOptions(parent=self, depends_on=[*args.wait_for, *access]),
            namespace=args.namespace,
        )
        self.register_outputs({"scaledObjectName": self.scaled_object_name, "hpaName": self.hpa_name})


# Pulumi resource names per kind (`<component>-<suffix>`): part of every URN, so they never change.
_SUFFIX = {
    "ServiceAccount": "thanos-sa",
    "Secret": "thanos-token",
    "Role": "thanos-role",
    "RoleBinding": "thanos-role-binding",
    "TriggerAuthentication": "thanos-trigger-auth",
}
