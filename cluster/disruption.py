"""Karpenter's forceful replacement of a serving pod's node, days after `pulumi up`, against the server pods'
`karpenter.sh/do-not-disrupt` and their grace period.

Karpenter never evicts a do-not-disrupt pod: a node that is deleted (past the NodePool's expireAfter, or by hand)
drains until the pod leaves, or until the NodeClaim's terminationGracePeriod elapses; drift skips the node outright.
A pod whose terminationGracePeriodSeconds is longer than the node's terminationGracePeriod is deleted as soon as
the node begins to drain and does not get its full grace (aws/karpenter-provider-aws
website/content/en/docs/concepts/disruption.md@007cee445bd9a0378294c671df17862c83ebfc02, "TerminationGracePeriod",
"Pod-Level Controls"; docs/sources.md §S8). Pure.
"""

from __future__ import annotations

from collections.abc import Iterable

from cluster.facts import NodePool
from cluster.findings import Finding
from reading.numbers import go_duration_seconds

CHECK = "disruption"


def check_karpenter_termination(pools: Iterable[NodePool], grace_seconds: int) -> list[Finding]:
    """One finding per Karpenter NodePool that can create the server's GPU nodes (cluster/checks.py
    pools_that_fit), for server pods annotated karpenter.sh/do-not-disrupt. `grace_seconds`:
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
