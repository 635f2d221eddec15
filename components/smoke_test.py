"""SmokeTest: after the rollout, a Job sends one chat completion; its failure fails `pulumi up`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi

from components.kube import fill, register, timeouts
from components.render.security import API_KEY_REVISION_PLACEHOLDER
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
    # The server's rollout (VllmServer.rolled_out), the Service, the API-key Secret and the NetworkPolicies.
    wait_for: Sequence[pulumi.Resource] = field(default_factory=tuple)
    api_key_revision: pulumi.Input[str] | None = None  # VllmServer.api_key_revision: a rotated key reruns the check


class SmokeTest(pulumi.ComponentResource):
    """The script's ConfigMap and the Job; Pulumi awaits the Job, up to its deadline plus a minute."""

    def __init__(self, name: str, args: SmokeTestArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TOKEN, name, None, opts)
        configmap = render_smoke_configmap(args.identity, args.smoke)
        job = fill(
            render_smoke_job(args.identity, args.traffic, args.smoke), API_KEY_REVISION_PLACEHOLDER, args.api_key_revision
        )
        script = register(f"{name}-script", configmap, pulumi.ResourceOptions(parent=self), namespace=args.namespace)
        self.job = register(
            f"{name}-job",
            job,
            pulumi.ResourceOptions(
                parent=self,
                depends_on=[script, *args.wait_for],
                # No delete_before_replace: the provider chooses. A new name (render/smoke.py) is created first and
                # the old Job deleted after it passed; a change that keeps the name (a rotated key, the router
                # turned on) deletes the Job first. False would force create-first there too, an apply to the
                # existing Job whose template is immutable, and `pulumi up` would fail (docs/exposure.md, "Reruns").
                custom_timeouts=timeouts(args.smoke.deadline_seconds + 60),
            ),
            namespace=args.namespace,
        )
        self.job_name: pulumi.Output[str] = self.job.metadata.apply(lambda m: m["name"])
        self.register_outputs({"jobName": self.job_name})
