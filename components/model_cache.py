"""ModelCache: the PVC holding the Hugging Face cache and the Job that fills it once."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.kube import timeouts, with_namespace
from components.render import bucket_copy, cache, manifests, scheduling
from components.render.names import Names, labels, namespace_name
from components.render.security import HF_TOKEN_KEY, render_secret
from config.delivery import delivery_mode
from config.stack import StackConfig


@dataclass(frozen=True)
class ModelCacheArgs:
    config: StackConfig
    instance: str  # app.kubernetes.io/instance, the base of every object name
    namespace: pulumi.Input[str]
    weights_on_disk_gib: float  # from the preflight report
    hf_token: pulumi.Input[str] | None = None  # for gated models; stored in a Secret, mounted as a file


class ModelCache(pulumi.ComponentResource):
    """A PVC sized from the weights (or an existing claim) and, unless the model is a local path, a
    single-writer download Job (delivery.mode shared_volume); only the HF token Secret for per-replica volumes
    (each replica downloads itself); nothing for object storage. `ready` lists what the server must wait for.

    Order: the Job first, not awaited (skipAwait), then the claim, awaited until Bound for at most
    delivery.claim_bind_timeout_seconds. The Job is the claim's first consumer, which WaitForFirstConsumer
    classes need before they provision, so a claim that cannot bind fails the update in minutes instead of
    at the Job's deadline; the server's rollout then waits for the download (its deadline counts it)."""

    claim_name: str
    marker_path: str | None
    job: k8s.batch.v1.Job | None
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: ModelCacheArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("vllm-serving:index:ModelCache", name, None, opts)
        cfg, names = args.config, Names(args.instance)
        meta_labels, ns = labels(args.instance, "model-cache"), namespace_name(cfg.namespace, args.instance)
        self.claim_name = cache.claim_name(cfg, args.weights_on_disk_gib, args.instance)
        self.ready = []
        shared = delivery_mode(cfg) == "shared_volume"
        self.job = None
        if cache.needs_download(cfg) or bucket_copy.copies_to_bucket(cfg):
            token = self._token_secret(name, args, names, meta_labels)
            if shared:
                self.job = self._download_job(name, args, names, meta_labels, token)
            elif bucket_copy.copies_to_bucket(cfg):
                self._copy_job(name, args, names, meta_labels, token)
        if cfg.cache.existing_claim is None and shared:
            pvc = cache.render_pvc(cfg, args.weights_on_disk_gib, self.claim_name, ns, meta_labels)
            self.ready.insert(0, k8s.core.v1.PersistentVolumeClaim(
                f"{name}-pvc", metadata=with_namespace(pvc, args.namespace), spec=pvc["spec"],
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.job] if self.job else None,
                                            custom_timeouts=timeouts(cfg.delivery.claim_bind_timeout_seconds))))
        self.marker_path = cache.marker_path(cfg) if self.job is not None else None
        self.register_outputs({"claimName": self.claim_name, "markerPath": self.marker_path})

    def _token_secret(self, name: str, args: ModelCacheArgs, names: Names,
                      meta_labels: dict[str, str]) -> k8s.core.v1.Secret | None:
        if args.hf_token is None:
            return None
        secret = render_secret(names.hf_token_secret, namespace_name(args.config.namespace, args.instance), meta_labels,
                               HF_TOKEN_KEY, args.hf_token)
        resource = k8s.core.v1.Secret(f"{name}-hf-token", metadata=with_namespace(secret, args.namespace),
                                      type="Opaque", string_data=secret["stringData"],
                                      opts=pulumi.ResourceOptions(parent=self))
        self.ready.append(resource)
        return resource

    def _job_dependencies(self, name: str, args: ModelCacheArgs,
                          token: k8s.core.v1.Secret | None) -> list[pulumi.Resource]:
        sa = manifests.download_service_account(args.config, args.instance)
        return [k8s.core.v1.ServiceAccount(
            f"{name}-download-sa", metadata=with_namespace(sa, args.namespace),
            automount_service_account_token=False, opts=pulumi.ResourceOptions(parent=self)), *([token] if token else [])]

    def _copy_job(self, name: str, args: ModelCacheArgs, names: Names, meta_labels: dict[str, str],
                  token: k8s.core.v1.Secret | None) -> None:
        """Awaited: the server starts streaming only once the bucket holds the whole copy."""
        cfg = args.config
        job = scheduling.with_job_pod_settings(cfg, bucket_copy.render_copy_job(
            cfg, args.weights_on_disk_gib, name=bucket_copy.copy_job_name(cfg, args.instance),
            namespace=namespace_name(cfg.namespace, args.instance), service_account=names.download_service_account,
            labels=meta_labels, token_secret=names.hf_token_secret if token is not None else None))
        self.ready.append(k8s.batch.v1.Job(
            f"{name}-copy", metadata=with_namespace(job, args.namespace), spec=job["spec"],
            opts=pulumi.ResourceOptions(parent=self, depends_on=self._job_dependencies(name, args, token),
                                        custom_timeouts=timeouts(job["spec"]["activeDeadlineSeconds"]))))

    def _download_job(self, name: str, args: ModelCacheArgs, names: Names, meta_labels: dict[str, str],
                      token: k8s.core.v1.Secret | None) -> k8s.batch.v1.Job:
        cfg = args.config
        deps = self._job_dependencies(name, args, token)
        token_secret = names.hf_token_secret if token is not None else None
        job = scheduling.with_job_pod_settings(cfg, cache.render_download_job(
            cfg, args.weights_on_disk_gib, name=cache.job_name(cfg, args.weights_on_disk_gib, args.instance),
            namespace=namespace_name(cfg.namespace, args.instance), claim=self.claim_name, service_account=names.download_service_account,
            labels=meta_labels, token_secret=token_secret))
        resource = k8s.batch.v1.Job(
            f"{name}-download", metadata=with_namespace(job, args.namespace), spec=job["spec"],
            opts=pulumi.ResourceOptions(parent=self, depends_on=deps))  # skipAwait: see the class docstring
        self.ready.append(resource)
        return resource
