"""After the rollout (and the smoke test), the new server pod's start-up phases beside the startup budget, as the
`startupPhases` stack output, and a warning per phase beyond the tolerance (preflight/startup_phases.py).

Read from the live cluster with the provider's kubeconfig and context (cluster/pod_start.py), during `up` only: a
preview has no new pod yet, an offline render (render_yaml_to_directory) no cluster. A read that fails is a
warning and an output saying why, never a failed `up`: the report informs, the probes and the smoke test decide.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi

from cluster import pod_start
from cluster.live import LiveReadError
from config.sources import load_kubernetes_provider_settings
from plan import Plan
from preflight.startup_phases import factors_setting, parse_phases, phase_check_dict

SERVER_CONTAINER = "vllm"  # components/render/pod.py render_server_container


def _report(plan: Plan, namespace: str) -> dict[str, Any]:
    if pulumi.runtime.is_dry_run():
        return {"status": "known after up: the new pod's start-up is read once it is ready"}
    kubeconfig, context = load_kubernetes_provider_settings()
    selector = plan.identity.selector("server")
    try:
        start = pod_start.read_pod_start(kubeconfig, context, namespace, selector, SERVER_CONTAINER)
    except LiveReadError as error:
        pulumi.log.warn(f"startup phases: not read ({error}); run `python -m preflight STACK --log FILE` instead")
        return {"status": f"not read: {error}"}
    phases = parse_phases(start.log, start.events)
    checked = phase_check_dict(plan.delivery.budget, phases)
    for warning in checked["warnings"]:
        pulumi.log.warn(f"startup phases of {start.pod}: {warning}")
    if checked["measured_settings"]:
        measured = ", ".join(f"{key}: {value:g}" for key, value in checked["measured_settings"].items())
        pulumi.log.info(f"startup phases of {start.pod}: measured, to put into the stack: {measured}")
    if checked["measured_phase_factors"]:
        factors = factors_setting(checked["measured_phase_factors"])
        pulumi.log.info(f"startup phases of {start.pod}: measured on these nodes, for any model's stack on them: {factors}")
    return {"status": "read", "pod": start.pod, **checked}


def startup_phases_output(
    plan: Plan, namespace: pulumi.Input[str], after: Sequence[pulumi.Output[Any]]
) -> pulumi.Output[dict[str, Any]] | None:
    """The output, resolved once `after` (the workload's rollout, the smoke Job) is; None for an offline render."""
    if plan.render_yaml_to_directory:
        return None
    return pulumi.Output.all(namespace, *after).apply(lambda values: _report(plan, str(values[0])))
