"""Rules of the `delivery` group against the cache volume, the release and the draft model."""

from __future__ import annotations

import math
from ipaddress import ip_network

from catalog.private_endpoints import private_endpoint
from catalog.storage import WELL_KNOWN_CLASSES
from cluster.storage import known_read_write_once_only
from config.delivery import CacheVolume, DeliveryMode, ObjectStorageConfig, mode_for, volume_for
from config.errors import ConfigIssue, show
from config.network import PRIVATE_NETWORK_CIDRS, NetworkPolicyConfig
from config.stack import StackConfig
from config.syntax import INT32_MAX
from plan.cost import replica_bounds
from plan.delivery import (
    GP3_MAX_IOPS_PER_GIB,
    IDENTITY_ANNOTATIONS,
    bucket_identity,
    exchanges_irsa_token,
    gp3_iops,
    gp3_min_size_gib,
    reads_with_node_credentials,
    sts_endpoint_url,
)
from preflight.delivery import DeliveryBudget
from validation.credentials import redacted


# The rules' view of the plan's delivery decisions (plan/delivery.py): the same pure functions, before the plan.
def most_replicas(cfg: StackConfig) -> int:
    return replica_bounds(cfg.replicas, cfg.autoscaling)[1]


def delivery_mode(cfg: StackConfig) -> DeliveryMode:
    cache = cfg.cache
    return mode_for(cfg.delivery.mode, cfg.engine.nnodes, most_replicas(cfg), cache.storage_class_name, cache.existing_claim)


def effective_volume(cfg: StackConfig) -> CacheVolume | None:
    cache = cfg.cache
    return volume_for(delivery_mode(cfg), most_replicas(cfg), cfg.engine.nnodes, cache.access_mode, cache.storage_class_name)


def cross_checks(cfg: StackConfig) -> list[ConfigIssue]:
    if cfg.target != "kubernetes":
        return []
    mode = delivery_mode(cfg)
    issues = _shared_volume_issues(cfg) if mode == "shared_volume" else []
    if mode == "per_replica_volume" and cfg.cache.existing_claim is not None:
        issues.append(
            _issue(
                "cache.existing_claim",
                f"is {cfg.cache.existing_claim!r}, but delivery.mode per_replica_volume gives every replica its own new claim.",
                "remove cache.existing_claim, or set delivery.mode: shared_volume.",
            )
        )
    if mode == "per_replica_volume" and cfg.cache.access_mode == "ReadWriteMany":
        issues.append(
            _issue(
                "cache.access_mode", "is ReadWriteMany, but per-replica claims are ReadWriteOnce.", "remove cache.access_mode."
            )
        )
    issues += _provisioned_class_issues(cfg) + _provisioned_size_issues(cfg) + _node_local_issues(cfg, mode)
    return issues + (_object_storage_issues(cfg) if mode == "object_storage" else _no_bucket(cfg))


def _node_local_issues(cfg: StackConfig, mode: DeliveryMode) -> list[ConfigIssue]:
    """A node-local class pins each claim to one node: only per-replica claims, on a named class, and no spread
    that could refuse the only node a returning replica's claim allows."""
    medium = cfg.delivery.node_local
    if medium is None:
        return []
    if mode != "per_replica_volume":
        return [
            _issue(
                "delivery.node_local",
                f"is {medium}, but delivery.mode is {mode}: one claim on one node's disk would hold every replica "
                "on that node (and object storage has no volume).",
                "set delivery.mode: per_replica_volume (each replica fills its own node's claim), "
                "or remove delivery.node_local.",
            )
        ]
    issues = []
    if not cfg.cache.storage_class_name:
        issues.append(
            _issue(
                "cache.storage_class_name",
                f"is unset, but delivery.node_local is {medium}: the cluster's default class is a network disk, not "
                "a node-local one.",
                "set cache.storage_class_name to the node-local class (e.g. local-path, openebs-hostpath, a local "
                "static provisioner's class with volumeBindingMode: WaitForFirstConsumer).",
            )
        )
    scheduling = cfg.scheduling
    if scheduling.spread == "zone" and scheduling.when_unsatisfiable == "DoNotSchedule":
        issues.append(
            _issue(
                "scheduling.when_unsatisfiable",
                "is DoNotSchedule with scheduling.spread zone, but delivery.node_local pins each replica to the node "
                "holding its claim: when the zones' counts drift (a lost node's replica refilled in another zone), "
                "a returning replica's only node can break the skew and the pod stays Pending.",
                "set scheduling.when_unsatisfiable: ScheduleAnyway, or scheduling.spread: hostname.",
            )
        )
    return issues


