"""What a multi-node replica (engine.nnodes > 1) needs from the rest of the stack."""

from __future__ import annotations

from catalog.vllm_releases import version_key
from catalog.vllm_versions import MULTINODE_BROKEN_RELEASES, MULTINODE_START_FAILURE, SUPPORTED_VERSIONS
from config.errors import ConfigIssue
from config.multinode import starts_native_multinode, supports_native_multinode
from config.stack import StackConfig
from validation.delivery import delivery_mode


def cross_checks(cfg: StackConfig) -> list[ConfigIssue]:
    """What a multi-node replica needs from the rest of the config."""
    if cfg.engine.nnodes == 1:
        return []
    nnodes = cfg.engine.nnodes
    issues = []
    if cfg.target != "kubernetes":
        issues.append(
            ConfigIssue(
                "engine.nnodes",
                f"is {nnodes}, but the docker target runs one host.",
                "set engine.nnodes: 1, or deploy with target: kubernetes (a LeaderWorkerSet group per replica).",
            )
        )
    if not supports_native_multinode(cfg.vllm.version):
        issues.append(
            ConfigIssue(
                "engine.nnodes",
                f"is {nnodes}, but vLLM {cfg.vllm.version} has no native multi-node mode (--nnodes, "
                "--node-rank, --headless with the mp executor); its multi-node path needs Ray, which this program "
                "does not deploy.",
                "use a vLLM release with --nnodes (vllm.version 0.33.0), or set engine.nnodes: 1.",
            )
        )
    if cfg.vllm.version in MULTINODE_BROKEN_RELEASES:
        issues.append(_broken_release_issue(cfg.vllm.version, nnodes))
    if cfg.monitoring.monitor_kind == "PodMonitor":
        issues.append(
            ConfigIssue(
                "monitoring.monitor_kind",
                f"is PodMonitor, but with engine.nnodes {nnodes} the headless worker pods "
                "serve no metrics; only the leader does.",
                "set monitoring.monitor_kind: ServiceMonitor (it selects the leaders through the Service).",
            )
        )
    return issues + _delivery_issues(cfg) + _scc_issues(cfg)


def _broken_release_issue(version: str, nnodes: int) -> ConfigIssue:
    """A release whose multi-node group stops at start (catalog/vllm_versions.py MULTINODE_BROKEN_RELEASES); the
    fix names the first release after it whose group starts, and the last one before it."""
    starting = [v for v in SUPPORTED_VERSIONS if starts_native_multinode(v)]
    newer = [v for v in starting if version_key(v) > version_key(version)]
    older = [v for v in starting if version_key(v) < version_key(version)]
    releases = [f"{min(newer, key=version_key)} or newer"] if newer else []
    releases += [f"{max(older, key=version_key)} (the last release before the regression)"] if older else []
    return ConfigIssue(
        "vllm.version",
        f"is {version}, but a multi-node group (engine.nnodes {nnodes}) cannot start on it: {MULTINODE_START_FAILURE}.",
        f"set vllm.version: {', or '.join(releases)}; or set engine.nnodes: 1.",
    )


def _scc_issues(cfg: StackConfig) -> list[ConfigIssue]:
    """OpenShift's default restricted-v2 SCC admits neither an added IPC_LOCK nor UID 0 (docs/sources.md §S8)."""
    multinode, profile = cfg.multinode, cfg.cluster.profile
    if multinode.openshift_scc is not None and profile != "openshift":
        return [
            ConfigIssue(
                "multinode.openshift_scc",
                f"is {multinode.openshift_scc!r}, but cluster.profile is {profile}: SCCs exist only on OpenShift.",
                "remove multinode.openshift_scc, or set cluster.profile: openshift.",
            )
        ]
    if profile != "openshift" or not multinode.adds_ipc_lock or multinode.openshift_scc is not None:
        return []
    key = "multinode.ipc_lock" if multinode.ipc_lock else "multinode.rdma_resources"
    return [
        ConfigIssue(
            key,
            "makes every rank add IPC_LOCK and run as UID 0 (the only way the capability takes effect), but "
            "OpenShift's default restricted-v2 SCC rejects both, so no rank of the group would be admitted.",
            "name an SCC that admits them in multinode.openshift_scc (e.g. privileged, or one with "
            "allowedCapabilities [IPC_LOCK] and runAsUser RunAsAny); the stack grants the server ServiceAccount "
            "`use` on it. Or set multinode.ipc_lock: false if the nodes' memlock limit is unlimited.",
        )
    ]


def _delivery_issues(cfg: StackConfig) -> list[ConfigIssue]:
    """Every pod of a group reads the weights of its stage: one copy all nodes mount, or object storage."""
    nnodes = cfg.engine.nnodes
    if delivery_mode(cfg) == "per_replica_volume":
        return [
            ConfigIssue(
                "delivery.mode",
                f"is per_replica_volume, but with engine.nnodes {nnodes} the pods of one replica run on "
                f"{nnodes} nodes; per-replica claims are not rendered for a LeaderWorkerSet.",
                "use delivery.mode shared_volume with a ReadWriteMany storage class, or object_storage.",
            )
        ]
    if cfg.cache.access_mode == "ReadWriteOnce" and cfg.cache.existing_claim is None:
        return [
            ConfigIssue(
                "cache.access_mode",
                f"is ReadWriteOnce, but the {nnodes} pods of a replica run on {nnodes} nodes and "
                "each reads the weights of its stage.",
                "set cache.access_mode: ReadWriteMany with a storage class that "
                "supports it, or name an existing ReadWriteMany claim in cache.existing_claim.",
            )
        ]
    return []
