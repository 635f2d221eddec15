"""Workload identity against the nodes the server lands on (docs/sources.md §S12).

GKE serves a Workload Identity token from the GKE metadata server, which runs only on node pools that enable it
(`--workload-metadata=GKE_METADATA`); GKE labels their nodes iam.gke.io/gke-metadata-server-enabled=true. On any
other node a pod's token request reaches the Compute Engine metadata server, which answers with the node's own
service account: the bucket is read as the node, or not at all.

EKS Pod Identity serves credentials from its agent, a DaemonSet (kube-system/eks-pod-identity-agent, the EKS add-on)
listening on 169.254.170.23 on each node; EKS Auto Mode nodes (eks.amazonaws.com/compute-type=auto) have it built
in. Without it a pod's credential requests find nothing there and the first read fails.

Azure Workload Identity's webhook (azure-wi-webhook-mutating-webhook-configuration) gives a labelled pod its token
file and client id; without it DefaultAzureCredential falls back to the managed identity on 169.254.169.254, which
the server's egress policy keeps closed.
"""

from __future__ import annotations

from collections.abc import Mapping

from catalog.gpus import GpuVendor
from catalog.selectors import Term
from cluster.checks import gpu_nodes
from cluster.facts import ClusterFacts
from cluster.findings import Finding, Level

GKE_METADATA_SERVER_LABEL = "iam.gke.io/gke-metadata-server-enabled"
POD_IDENTITY_AGENT_NAMESPACE = "kube-system"
POD_IDENTITY_AGENT = f"{POD_IDENTITY_AGENT_NAMESPACE}/eks-pod-identity-agent"
AUTO_MODE_LABEL = ("eks.amazonaws.com/compute-type", "auto")
AUTO_MODE = "=".join(AUTO_MODE_LABEL)
AUTO_MODE_CRD = "nodeclasses.eks.amazonaws.com"  # EKS Auto Mode's NodeClass (eks.amazonaws.com/v1)
AZURE_WEBHOOK = "azure-wi-webhook-mutating-webhook-configuration"
WEBHOOKS_COMMAND = "kubectl get mutatingwebhookconfigurations -o json > webhooks.json"
# What a snapshot adds for the agent check (the warning names it).
DAEMONSETS_COMMAND = f"kubectl get daemonsets -n {POD_IDENTITY_AGENT_NAMESPACE} -o json > daemonsets.json"


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


def check_pod_identity_agent(facts: ClusterFacts, terms: list[Term], identity: str | None, vendor: GpuVendor) -> list[Finding]:
    """With EKS Pod Identity, its agent runs on the nodes: the add-on's DaemonSet, or EKS Auto Mode's own."""
    if identity != "eks-pod-identity":
        return []
    nodes = gpu_nodes(facts, terms, vendor)
    if nodes and all(_auto_mode(n.labels) for n in nodes):
        return [
            Finding(
                "identity", "ok", f"the GPU nodes are EKS Auto Mode nodes ({AUTO_MODE}), whose Pod Identity Agent is built in."
            )
        ]
    if facts.daemonsets is not None and POD_IDENTITY_AGENT in facts.daemonsets:
        return [Finding("identity", "ok", f"the EKS Pod Identity Agent runs ({POD_IDENTITY_AGENT}).")]
    if facts.daemonsets is None:
        why, fix = "was not looked for", f"add `{DAEMONSETS_COMMAND}` to the snapshot."
        return [
            Finding(
                "identity",
                "warn",
                f"the server reads its bucket with EKS Pod Identity, whose agent ({POD_IDENTITY_AGENT}) {why}.",
                fix,
            )
        ]
    auto = any(_auto_mode(n.labels) for n in facts.nodes) or facts.has_crd(AUTO_MODE_CRD)
    where = "only EKS Auto Mode nodes serve it, so the server must land on them" if auto else "the first read fails"
    return [
        Finding(
            "identity",
            "warn" if auto else "block",
            f"the server reads its bucket with EKS Pod Identity, but there is no {POD_IDENTITY_AGENT} DaemonSet: "
            f"its credential requests to 169.254.170.23 find no agent, and {where}.",
            "install the add-on (aws eks create-addon --cluster-name CLUSTER --addon-name eks-pod-identity-agent), "
            "or read the bucket with IRSA (delivery.object_storage.service_account_annotations).",
        )
    ]


def _auto_mode(labels: Mapping[str, str]) -> bool:
    key, value = AUTO_MODE_LABEL
    return labels.get(key) == value


def check_azure_identity_webhook(facts: ClusterFacts, identity: str | None) -> list[Finding]:
    """With Azure Workload Identity, its mutating webhook is installed (AKS --enable-workload-identity)."""
    if identity != "azure-workload-identity":
        return []
    if facts.mutating_webhooks is None:
        return [
            Finding(
                "identity",
                "warn",
                f"the server reads its bucket with Azure Workload Identity, whose webhook ({AZURE_WEBHOOK}) "
                "was not looked for.",
                f"add `{WEBHOOKS_COMMAND}` to the snapshot.",
            )
        ]
    if AZURE_WEBHOOK in facts.mutating_webhooks:
        return [Finding("identity", "ok", f"Azure Workload Identity's webhook is installed ({AZURE_WEBHOOK}).")]
    return [
        Finding(
            "identity",
            "block",
            f"the server reads its bucket with Azure Workload Identity, but there is no {AZURE_WEBHOOK}: its pods get "
            "no federated token, and DefaultAzureCredential's managed-identity fallback (169.254.169.254) is closed "
            "to them, so the first read fails.",
            "enable it: az aks update --resource-group GROUP --name CLUSTER --enable-oidc-issuer --enable-workload-identity.",
        )
    ]
