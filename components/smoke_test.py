"""SmokeTest: after the rollout, a Job sends one chat completion; its failure fails `pulumi up`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.kube import timeouts, with_namespace
from components.render.smoke import deadline_seconds, render_smoke_configmap, render_smoke_job
from config.stack import StackConfig

TOKEN = "vllm-serving:index:SmokeTest"


@dataclass(frozen=True)
class SmokeTestArgs:
    config: StackConfig
    instance: str
    namespace: pulumi.Input[str]
    # The Deployment (Pulumi awaits its rollout), the Service, the API-key Secret and the NetworkPolicies.
    wait_for: Sequence[pulumi.Resource] = field(default_factory=tuple)


class SmokeTest(pulumi.ComponentResource):
    """The script's ConfigMap and the Job; Pulumi awaits the Job, up to its deadline plus a minute."""

    def __init__(self, name: str, args: SmokeTestArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TOKEN, name, None, opts)
        cfg = args.config
        configmap, job = render_smoke_configmap(cfg, args.instance), render_smoke_job(cfg, args.instance)
        script = k8s.core.v1.ConfigMap(
            f"{name}-script",
            metadata=with_namespace(configmap, args.namespace),
            data=configmap["data"],
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.job = k8s.batch.v1.Job(
            f"{name}-job",
            metadata=with_namespace(job, args.namespace),
            spec=job["spec"],
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[script, *args.wait_for],
                # A new name per model/image (render/smoke.py): the old Job is deleted after the new one passed.
                delete_before_replace=False,
                custom_timeouts=timeouts(deadline_seconds(cfg) + 60),
            ),
        )
        self.job_name: pulumi.Output[str] = self.job.metadata.apply(lambda m: m["name"])
        self.register_outputs({"jobName": self.job_name})
