"""Karpenter's forceful replacement of a serving pod's node, days after `pulumi up`, against the server pods'
`karpenter.sh/do-not-disrupt` and their grace period.

Karpenter never evicts a do-not-disrupt pod: a node that is deleted (past the NodePool's expireAfter, or by hand)
drains until the pod leaves, or until the NodeClaim's terminationGracePeriod elapses; drift skips the node outright.
A pod whose terminationGracePeriodSeconds is longer than the node's terminationGracePeriod is deleted as soon as
the node begins to drain and does not get its full grace (aws/karpenter-provider-aws
website/content/en/docs/concepts/disruption.md@007cee445bd9a0378294c671df17862c83ebfc02, "TerminationGracePeriod",
"Pod-Level Controls"; docs/sources.md §S8).

A spot node's reclaim, against the server's grace: GKE stops a Spot (or preemptible) VM 30 s after its termination
notice, and the kubelet's graceful node shutdown gives non-system pods the first 15 s of it; EC2 reclaims a spot
instance 2 minutes after its interruption warning, and Karpenter's interruption handling drains the node then,
where do-not-disrupt pods are not evicted (docs/sources.md §S14). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from cluster.checks import pools_of
from cluster.facts import Node, NodePool
from cluster.findings import Finding
from cluster.karpenter import CAPACITY_TYPE, Candidate
from reading.numbers import go_duration_seconds

CHECK = "disruption"
GKE_SPOT_LABELS = ("cloud.google.com/gke-spot", "cloud.google.com/gke-preemptible")  # "true" on such nodes
GKE_NODEPOOL = "cloud.google.com/gke-nodepool"
GKE_SPOT_NOTICE_SECONDS = 30  # the VM stops this long after its termination notice
GKE_SPOT_POD_SECONDS = 15  # the kubelet's shutdown grace for non-system pods; the last 15 s are the system pods'
EC2_SPOT_NOTICE_SECONDS = 120  # "Spot interruptions have a 2 minute notice"


def check_karpenter_termination(pools: Iterable[NodePool], grace_seconds: int) -> list[Finding]:
    """One finding per Karpenter NodePool that can create the server's GPU nodes (cluster/checks.py
    pools_of), for server pods annotated karpenter.sh/do-not-disrupt. `grace_seconds`:
    server.termination_grace_period_seconds."""
    return [_termination(pool, grace_seconds) for pool in pools if pool.karpenter]


def _termination(pool: NodePool, grace_seconds: int) -> Finding:
    written = pool.termination_grace_period
    if written is None:
        return _unbounded(pool, grace_seconds)
    seconds = go_duration_seconds(written)
    if seconds is None:
        return Finding(
            CHECK,
            "warn",
            f"node pool {pool.name}'s terminationGracePeriod ({written[:40]!r}) is no Go duration, so the drain it "
            "bounds is unknown.",
            f"write it as a Go duration of at least {grace_seconds}s (server.termination_grace_period_seconds), e.g. "
            f"{grace_seconds}s or 1h.",
        )
    if seconds < grace_seconds:
        return Finding(
            CHECK,
            "warn",
            f"node pool {pool.name}'s terminationGracePeriod ({written}) is shorter than "
            f"server.termination_grace_period_seconds ({grace_seconds}): Karpenter deletes such a pod as soon as its "
            "node begins to drain and terminates the node when the terminationGracePeriod elapses, so the server's "
            "drain of the answers in flight (--shutdown-timeout) is cut short.",
            f"raise {pool.name}'s spec.template.spec.terminationGracePeriod to at least {grace_seconds}s, or lower "
            "server.termination_grace_period_seconds.",
        )
    return Finding(
        CHECK,
        "ok",
        f"node pool {pool.name}'s terminationGracePeriod ({written}) bounds the drain of a node it replaces "
        f"(expireAfter: {pool.expire_after or 'its default'}) and covers the server's {grace_seconds} s grace.",
    )


def _unbounded(pool: NodePool, grace_seconds: int) -> Finding:
    """No terminationGracePeriod: a deleted node waits on the do-not-disrupt pods for as long as they run."""
    expiry = (
        "never expires (expireAfter: Never), but one deleted by hand"
        if pool.expire_after == "Never"
        else f"past expireAfter ({pool.expire_after or 'its default'}), or deleted by hand,"
    )
    return Finding(
        CHECK,
        "warn",
        f"node pool {pool.name} sets no spec.template.spec.terminationGracePeriod, and Karpenter never evicts the "
        f"server pods (karpenter.sh/do-not-disrupt): a node {expiry} stays tainted and draining until they leave by "
        "themselves, and drift (a new AMI, a changed NodePool or EC2NodeClass) never replaces a node they run on.",
        f"set spec.template.spec.terminationGracePeriod on {pool.name} to the longest drain you accept (at least "
        f"{grace_seconds}s, server.termination_grace_period_seconds), so a deleted or expired node is replaced within "
        "it; a drifted node still keeps its old image until it expires.",
    )


# --- a spot node's reclaim ------------------------------------------------------------------------------


def check_gke_spot(nodes: Iterable[Node], fits: Iterable[tuple[NodePool, Candidate]], grace_seconds: int) -> list[Finding]:
    """One finding per GKE Spot or preemptible node pool the server can land on: its nodes (cluster/checks.py
    nodes_that_fit; grouped by cloud.google.com/gke-nodepool) and the declared pools (cluster.node_pools) whose
    labels say so. `grace_seconds`: server.termination_grace_period_seconds."""
    found: dict[str, str] = {}
    for node in nodes:
        label = _gke_spot_label(node.labels)
        if label:
            found.setdefault(node.labels.get(GKE_NODEPOOL) or node.name, label)
    for pool, candidate in fits:
        label = _gke_spot_label(candidate.labels)
        if label and not pool.karpenter:
            found.setdefault(pool.name, label)
    return [_gke_spot(name, label, grace_seconds) for name, label in found.items()]


def _gke_spot_label(labels: Mapping[str, str]) -> str | None:
    return next((key for key in GKE_SPOT_LABELS if labels.get(key) == "true"), None)


def _gke_spot(pool: str, label: str, grace_seconds: int) -> Finding:
    where = f'node pool {pool} ({label}: "true")'
    if grace_seconds <= GKE_SPOT_POD_SECONDS:
        return Finding(
            CHECK,
            "ok",
            f"{where}: a reclaim's {GKE_SPOT_POD_SECONDS} s graceful node shutdown covers the server's {grace_seconds} s "
            "grace.",
        )
    return Finding(
        CHECK,
        "warn",
        f"{where} can run the server, and GKE stops such a VM {GKE_SPOT_NOTICE_SECONDS} s after its termination notice, "
        f"the kubelet's graceful node shutdown giving non-system pods {GKE_SPOT_POD_SECONDS} s of it: less than "
        f"server.termination_grace_period_seconds ({grace_seconds}), so every reclaim cuts the server's drain "
        "(--shutdown-timeout) and the answers in flight are lost.",
        f"keep the server off spot: set gpu.node_selector to {{{GKE_NODEPOOL}: <an on-demand GPU pool>}} (a "
        f"nodeSelector can require a label's value, not `{label} NotIn [true]`); or accept the shorter drain on {pool}: "
        f"server.termination_grace_period_seconds of at most {GKE_SPOT_POD_SECONDS} (with a shorter "
        "server.pre_stop_sleep_seconds), or a longer graceful shutdown in the pool's node system configuration "
        "(up to 120 s, GKE 1.35.0-gke.1171000 or later).",
    )


def check_karpenter_spot(fits: Iterable[tuple[NodePool, Candidate]], grace_seconds: int, do_not_disrupt: bool) -> list[Finding]:
    """One finding per Karpenter NodePool that can put the server on a spot instance: a fitting node of it is
    labelled karpenter.sh/capacity-type spot (cluster/karpenter.py), which gpu.node_selector may rule out.
    `do_not_disrupt`: the server pods carry karpenter.sh/do-not-disrupt."""
    spot = [(pool, c) for pool, c in fits if pool.karpenter and c.labels.get(CAPACITY_TYPE) == "spot"]
    return [_karpenter_spot(pool, grace_seconds, do_not_disrupt) for pool in pools_of(spot)]


def spot_drain_seconds(grace_seconds: int, node_grace: float | None, do_not_disrupt: bool) -> float:
    """Seconds of its grace a server pod gets between a spot interruption warning and EC2's reclaim, Karpenter
    draining the node at the warning. An evictable pod is deleted at once; a do-not-disrupt pod only when the
    NodeClaim's terminationGracePeriod (`node_grace`) less its own grace has passed, or never without one. Karpenter
    terminates the node at the terminationGracePeriod, EC2 the instance at 120 s."""
    end = min(EC2_SPOT_NOTICE_SECONDS, node_grace if node_grace is not None else EC2_SPOT_NOTICE_SECONDS)
    if not do_not_disrupt:
        return min(grace_seconds, end)
    if node_grace is None:
        return 0
    return max(0.0, min(grace_seconds, end - max(0.0, node_grace - grace_seconds)))


def _karpenter_spot(pool: NodePool, grace_seconds: int, do_not_disrupt: bool) -> Finding:
    written = pool.termination_grace_period
    node_grace = go_duration_seconds(written) if written is not None else None
    drain = spot_drain_seconds(grace_seconds, node_grace, do_not_disrupt)
    where = f"node pool {pool.name} can launch spot instances for the server ({CAPACITY_TYPE} allows spot)"
    if drain >= grace_seconds:
        return Finding(
            CHECK,
            "ok",
            f"{where}: an interruption drains the node within EC2's {EC2_SPOT_NOTICE_SECONDS} s notice and the server "
            f"pod gets its full {grace_seconds} s grace (terminationGracePeriod: {written or 'unset'}).",
        )
    held = (
        "the server pods' karpenter.sh/do-not-disrupt does not hold off an interruption, and the drain does not evict "
        f"them: a pod is deleted only when the terminationGracePeriod ({written or 'unset'}) less its own grace has passed"
        if do_not_disrupt
        else f"the drain evicts the server pod at once (terminationGracePeriod: {written or 'unset'})"
    )
    return Finding(
        CHECK,
        "warn",
        f"{where}, and EC2 reclaims a spot instance {EC2_SPOT_NOTICE_SECONDS} s after its interruption warning; "
        f"Karpenter's interruption handling (--interruption-queue) drains the node then, but {held}: of "
        f"server.termination_grace_period_seconds ({grace_seconds}) the server gets {drain:g} s, so every reclaim cuts "
        "its drain (--shutdown-timeout) and the answers in flight are lost.",
        _karpenter_spot_fix(pool, grace_seconds, do_not_disrupt),
    )


def _karpenter_spot_fix(pool: NodePool, grace_seconds: int, do_not_disrupt: bool) -> str:
    on_demand = (
        f"keep the server on on-demand: set gpu.node_selector to {{{CAPACITY_TYPE}: on-demand}}, or give {pool.name} the "
        f"requirement {{key: {CAPACITY_TYPE}, operator: In, values: [on-demand]}}"
    )
    if grace_seconds > EC2_SPOT_NOTICE_SECONDS:
        return f"{on_demand}; or accept a shorter drain on spot: server.termination_grace_period_seconds of at most 120."
    if do_not_disrupt:
        return (
            f"{on_demand}; or, to stay on spot, set {pool.name}'s spec.template.spec.terminationGracePeriod between "
            f"{grace_seconds}s (server.termination_grace_period_seconds) and 120s, so the pod is deleted in time."
        )
    return f"{on_demand}; or set {pool.name}'s spec.template.spec.terminationGracePeriod to at least {grace_seconds}s."