def _provisioned_class_issues(cfg: StackConfig) -> list[ConfigIssue]:
    """The created class is EBS gp3: ReadWriteOnce, on EKS, and in place of a named class."""
    asked = cfg.cache.provisioned_throughput_mib_per_s
    problem = None if asked is None else _provisioned_class_problem(cfg)
    if problem is None:
        return []
    fix = (
        "remove cache.provisioned_throughput_mib_per_s, or use delivery.mode per_replica_volume on cluster.profile "
        "eks-karpenter without cache.storage_class_name; elsewhere name a faster class in cache.storage_class_name."
    )
    return [_issue("cache.provisioned_throughput_mib_per_s", f"is {asked}, but {problem}", fix)]


def _provisioned_size_issues(cfg: StackConfig) -> list[ConfigIssue]:
    """A stated cache.size_gib too small for the created class's IOPS (the planned size grows on its own)."""
    size, asked = cfg.cache.size_gib, cfg.cache.provisioned_throughput_mib_per_s
    if size is None or asked is None or math.ceil(size) >= gp3_min_size_gib(asked):
        return []
    return [
        _issue(
            "cache.size_gib",
            f"is {show(size)}, but the gp3 class cache.provisioned_throughput_mib_per_s creates carries "
            f"{gp3_iops(asked)} IOPS, and EBS allows at most {GP3_MAX_IOPS_PER_GIB} IOPS per GiB: the volume would "
            "never be created and the claim would stay Pending.",
            f"set cache.size_gib to at least {gp3_min_size_gib(asked)}, or remove it (the claim is then sized to fit).",
        )
    ]


def _provisioned_class_problem(cfg: StackConfig) -> str | None:
    volume = effective_volume(cfg)
    if volume is None:
        return "delivery.mode is object_storage: there is no volume."
    if cfg.cluster.profile != "eks-karpenter":
        return f"cluster.profile is {cfg.cluster.profile}: the class it creates is EBS gp3 (ebs.csi.aws.com)."
    if cfg.cache.storage_class_name:
        return f"cache.storage_class_name is {cfg.cache.storage_class_name!r}: the stack would create its own class."
    if cfg.cache.existing_claim:
        return (
            f"cache.existing_claim is {show(cfg.cache.existing_claim)}: that claim keeps the class it was made with, "
            "so the class the stack would create serves no claim, and the load would be budgeted at a rate the "
            "claim may not have."
        )
    if volume.access_mode == "ReadWriteMany":
        return "the model volume is ReadWriteMany, which EBS gp3 does not offer."
    return None


def _shared_volume_issues(cfg: StackConfig) -> list[ConfigIssue]:
    volume = effective_volume(cfg)
    if volume is None or cfg.cache.existing_claim is not None:
        return []
    if volume.access_mode == "ReadWriteMany" and not volume.storage_class_name:
        return [
            _issue(
                "cache.storage_class_name",
                "is unset, but the model cache claim asks for ReadWriteMany, and the default classes of EKS (EBS), "
                "GKE (PD) and AKS (Azure Disk) are ReadWriteOnce only: the claim would stay Pending.",
                "set cache.storage_class_name to a ReadWriteMany class (efs-sc, standard-rwx, azurefile-csi, cephfs), "
                "or set delivery.mode: per_replica_volume.",
            )
        ]
    if volume.access_mode == "ReadWriteMany" and known_read_write_once_only(volume.storage_class_name):
        name = volume.storage_class_name or ""
        return [
            _issue(
                "cache.storage_class_name",
                f"is {show(name)}, a class the providers create on {WELL_KNOWN_CLASSES[name].provisioner}, which gives "
                "ReadWriteOnce only, but the model cache claim asks for ReadWriteMany (one claim several replicas or "
                "a multi-node group's ranks share): the claim would stay Pending.",
                "set delivery.mode: per_replica_volume (a claim of this class per replica), or cache.storage_class_name "
                "to a ReadWriteMany class (efs-sc, standard-rwx, azurefile-csi, cephfs).",
            )
        ]
    return []


