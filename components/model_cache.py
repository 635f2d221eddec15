"""ModelCache: the PVC holding the Hugging Face cache and the Job that fills it once."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.kube import timeouts, with_namespace
from components.render import cache
from components.render.names import Names, labels
from components.render.security import HF_TOKEN_KEY, render_secret, render_service_account
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
    job: k8s.batch.v1.Job | None
    ready: list[pulumi.Resource]

    def __init__(self, name: str, args: ModelCacheArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE_TOKEN, name, None, opts)
        cfg, names = args.config, Names(args.instance)
        meta_labels = labels(args.instance, "model-cache")
        self.claim_name = cache.claim_name(cfg, args.weights_on_disk_gib, args.instance)
        self.ready = []
        if cfg.cache.existing_claim is None:
            pvc = cache.render_pvc(cfg, args.weights_on_disk_gib, self.claim_name, cfg.namespace.name, meta_labels)
            self.ready.append(k8s.core.v1.PersistentVolumeClaim(
                f"{name}-pvc", metadata=with_namespace(pvc, args.namespace), spec=pvc["spec"],
                opts=pulumi.ResourceOptions(parent=self)))
        self.job = self._download_job(name, args, names, meta_labels) if cache.needs_download(cfg) else None
        self.marker_path = cache.marker_path(cfg) if self.job is not None else None
        self.register_outputs({"claimName": self.claim_name, "markerPath": self.marker_path})

    def _download_job(self, name: str, args: ModelCacheArgs, names: Names,
                      meta_labels: dict[str, str]) -> k8s.batch.v1.Job:
        cfg, child = args.config, pulumi.ResourceOptions(parent=self)
        sa = render_service_account(names.download_service_account, cfg.namespace.name, meta_labels)
        deps: list[pulumi.Resource] = [*self.ready, k8s.core.v1.ServiceAccount(
            f"{name}-download-sa", metadata=with_namespace(sa, args.namespace),
            automount_service_account_token=False, opts=child)]
        token_secret = names.hf_token_secret if args.hf_token is not None else None
        if token_secret is not None:
            secret = render_secret(token_secret, cfg.namespace.name, meta_labels, HF_TOKEN_KEY, args.hf_token)
            deps.append(k8s.core.v1.Secret(f"{name}-hf-token", metadata=with_namespace(secret, args.namespace),
                                           type="Opaque", string_data=secret["stringData"], opts=child))
        job = cache.render_download_job(
            cfg, args.weights_on_disk_gib, name=cache.job_name(cfg, args.weights_on_disk_gib, args.instance),
            namespace=cfg.namespace.name, claim=self.claim_name, service_account=names.download_service_account,
            labels=meta_labels, token_secret=token_secret)
        resource = k8s.batch.v1.Job(
            f"{name}-download", metadata=with_namespace(job, args.namespace), spec=job["spec"],
            opts=pulumi.ResourceOptions(parent=self, depends_on=deps,
                                        custom_timeouts=timeouts(job["spec"]["activeDeadlineSeconds"])))
        self.ready.append(resource)
        return resource
