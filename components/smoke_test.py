"""SmokeTest: after the rollout, a Job sends one chat completion; its failure fails `pulumi up`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi

from components.kube import register, timeouts
from components.render.smoke import render_smoke_configmap, render_smoke_job
from plan.identity import Identity
from plan.traffic import SmokePlan, TrafficPlan

TOKEN = "vllm-serving:index:SmokeTest"


@dataclass(frozen=True)
class SmokeTestArgs:
    identity: Identity
    traffic: TrafficPlan
    smoke: SmokePlan  # plan.traffic.smoke: the component exists only when the smoke test is on
    namespace: pulumi.Input[str]
    # The Deployment (Pulumi awaits its rollout), the Service, the API-key Secret and the NetworkPolicies.
    wait_for: Sequence[pulumi.Resource] = field(default_factory=tuple)


class SmokeTest(pulumi.ComponentResource):
    """The script's ConfigMap and the Job; Pulumi awaits the Job, up to its deadline plus a minute."""

    def __init__(self, name: str, args: SmokeTestArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TOKEN, name, None, opts)
        configmap = render_smoke_configmap(args.identity, args.smoke)
        job = render_smoke_job(args.identity, args.traffic, args.smoke)
        script = register(f"{name}-script", configmap, pulumi.ResourceOptions(parent=self), namespace=args.namespace)
        self.job = register(
            f"{name}-job",
            job,
            pulumi.ResourceOptions(
                parent=self,
                depends_on=[script, *args.wait_for],
                # A new name per model/image (render/smoke.py): the old Job is deleted after the new one passed.
                delete_before_replace=False,
                custom_timeouts=timeouts(args.smoke.deadline_seconds + 60),
            ),
            namespace=args.namespace,
        )
        self.job_name: pulumi.Output[str] = self.job.metadata.apply(lambda m: m["name"])
        self.register_outputs({"jobName": self.job_name})