def _object_storage_issues(cfg: StackConfig) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []
    if cfg.delivery.object_storage is None:
        issues.append(
            _issue(
                "delivery.object_storage",
                "is unset, but delivery.mode is object_storage.",
                "set delivery.object_storage.uri to the bucket folder holding the safetensors, e.g. s3://models/llama-70b/.",
            )
        )
    if cfg.vllm.version != "0.33.0":
        # Only 0.33.0's loader was read (runai_utils.py SUPPORTED_SCHEMES); older URI support is unverified.
        issues.append(
            _issue(
                "vllm.version",
                f"is {cfg.vllm.version!r}; object_storage is verified with vLLM 0.33.0 (transformers_utils/runai_utils.py).",
                "set vllm.version: 0.33.0, or another mode.",
            )
        )
    if cfg.cache.existing_claim or cfg.model.local_path:
        issues.append(
            _issue(
                "delivery.mode",
                "is object_storage, but cache.existing_claim or model.local_path points at a volume.",
                "remove them, or set delivery.mode: shared_volume.",
            )
        )
    bucket = cfg.delivery.object_storage
    if bucket is not None and bucket.copy_from_hub and bucket.scheme != "s3":
        issues.append(
            _issue(
                "delivery.object_storage.copy_from_hub",
                f"is true, but {bucket.shown_uri} is not "
                "s3://: the copy Job uploads with boto3, the S3 client in the vLLM image.",
                "copy the snapshot yourself (docs/model-delivery.md) and set copy_from_hub: false.",
            )
        )
    if bucket is not None and bucket.copy_from_hub and not cfg.model.revision:
        issues.append(
            _issue(
                "model.revision",
                "is unset, but delivery.object_storage.copy_from_hub copies one revision into a folder named after it.",
                "set model.revision to a commit sha.",
            )
        )
    if bucket is not None:
        issues += _scheme_issues(bucket) + _sts_issues(bucket)
    if bucket is not None and cfg.network_policy.enabled:
        issues += _credential_issues(bucket) + _private_endpoint_issues(bucket, cfg.network_policy)
    spec = cfg.engine.speculative
    if spec is not None and spec.model:
        issues.append(
            _issue(
                "engine.speculative.model",
                f"is {spec.model!r}, but with object_storage the server has no Hub cache to load a draft model from.",
                "use a draft-free method (ngram), or delivery.mode shared_volume / per_replica_volume.",
            )
        )
    return issues


def _scheme_issues(bucket: ObjectStorageConfig) -> list[ConfigIssue]:
    """What each scheme's client needs beyond the URI (docs/sources.md §S12): az:// an account, which its URI does
    not name; gs:// a key file or Application Default Credentials, which a Secret's environment is neither of."""
    scheme, account = bucket.scheme, bucket.azure_storage_account
    issues = []
    if scheme == "az" and account is None:
        issues.append(
            _issue(
                "delivery.object_storage.azure_storage_account",
                f"is unset, but {bucket.shown_uri} is az://, which names a container and no storage account: the "
                "streamer's Azure client does not start without AZURE_STORAGE_ACCOUNT_NAME.",
                "set delivery.object_storage.azure_storage_account to the account holding the container.",
            )
        )
    if account is not None and scheme != "az":
        issues.append(
            _issue(
                "delivery.object_storage.azure_storage_account",
                f"is {show(account)}, but {bucket.shown_uri} is not az://: only the Azure client reads an account.",
                "remove delivery.object_storage.azure_storage_account.",
            )
        )
    if scheme == "gs" and bucket.credentials_secret is not None and bucket_identity(bucket) is None:
        issues.append(
            _issue(
                "delivery.object_storage.credentials_secret",
                f"is {show(bucket.credentials_secret)}, but {bucket.shown_uri} is gs://: the streamer's GCS client reads a "
                "service-account key file or Application Default Credentials, and a Secret's keys reach the server "
                "only as environment variables.",
                "use GKE Workload Identity (service_account_annotations iam.gke.io/gcp-service-account, or "
                "workload_identity: gke-workload-identity) and remove credentials_secret; or read the bucket "
                "through its S3 API (s3:// with endpoint_url https://storage.googleapis.com and HMAC keys in the Secret).",
            )
        )
    return issues


