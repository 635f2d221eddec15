"""Workload identity against the nodes the server lands on (docs/sources.md §S12).

GKE serves a Workload Identity token from the GKE metadata server, which runs only on node pools that enable it
(`--workload-metadata=GKE_METADATA`); GKE labels their nodes iam.gke.io/gke-metadata-server-enabled=true. On any
other node a pod's token request reaches the Compute Engine metadata server, which answers with the node's own
service account: the bucket is read as the node, or not at all.
"""

from __future__ import annotations

from catalog.gpus import GpuVendor
from catalog.selectors import Term
from cluster.checks import gpu_nodes
from cluster.facts import ClusterFacts
from cluster.findings import Finding, Level

GKE_METADATA_SERVER_LABEL = "iam.gke.io/gke-metadata-server-enabled"


def check_gke_metadata_server(facts: ClusterFacts, terms: list[Term], identity: str | None, vendor: GpuVendor) -> list[Finding]:
    """With GKE Workload Identity, the GPU nodes the server may land on run the GKE metadata server. No finding
    without such nodes (an autoscaled pool at zero): their labels are not known yet."""
    nodes = gpu_nodes(facts, terms, vendor) if identity == "gke-workload-identity" else []
    without = sorted(n.name for n in nodes if n.labels.get(GKE_METADATA_SERVER_LABEL) != "true")
    if not nodes:
        return []
    if not without:
        return [Finding("identity", "ok", f"the GPU nodes run the GKE metadata server ({GKE_METADATA_SERVER_LABEL}=true).")]
    level: Level = "block" if len(without) == len(nodes) else "warn"
    shown = ", ".join(without[:3]) + (f" and {len(without) - 3} more" if len(without) > 3 else "")
    return [
        Finding(
            "identity",
            level,
            f"the server reads its bucket with GKE Workload Identity, but GPU node(s) {shown} carry no "
            f"{GKE_METADATA_SERVER_LABEL}=true: the GKE metadata server does not run there, so the pods' token "
            "requests reach the Compute Engine metadata server and get the node's service account.",
            "enable Workload Identity on the GPU node pool (gcloud container node-pools update POOL --cluster CLUSTER "
            "--workload-metadata=GKE_METADATA; its nodes are recreated), or read the bucket with another identity.",
        )
    ]
