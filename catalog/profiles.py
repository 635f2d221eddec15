"""Cluster profiles: the defaults that differ between providers, in one table.

GPU labels: docs/sources.md §S3 (GFD is absent on GKE/EKS/AKS GPU pools
unless the GPU Operator or GFD is installed; GKE always sets cloud.google.com/gke-accelerator; Karpenter
labels its nodes with instance-gpu-name/-memory before they exist, so scale-from-zero works; AKS's
kubernetes.azure.com/accelerator names only the vendor, so the instance type is the product).
Storage: docs/sources.md §S2 (EKS gp2/gp3 EBS, GKE standard-rwo PD and AKS managed-csi Azure Disk are ReadWriteOnce;
ReadWriteMany needs efs-sc / standard-rwx Filestore / azurefile-csi).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ProfileName = Literal["generic", "gpu-operator", "gke", "eks-karpenter", "aks", "openshift"]
NodeAutoscaler = Literal["karpenter", "cluster-autoscaler", "none"]
GpuLabelScheme = Literal["gfd", "gke-accelerator", "karpenter", "instance-type", "none"]


@dataclass(frozen=True)
class DnsService:
    """How the platform serves pods' DNS: the DNS pods, the port they listen on (a NetworkPolicy sees the port
    after the Service's translation) and any host-network cache addresses (reached on 53; no pod selector
    matches a host-network pod). docs/sources.md §S8."""

    namespace: str
    pod_labels: dict[str, str]
    port: int
    addresses: tuple[str, ...]
    source: str


# The pod annotation each node autoscaler honours before removing a node a pod runs on; each removal of a
# serving pod costs a full reload (30-90 min for the large models). Karpenter: drift and consolidation skip the
# node, expiry and interruption do not (karpenter.sh docs, Disruption, "Pod-Level Controls"). Cluster Autoscaler
# (GKE's and AKS's autoscaler) does not scale down a node running such a pod (kubernetes/autoscaler
# cluster-autoscaler/FAQ.md, "What types of pods can prevent CA from removing a node?"). docs/sources.md §S8.
DO_NOT_EVICT: dict[NodeAutoscaler, dict[str, str]] = {
    "karpenter": {"karpenter.sh/do-not-disrupt": "true"},
    "cluster-autoscaler": {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"},
    "none": {},
}

# kube-dns and CoreDNS both carry k8s-app: kube-dns in kube-system.
KUBE_DNS = DnsService("kube-system", {"k8s-app": "kube-dns"}, 53, (), "kube-dns in kube-system")
# openshift/cluster-dns-operator assets/dns/daemonset.yaml (label, containerPort 5353) and service.yaml (53 -> 5353).
OPENSHIFT_DNS = DnsService(
    "openshift-dns",
    {"dns.operator.openshift.io/daemonset-dns": "default"},
    5353,
    (),
    "openshift-dns pods on 5353 (the dns-default Service maps 53 to 5353)",
)
# GKE: kube-dns, or NodeLocal DNSCache on the host network at 169.254.20.10 (kubernetes
# cluster/addons/dns/nodelocaldns/README.md), or Cloud DNS through the metadata server 169.254.169.254:53.
# Which one runs is a cluster setting the offline render cannot see, so all three are admitted; the cluster
# check (cluster/dns.py) reads the nodes. GKE labels a node addon.gke.io/node-local-dns-ds-ready=true once
# NodeLocal DNSCache runs on it (cloud.google.com/kubernetes-engine/docs/how-to/nodelocal-dns-cache), and
# every GKE node cloud.google.com/gke-nodepool. docs/sources.md §S8.
NODE_LOCAL_DNS_ADDRESS, CLOUD_DNS_ADDRESS = "169.254.20.10", "169.254.169.254"
NODE_LOCAL_DNS_LABEL = ("addon.gke.io/node-local-dns-ds-ready", "true")
GKE_NODE_LABEL = "cloud.google.com/gke-nodepool"
GKE_DNS = DnsService(
    "kube-system",
    {"k8s-app": "kube-dns"},
    53,
    (NODE_LOCAL_DNS_ADDRESS, CLOUD_DNS_ADDRESS),
    f"kube-dns, NodeLocal DNSCache {NODE_LOCAL_DNS_ADDRESS} or Cloud DNS {CLOUD_DNS_ADDRESS}",
)


@dataclass(frozen=True)
class UserWorkloadMonitoring:
    """OpenShift's monitoring for user-defined projects: a Prometheus in its own namespace scrapes every
    ServiceMonitor and PrometheusRule of the user projects, selecting no labels, and the Custom Metrics Autoscaler
    (KEDA in openshift-keda) queries the Thanos Querier's namespace-scoped (tenancy) port with a bearer token.
    openshift/openshift-docs modules/nodes-cma-autoscaling-custom-prometheus-config.adoc@02546003: the address,
    `authModes: bearer`, the trigger's `namespace`, a TriggerAuthentication with the token Secret's `token` and
    `ca.crt`, and the Role `thanos-metrics-reader` (RULES below) bound to its ServiceAccount. docs/sources.md §S8."""

    prometheus_namespace: str = "openshift-user-workload-monitoring"
    thanos_querier: str = "https://thanos-querier.openshift-monitoring.svc.cluster.local:9092"
    thanos_namespace: str = "openshift-monitoring"
    thanos_port: int = 9092
    keda_namespace: str = "openshift-keda"


# The Role the docs above bind to the token's ServiceAccount, as (apiGroups, resources, verbs).
THANOS_READER_RULES: tuple[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    (("",), ("pods",), ("get",)),
    (("metrics.k8s.io",), ("pods", "nodes"), ("get", "list", "watch")),
)


@dataclass(frozen=True)
class UpgradeDrain:
    """How the provider's managed node upgrade drains a node: how long it retries an eviction its
    PodDisruptionBudget refuses, how much of a pod's terminationGracePeriodSeconds it grants, and what happens when
    either runs out. docs/sources.md §S11."""

    upgrade: str  # the operation, as the report names it
    budget_wait_seconds: int  # how long a refused eviction is retried
    grace_cap_seconds: int  # the most of a pod's terminationGracePeriodSeconds the drain waits for
    # The budget's wait and the graceful termination share one per-node timeout (AKS's drainTimeoutInMinutes).
    one_timeout: bool
    on_timeout: str  # what the upgrade does when the wait runs out
    fix: str  # the provider's setting that lengthens the wait, or the way around it
    timeout_setting: str | None = None  # the node pool setting that lengthens it; None where the wait is fixed


# GKE surge upgrades: a PodDisruptionBudget is respected for up to an hour, then the node is drained anyway; a pod
# gets up to an hour of graceful termination. The wait is GKE's own: no node pool setting lengthens it.
GKE_UPGRADE = UpgradeDrain(
    upgrade="a GKE node upgrade",
    budget_wait_seconds=3600,
    grace_cap_seconds=3600,
    one_timeout=False,
    on_timeout="drains the node anyway after 3600 s, so the next replica goes down while the one before it still loads",
    fix="upgrade the GPU node pool in a maintenance window that can take two replicas down, or shorten a replica's "
    "start on a new node (its image pull and the startup terms the report lists)",
)
# AKS node image and Kubernetes upgrades: one drain timeout per node (upgradeSettings.drainTimeoutInMinutes, 30 min
# unless set) covers the evictions the PodDisruptionBudgets allow and the pods' graceful termination; when it
# elapses the upgrade stops in a failed state (undrainableNodeBehavior Cordon quarantines the node instead).
AKS_UPGRADE = UpgradeDrain(
    upgrade="an AKS node upgrade",
    budget_wait_seconds=1800,
    grace_cap_seconds=1800,
    one_timeout=True,
    on_timeout="fails once the node pool's drain timeout (upgradeSettings.drainTimeoutInMinutes, 30 unless set) elapses",
    fix="raise the GPU node pool's drain timeout (az aks nodepool update --drain-timeout <minutes>) and set "
    "cluster.upgrade_drain_timeout_minutes to it",
    timeout_setting="upgradeSettings.drainTimeoutInMinutes",
)


@dataclass(frozen=True)
class Profile:
    name: str
    gpu_label: GpuLabelScheme  # how pods select the GPU product (catalog/selectors.py)
    storage_class: str | None  # the provider's default class (ReadWriteOnce); None = the cluster default
    rwx_storage_class: str | None  # the provider's usual ReadWriteMany class, when it has one
    runtime_class: str | None  # runtimeClassName for GPU pods; None where the default runtime has the GPU hook
    gpu_tolerations: tuple[dict[str, str], ...] = field(default=())  # GPU pool taints besides the vendor's
    dns: DnsService = KUBE_DNS
    node_autoscaler: NodeAutoscaler = "none"  # what may remove a GPU node under a serving pod (DO_NOT_EVICT)
    assigns_uids: bool = False  # OpenShift restricted-v2 (MustRunAsRange): pods must not fix UID/GID/fsGroup
    # GKE Gateway: the load balancer health-checks `/` unless a HealthCheckPolicy says otherwise, from these ranges.
    load_balancer_probe_cidrs: tuple[str, ...] = ()
    # GKE Gateway: an HTTPRoute with rules[].timeouts is not accepted (Accepted False, UnsupportedValue); the load
    # balancer's backend service bounds each request instead, 30 s unless a GCPBackendPolicy sets timeoutSec.
    gateway_timeout_policy: bool = False
    user_workload_monitoring: UserWorkloadMonitoring | None = None  # OpenShift's Prometheus and Thanos
    upgrade_drain: UpgradeDrain | None = None  # the managed node upgrade's drain; None where no such upgrade is known


PROFILES: dict[str, Profile] = {
    # Plain Kubernetes with the NVIDIA device plugin and GFD: GFD's nvidia.com/gpu.product.
    "generic": Profile("generic", "gfd", None, None, None),
    # On-prem with the NVIDIA GPU Operator (runs GFD; its toolkit makes nvidia the default runtime).
    "gpu-operator": Profile("gpu-operator", "gfd", None, None, None),
    # GKE: no GFD unless installed (NVIDIA/gpu-feature-discovery#44); NodeLocal DNSCache is an add-on.
    "gke": Profile(
        "gke",
        "gke-accelerator",
        "standard-rwo",
        "standard-rwx",
        None,
        dns=GKE_DNS,
        load_balancer_probe_cidrs=("35.191.0.0/16", "130.211.0.0/22"),  # docs/sources.md §S8
        gateway_timeout_policy=True,  # docs/sources.md §S8
        node_autoscaler="cluster-autoscaler",
        upgrade_drain=GKE_UPGRADE,
    ),
    # EKS with Karpenter: labels known before the node exists (scale from zero).
    "eks-karpenter": Profile("eks-karpenter", "karpenter", "gp2", "efs-sc", None, node_autoscaler="karpenter"),
    # AKS: the accelerator label is vendor only; the instance type names the GPU.
    # AKS's GPU guides taint GPU pools sku=gpu:NoSchedule (MicrosoftDocs/azure-docs articles/aks/gpu-cluster.md,
    # use-node-taints.md: `az aks nodepool add ... --node-taints sku=gpu:NoSchedule`).
    "aks": Profile(
        "aks",
        "instance-type",
        "managed-csi",
        "azurefile-csi",
        None,
        ({"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},),
        node_autoscaler="cluster-autoscaler",
        upgrade_drain=AKS_UPGRADE,
    ),
    # OpenShift: GPUs come through the NVIDIA GPU Operator (GFD labels); restricted-v2 assigns the UIDs from
    # the project's openshift.io/sa.scc.uid-range; DNS is openshift-dns on 5353.
    "openshift": Profile(
        "openshift",
        "gfd",
        None,
        None,
        None,
        dns=OPENSHIFT_DNS,
        assigns_uids=True,
        user_workload_monitoring=UserWorkloadMonitoring(),
    ),
}