def _sts_issues(bucket: ObjectStorageConfig) -> list[ConfigIssue]:
    """IRSA with an endpoint_url (plan/delivery.py `exchanges_irsa_token`): botocore sends the token exchange to the
    bucket's endpoint unless AWS_ENDPOINT_URL_STS names STS, which the program derives from an AWS S3 endpoint's
    region or takes as stated."""
    key = "delivery.object_storage.sts_endpoint_url"
    exchanges = exchanges_irsa_token(bucket)
    if bucket.sts_endpoint_url is not None and not exchanges:
        return [
            _issue(
                key,
                f"is {show(redacted(bucket.sts_endpoint_url))}, but only IRSA's token exchange reads it: an s3:// "
                "bucket with an endpoint_url, read with IRSA and no credentials_secret.",
                "remove delivery.object_storage.sts_endpoint_url.",
            )
        ]
    if not exchanges or sts_endpoint_url(bucket) is not None:
        return []
    endpoint = show(redacted(bucket.endpoint_url or ""))
    return [
        _issue(
            key,
            f"is unset, but the server reads {bucket.shown_uri} with IRSA through {endpoint}, which is no AWS S3 "
            "endpoint the region can be read from: boto3 (vLLM's listing and config pull) would send the token "
            "exchange to AWS_ENDPOINT_URL, that endpoint, which answers S3 and not STS.",
            "set delivery.object_storage.sts_endpoint_url to the region's STS (https://sts.REGION.amazonaws.com, the "
            "name an STS interface endpoint answers with private DNS); a store outside AWS (MinIO, Ceph RGW) takes no "
            "AWS role session: give its keys in credentials_secret and drop the IRSA annotation.",
        )
    ]


def _private_endpoint_issues(bucket: ObjectStorageConfig, policy: NetworkPolicyConfig) -> list[ConfigIssue]:
    """An endpoint_url naming a private endpoint resolves to the network's private addresses, which the Hub rule
    carves out (network_policy.hub_egress_except_cidrs): without private_endpoint_cidrs every read is dropped, and
    the first one waits out the SDK's connect timeouts (docs/model-delivery.md) before the pod restarts."""
    if policy.private_endpoint_cidrs or _hub_rule_admits_private_addresses(policy):
        return []
    urls = {"endpoint_url": bucket.endpoint_url, "sts_endpoint_url": bucket.sts_endpoint_url}
    private = [(key, url, kind) for key, url in urls.items() if url and (kind := private_endpoint(url))]
    return [
        _issue(
            "network_policy.private_endpoint_cidrs",
            f"is empty, but delivery.object_storage.{key} {show(redacted(url))} is {kind}, whose addresses are "
            "private ones in the cluster's network, which the egress policy's Hub rule carves out: every request to "
            "it would be dropped.",
            "set network_policy.private_endpoint_cidrs to the endpoint's subnets (or the VPC / virtual network's CIDR).",
        )
        for key, url, kind in private[:1]
    ]


