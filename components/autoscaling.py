"""KedaAutoscaler: a KEDA ScaledObject that scales the vLLM Deployment on vLLM's own Prometheus metrics.

KEDA then owns the replica count (through its HPA `keda-hpa-<name>`); the Deployment must not send
spec.replicas any more (the server component ignores that field when autoscaling is on).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from catalog.vllm_metrics import metrics_for
from components.render.keda import API_VERSION, KIND, Capacity, derive_thresholds, hpa_name, render_scaled_object
from components.render.promql import Workload
from config.observability import AutoscalingConfig

TYPE_TOKEN = "vllm-serving:index:KedaAutoscaler"


@dataclass(frozen=True)
class KedaAutoscalerArgs:
    namespace: pulumi.Input[str]  # where the Deployment runs
    deployment_name: pulumi.Input[str]  # the scale target
    selector_labels: dict[str, str]  # app.kubernetes.io/name and instance, also put on the ScaledObject
    served_model_name: str  # vLLM's model_name label
    vllm_version: str  # picks the metric names (catalog/vllm_metrics.py)
    autoscaling: AutoscalingConfig
    capacity: Capacity  # from the preflight: thresholds left unset are derived from it
    scaled_object_name: str | None = None  # Kubernetes name; the component name when unset
    server_address: str = ""  # Prometheus for the triggers (components/render/prometheus.py server_address)
    workload_kind: str = "Deployment"  # StatefulSet (per-replica volumes) or LeaderWorkerSet (engine.nnodes > 1)


class KedaAutoscaler(pulumi.ComponentResource):
    """One ScaledObject.

    Attributes:
        scaled_object: the keda.sh/v1alpha1 ScaledObject.
        scaled_object_name: its Kubernetes name.
        hpa_name: the HPA KEDA creates for it (the at-max-replicas alert watches it).
        thresholds: the per-trigger thresholds, derived ones filled in.
    """

    def __init__(self, name: str, args: KedaAutoscalerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        self.scaled_object_name = args.scaled_object_name or name
        self.hpa_name = hpa_name(self.scaled_object_name)
        self.thresholds = derive_thresholds(args.autoscaling, args.capacity)
        manifest = pulumi.Output.all(args.namespace, args.deployment_name).apply(
            lambda values: self._render(args, values[0], values[1])
        )
        self.scaled_object = k8s.apiextensions.CustomResource(
            f"{name}-scaledobject",
            api_version=API_VERSION,
            kind=KIND,
            metadata=manifest.apply(lambda m: m["metadata"]),
            spec=manifest.apply(lambda m: m["spec"]),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"scaledObjectName": self.scaled_object_name, "hpaName": self.hpa_name})

    def _render(self, args: KedaAutoscalerArgs, namespace: str, deployment_name: str) -> dict[str, Any]:
        workload = Workload(
            namespace=namespace,
            model_name=args.served_model_name,
            deployment_name=deployment_name,
            hpa_name=self.hpa_name,
            kind=args.workload_kind,
        )
        return render_scaled_object(
            self.scaled_object_name,
            args.selector_labels,
            args.autoscaling,
            self.thresholds,
            metrics_for(args.vllm_version),
            workload,
            args.server_address,
        )
