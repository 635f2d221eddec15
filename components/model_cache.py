"""ModelCache: the weights' way to the server, per delivery mode: the PVC holding the Hugging Face cache and the
Job that fills it once (shared volume), the bucket-copy Job (object storage), or only the HF token Secret
(per-replica volumes, whose pods download themselves)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from components.kube import register, timeouts
from components.render import manifests
from components.render.security import HF_TOKEN_KEY
from plan import Plan
from plan.delivery import DeliveryPlan

TYPE_TOKEN = "vllm-serving:index:ModelCache"


@dataclass(frozen=True)
class ModelCacheArgs:
    plan: Plan  # plan.delivery: its hf_token_secret is set when hf_token is and a pod fetches from the Hub
    namespace: pulumi.Input[str]
    hf_token: pulumi.Input[str] | None = None  # for gated models; stored in a Secret, mounted as a file
    server_account: pulumi.Resource | None = None  # the server's ServiceAccount, which the bucket-copy Job runs as


class ModelCache(pulumi.ComponentResource):
    """Registers `manifests.cache_objects`, in its order. `ready` lists what the server must wait for.

    On a shared volume the download Job and the claim are registered side by side, neither waiting for the
    other: the Job is awaited until it completes (a failed download fails the update in minutes, naming the Job
    and the cause: components/render/cache.py render_download_job), and its pod is the claim's first consumer,
    which WaitForFirstConsumer classes need before they provision; the claim is awaited until Bound for at
    most delivery.claim_bind_timeout_seconds, so a claim that cannot bind fails the update in minutes instead
    of at the Job's deadline. A claim that waited for the awaited Job would never be created. The server waits
    for both. The bucket-copy Job is awaited too: the server streams from the bucket. It runs as the server's
    ServiceAccount (args.server_account, registered by ServingStack before this component) and waits for it."""

    claim_name: str
    marker_path: str | None
    job: pulumi.Resource | None
    job_accounts: list[pulumi.Resource]
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: ModelCacheArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        delivery = args.plan.delivery
        self.claim_name = delivery.claim
        # The bucket copy runs as the server's account (manifests.fill_job_account), registered before this component.
        account = args.server_account if delivery.copies_to_bucket else None
        self.job_accounts = [account] if account is not None else []
        objects = manifests.cache_objects(args.plan)
        done: dict[str, pulumi.Resource] = {}
        for obj in objects:  # the rendered list, in order: each object's dependencies come before it
            kind = obj["kind"]
            done[kind] = register(
                f"{name}-{_suffix(delivery, kind)}",
                obj,
                self._options(delivery, obj, done),
                namespace=None if kind == "StorageClass" else args.namespace,  # cluster-scoped
                secrets={HF_TOKEN_KEY: args.hf_token} if kind == "Secret" else None,
            )
        job = done.get("Job")
        self.job = job if job is not None and delivery.needs_download and "PersistentVolumeClaim" in done else None
        self.ready = [done[kind] for kind in ("StorageClass", "Secret", "PersistentVolumeClaim", "Job") if kind in done]
        self.marker_path = delivery.marker_path if self.job is not None else None
        self.register_outputs({"claimName": self.claim_name, "markerPath": self.marker_path})

    def _options(self, delivery: DeliveryPlan, obj: dict[str, Any], done: dict[str, pulumi.Resource]) -> pulumi.ResourceOptions:
        kind = obj["kind"]
        if kind == "Job":  # after its account and token; awaited to its deadline, which fails it first
            return pulumi.ResourceOptions(
                parent=self,
                depends_on=[*done.values(), *self.job_accounts],
                custom_timeouts=timeouts(obj["spec"]["activeDeadlineSeconds"]),
            )
        if kind == "PersistentVolumeClaim":  # beside the Job, its first consumer; then Bound, briefly
            return pulumi.ResourceOptions(
                parent=self,
                depends_on=[done["StorageClass"]] if "StorageClass" in done else None,
                custom_timeouts=timeouts(delivery.claim_bind_timeout_seconds),
            )
        return pulumi.ResourceOptions(parent=self)


def _suffix(delivery: DeliveryPlan, kind: str) -> str:
    """Pulumi resource names per object (`<component>-<suffix>`): part of every URN, so they never change."""
    if kind == "Job":
        return "copy" if delivery.mode == "object_storage" else "download"
    names = {"PersistentVolumeClaim": "pvc", "Secret": "hf-token", "ServiceAccount": "download-sa", "StorageClass": "class"}
    return names[kind]