def _hub_rule_admits_private_addresses(policy: NetworkPolicyConfig) -> bool:
    """The Hub rule reaches some private range: a policy whose hub_egress_except_cidrs no longer carves them out."""
    ranges = [ip_network(cidr) for cidr in PRIVATE_NETWORK_CIDRS]
    hub = [ip_network(cidr) for cidr in policy.hub_egress_cidrs]
    carved = [ip_network(cidr) for cidr in policy.hub_egress_except_cidrs]
    return any(
        any(r.version == h.version and r.overlaps(h) for h in hub)
        and not any(r.version == c.version and r.subnet_of(c) for c in carved)  # type: ignore[arg-type]
        for r in ranges
    )


def _credential_issues(bucket: ObjectStorageConfig) -> list[ConfigIssue]:
    """A bucket read with neither a Secret nor a workload identity: every cloud SDK's chain then asks the node's
    instance metadata service, which the server's egress policy keeps closed (docs/sources.md §S12)."""
    if not reads_with_node_credentials(bucket):
        return []
    annotations = ", ".join(IDENTITY_ANNOTATIONS)
    return [
        _issue(
            "delivery.object_storage",
            f"reads {bucket.shown_uri} with neither credentials_secret nor a workload identity: the streamer's SDK "
            "then asks the node's instance metadata service (169.254.169.254) for credentials, which network_policy "
            "keeps closed, so the first read fails.",
            f"annotate the server's ServiceAccount in delivery.object_storage.service_account_annotations ({annotations}), "
            "or name the identity in delivery.object_storage.workload_identity (eks-pod-identity; gke-workload-identity "
            "for a role granted to the ServiceAccount itself), or set delivery.object_storage.credentials_secret.",
        )
    ]


def _no_bucket(cfg: StackConfig) -> list[ConfigIssue]:
    if cfg.delivery.object_storage is None:
        return []
    return [
        _issue(
            "delivery.object_storage",
            f"is set, but delivery.mode is {delivery_mode(cfg)}.",
            "set delivery.mode: object_storage, or remove delivery.object_storage.",
        )
    ]


def _issue(key: str, problem: str, fix: str) -> ConfigIssue:
    return ConfigIssue(key, problem, fix)


def startup_probe_issues(budget: DeliveryBudget | None) -> list[ConfigIssue]:
    """A fixed probes.startup_seconds shorter than the load it must cover (weights / the class's throughput,
    engine start, compile and graphs, before the safety factor): the probe would restart the pod every time."""
    if budget is None or not budget.probe.overridden:
        return []
    probe = budget.probe
    needed = probe.load_seconds + probe.engine_start_seconds + probe.cuda_graph_seconds
    if probe.total_seconds >= needed:
        return []
    return [
        _issue(
            "probes.startup_seconds",
            f"is {probe.total_seconds}, but reading {budget.weights_gib:.1f} GiB at {budget.throughput.mib_per_s:g} MiB/s "
            f"({budget.throughput.source}) takes {probe.load_seconds:.0f} s, {needed:.0f} s with the engine start and "
            "CUDA graphs: the startup probe would restart the pod before it is ready (CrashLoopBackOff).",
            f"remove probes.startup_seconds (the budget follows the throughput), or raise it to at least {math.ceil(needed)}, "
            "or read faster: cache.storage_class_name naming a gp3 class with a `throughput` parameter (up to 1000), "
            "or delivery.mode: object_storage.",
        )
    ]


