"""ModelCache: the PVC holding the Hugging Face cache and the Job that fills it once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from components.kube import register, timeouts
from components.render import cache, manifests
from config.stack import StackConfig

TYPE_TOKEN = "vllm-serving:index:ModelCache"

@dataclass(frozen=True)
class ModelCacheArgs:
    config: StackConfig
    instance: str  # app.kubernetes.io/instance, the base of every object name
    namespace: pulumi.Input[str]
    weights_on_disk_gib: float  # from the preflight report
    hf_token: pulumi.Input[str] | None = None  # for gated models; stored in a Secret, mounted as a file


class ModelCache(pulumi.ComponentResource):
    """A PVC sized from the weights (or an existing claim) and, unless the model is a local path, a
    single-writer download Job. `ready` lists what the server must wait for."""

    claim_name: str
    marker_path: str | None
    job: pulumi.Resource | None
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: ModelCacheArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        cfg = args.config
        self.claim_name = cache.claim_name(cfg, args.weights_on_disk_gib, args.instance)
        objects = manifests.cache_objects(cfg, args.weights_on_disk_gib, args.instance, args.hf_token is not None)
        done: dict[str, pulumi.Resource] = {}
        for obj in objects:  # the rendered list, in order: each object's dependencies come before it
            kind = obj["kind"]
            done[kind] = register(f"{name}-{_SUFFIX[kind]}", obj, self._options(obj, list(done.values())),
                                  namespace=args.namespace, secret=args.hf_token if kind == "Secret" else None)
        self.job = done.get("Job")
        self.ready = [done[kind] for kind in ("PersistentVolumeClaim", "Job") if kind in done]
        self.marker_path = cache.marker_path(cfg) if self.job is not None else None
        self.register_outputs({"claimName": self.claim_name, "markerPath": self.marker_path})

    def _options(self, obj: dict[str, Any], before: list[pulumi.Resource]) -> pulumi.ResourceOptions:
        if obj["kind"] != "Job":
            return pulumi.ResourceOptions(parent=self)
        return pulumi.ResourceOptions(parent=self, depends_on=before,
                                      custom_timeouts=timeouts(obj["spec"]["activeDeadlineSeconds"]))


# Pulumi resource names per kind (`<component>-<suffix>`): part of every URN, so they never change.
_SUFFIX = {"PersistentVolumeClaim": "pvc", "Secret": "hf-token", "ServiceAccount": "download-sa", "Job": "download"}