# The Deployment's progressDeadlineSeconds is the first start plus the pod's start (plan/delivery.py rollout_seconds);
# the API types declare it an int32 (k8s.io/api apps/v1 DeploymentSpec), so a larger first start is refused by the API
# server, not by the preflight.
def rollout_deadline_issues(cfg: StackConfig, budget: DeliveryBudget, deadline: int, wait: int) -> list[ConfigIssue]:
    """A first start too long for progressDeadlineSeconds, naming the key behind its largest term, or a whole
    rollout too long for Pulumi's timeout. `deadline`: the plan's DeliveryPlan.rollout_seconds; `wait`: the longest
    Pulumi wait (the rollout gate's RolloutGatePlan.pulumi_timeout_seconds, or a LeaderWorkerSet's own update)."""
    if cfg.target != "kubernetes":
        return []
    if deadline > INT32_MAX:
        key, fix = _largest_start_term(cfg, budget)
        value = _value_of(cfg, key)
        return [
            _issue(
                key,
                f"is {show(value) if value is not None else 'unset'}: the first start's largest term, which with the "
                f"pod's start makes the Deployment's progressDeadlineSeconds {show(deadline)} s, more than that int32 "
                f"field holds ({INT32_MAX}); the API server would refuse the workload.",
                f"{fix}, so that progressDeadlineSeconds stays at most {INT32_MAX}.",
            )
        ]
    return _pulumi_wait_issues(cfg, budget, wait)


# Pulumi waits for the whole rollout (the rollout gate's Job: components/rollout_gate.py), its timeout written in
# whole minutes. The engine reads
# a custom timeout with Go's time.ParseDuration (pulumi/pulumi pkg/resource/deploy/source_eval.go
# @00cc158c0bad3e045c330061699e2b5cbda7680e generateTimeoutInSeconds), whose int64 of nanoseconds ends at 2^63-1.
PULUMI_TIMEOUT_MAX_SECONDS = (2**63 - 1) // (60 * 10**9) * 60


def _pulumi_wait_issues(cfg: StackConfig, budget: DeliveryBudget, wait: int) -> list[ConfigIssue]:
    if wait <= PULUMI_TIMEOUT_MAX_SECONDS:
        return []
    key = "autoscaling.max_replica_count" if cfg.autoscaling.enabled else "replicas"
    value = cfg.autoscaling.max_replica_count if cfg.autoscaling.enabled else cfg.replicas
    return [
        _issue(
            key,
            f"is {show(value)}: Pulumi waits for every replica's first start one after another, {show(wait)} s, more "
            f"than a Pulumi timeout holds ({PULUMI_TIMEOUT_MAX_SECONDS} s); pulumi up would refuse the workload.",
            f"lower {key}, or shorten the first start ({_largest_start_term(cfg, budget)[0]}).",
        )
    ]


def _largest_start_term(cfg: StackConfig, budget: DeliveryBudget) -> tuple[str, str]:
    """The key whose term weighs most in the first start, and how to shrink it."""
    probe, factor = budget.probe, budget.probe.safety_factor
    candidates: list[tuple[float, str, str]] = [
        (budget.image_pull_seconds, "server.image_pull_seconds", "set server.image_pull_seconds to the seconds a pull takes"),
        (
            budget.download_seconds * factor,
            "cache.download_throughput_gib_per_s",
            "set cache.download_throughput_gib_per_s to the rate a download reaches",
        ),
    ]
    if cfg.server.image_pull_seconds is None:
        candidates[0] = (candidates[0][0], "server.registry_throughput_mib_per_s", "raise server.registry_throughput_mib_per_s")
    if probe.overridden:
        candidates.append((probe.total_seconds, "probes.startup_seconds", "lower probes.startup_seconds, or remove it"))
    else:
        engine_key = "probes.engine_start_seconds"
        if cfg.probes.engine_start_seconds is None and cfg.probes.per_gpu_start_seconds is not None:
            engine_key = "probes.per_gpu_start_seconds"
        candidates += [
            (
                probe.load_seconds * factor,
                "probes.load_throughput_gib_per_s",
                "set probes.load_throughput_gib_per_s to the rate measured",
            ),
            (probe.engine_start_seconds * factor, engine_key, f"lower {engine_key}, or remove it (fitted)"),
            (
                probe.cuda_graph_seconds * factor,
                "probes.cuda_graph_capture_seconds",
                "lower probes.cuda_graph_capture_seconds, or remove it (fitted)",
            ),
        ]
    _, key, fix = max(candidates, key=lambda candidate: candidate[0])
    return key, fix


def _value_of(cfg: StackConfig, key: str) -> object:
    group, _, name = key.partition(".")
    return getattr(getattr(cfg, group), name)
