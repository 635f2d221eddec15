"""Kubernetes-only groups: `namespace`, `scheduling`, `cache`, `probes`, `server`, `security`.

Every default is declared once, here, beside its description; docs/configuration.md lists them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveFloat, model_validator

from catalog.startup_phases import PHASE_FACTOR_BOUNDS
from config.base import ConfigGroup
from config.errors import show
from config.syntax import INT32_MAX, DnsLabel, DnsSubdomain, NonNegativeInt, PositiveInt, SizeGiB, check_label


class NamespaceConfig(ConfigGroup):
    """Where everything is created. By default each stack owns a namespace of its own, `vllm-<stack>`, so two
    stacks never share one and destroying one never deletes another's objects."""

    name: DnsLabel | None = Field(
        None, description="Namespace name (RFC 1123 label); default the stack's instance name, vllm-<stack>."
    )
    create: bool | None = Field(
        None,
        description="Create the namespace (labelled pod-security.kubernetes.io/enforce: restricted and "
        "app.kubernetes.io/instance: <instance>) and delete it on destroy; default true for "
        "the stack's own vllm-<stack>, false for a named one (an existing namespace, left alone).",
    )
    retain_on_delete: bool = Field(
        False,
        description="Keep the created namespace on `pulumi destroy` (Pulumi retainOnDelete), for a named "
        "namespace other tools also put objects in.",
    )

    @property
    def creates(self) -> bool:
        """Whether this stack creates (and so owns) its namespace."""
        return self.create if self.create is not None else self.name is None


class TolerationConfig(ConfigGroup):
    """One toleration (core/v1 Toleration), e.g. an organisation's dedicated=gpu:NoSchedule pool taint."""

    key: str | None = Field(None, description="The taint key; unset with operator Exists tolerates every taint.")
    operator: Literal["Equal", "Exists"] = Field("Equal", description="Equal (key and value match) or Exists (key only).")
    value: str | None = Field(None, description="The taint value, with operator Equal.")
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = Field(
        None, description="The taint effect; unset tolerates every effect."
    )

    @model_validator(mode="after")
    def _consistent(self) -> TolerationConfig:
        if self.operator == "Exists" and self.value is not None:
            raise ValueError(f"value {show(self.value)} is set with operator Exists. Fix: remove value, or use operator Equal.")
        if self.operator == "Equal" and self.key is None:
            raise ValueError("operator Equal needs a key. Fix: set key (the taint's key), or use operator Exists.")
        if self.key is not None:
            check_label(self.key, self.value or "")
        return self

    def as_toleration(self) -> dict[str, str]:
        fields = {"key": self.key, "operator": self.operator, "value": self.value, "effect": self.effect}
        return {name: text for name, text in fields.items() if text is not None}


class SchedulingConfig(ConfigGroup):
    """How replicas spread over GPU nodes, and the pod-level settings that pick how a pod is run."""

    spread: Literal["hostname", "zone", "none"] = Field(
        "hostname",
        description="topologySpreadConstraints topologyKey when more than one replica can run: "
        "kubernetes.io/hostname (hostname), topology.kubernetes.io/zone (zone), or none.",
    )
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"] = Field(
        "DoNotSchedule",
        description="topologySpreadConstraints whenUnsatisfiable. DoNotSchedule (required): two "
        "replicas never share a node, so one node loss never takes both; "
        "ScheduleAnyway lets them pack onto one node when no other has room.",
    )
    tolerations: tuple[TolerationConfig, ...] = Field(
        (),
        description="Extra tolerations of the server, download and bucket-copy pods (after the GPU vendor's and "
        "the profile's), e.g. [{key: dedicated, value: gpu, effect: NoSchedule}]; the cluster check reads them too.",
    )
    max_skew: PositiveInt = Field(1, description="topologySpreadConstraints maxSkew.")
    priority_class_name: DnsSubdomain | None = Field(
        None,
        description="PriorityClass of the server and download pods (it must exist in the cluster); "
        "the cluster's default priority when unset.",
    )
    runtime_class_name: DnsSubdomain | None = Field(
        None,
        description="RuntimeClass of the server pods, e.g. nvidia on GPU Operator clusters whose containerd "
        "has no NVIDIA default runtime; cluster.profile's when unset.",
    )
    require_gpu_product_label: bool | None = Field(
        None,
        description="Override of cluster.gpu_label: true requires nvidia.com/gpu.product (GPU Feature Discovery), "
        "false selects no product (gpu.node_selector must name the GPU); unset follows cluster.profile.",
    )


class CacheConfig(ConfigGroup):
    """The model cache volume and the Job that fills it."""

    size_gib: SizeGiB | None = Field(
        None, description="PVC size in GiB; defaults to the weights on disk (plus any draft model) plus headroom_percent."
    )
    headroom_percent: float = Field(
        25.0, ge=0, le=500, description="Extra room over the weights for tokenizer, config and partial downloads."
    )
    storage_class_name: DnsSubdomain | None = Field(None, description="StorageClass; the cluster default when unset.")
    provisioned_throughput_mib_per_s: int | None = Field(
        None,
        ge=125,
        le=1000,
        description="Create an EBS gp3 StorageClass with this read throughput (its `throughput` parameter, MiB/s; "
        "the baseline is 125) for the model volume, and budget the load with it; eks-karpenter profile, with "
        "cache.storage_class_name unset.",
    )
    access_mode: Literal["ReadWriteMany", "ReadWriteOnce"] | None = Field(
        None,
        description="PVC access mode; unset: ReadWriteOnce when at most one replica can run or each replica "
        "owns its claim, ReadWriteMany for a shared volume (config/delivery.py volume_for).",
    )
    existing_claim: DnsSubdomain | None = Field(
        None, description="Use this existing PVC instead of creating one (required with model.local_path)."
    )
    download_max_workers: PositiveInt = Field(
        8, description="Parallel file downloads in the pre-download Job (huggingface_hub max_workers)."
    )
    download_throughput_gib_per_s: PositiveFloat = Field(
        0.1, description="Expected download speed; sizes the Job's Pulumi timeout."
    )
    download_ignore_patterns: tuple[str, ...] = Field(
        ("original/*", "consolidated*", "*.pth"),
        description="Files not downloaded: duplicate checkpoints vLLM does not load (Llama original/, Mistral consolidated).",
    )
    download_cpu: str = Field("2", description="CPU request = limit of the download Job.")
    download_memory_gib: SizeGiB = Field(4.0, description="Memory request = limit of the download Job, GiB.")


def _phase_factor(phase: str) -> float | None:
    return Field(  # type: ignore[no-any-return]
        None,
        ge=PHASE_FACTOR_BOUNDS[0],
        le=PHASE_FACTOR_BOUNDS[1],
        description=f"Measured {phase} over the fitted one on these nodes (the phase report prints it); unset: 1.",
    )


class PhaseFactorsConfig(ConfigGroup):
    """What this stack's nodes take for each fixed start-up phase as a multiple of the fit on public start-ups
    (catalog/startup_phases.py FIXED_PHASES): a host's CPUs and disks make the host-bound phases faster or slower
    for every model alike. A start on these nodes measures them (`python -m preflight STACK --log FILE`, the
    `startupPhases` output), for any stack whose pods land there."""

    process_start: float | None = _phase_factor("process start")
    compile: float | None = _phase_factor("torch.compile (a compile-cache miss)")
    cuda_graphs: float | None = _phase_factor("CUDA-graph capture")
    kv_cache_init: float | None = _phase_factor("KV-cache initialisation")
    api_ready: float | None = _phase_factor("API-server start")

    def given(self) -> dict[str, float]:
        """The factors the stack sets, by phase."""
        return {phase: factor for phase, factor in self.model_dump().items() if factor is not None}


class ProbesConfig(ConfigGroup):
    """Probe timing; the startup budget is computed from the model size."""

    load_throughput_gib_per_s: PositiveFloat | None = Field(
        None,
        description="Measured weights read per second, per replica; unset: the delivery mode's sourced "
        "default (docs/model-delivery.md).",
    )
    engine_start_seconds: PositiveInt | None = Field(
        None,
        description="Process and engine start of one GPU's pod, besides the weight load (imports, workers, KV cache, "
        "API server); unset: fitted for the model (docs/calibration.md).",
    )
    per_gpu_start_seconds: NonNegativeInt | None = Field(
        None,
        description="Added per tensor/pipeline-parallel worker beyond the first (worker spawn, NCCL init); unset: fitted.",
    )
    cuda_graph_capture_seconds: NonNegativeInt | None = Field(
        None,
        description="torch.compile and CUDA-graph capture after loading; 0 is used with engine.enforce_eager; unset: "
        "fitted for the model's layers and the graphs captured.",
    )
    phase_factors: PhaseFactorsConfig = Field(
        default_factory=PhaseFactorsConfig,
        description="Measured on these nodes: each fitted start-up phase's multiple (docs/calibration.md).",
    )
    safety_factor: float = Field(1.5, ge=1, le=10, description="Multiplier over the estimate.")
    startup_seconds: PositiveInt | None = Field(
        None, description="Override: the startup budget in seconds instead of the computed one."
    )
    startup_period_seconds: PositiveInt = Field(10, description="startupProbe periodSeconds.")
    readiness_period_seconds: PositiveInt = Field(10, description="readinessProbe periodSeconds.")
    readiness_timeout_seconds: int = Field(  # an int32 in the API (core/v1 Probe), as every probe field
        5, ge=5, le=INT32_MAX, description="readinessProbe timeoutSeconds (>= 5: a busy server answers slowly)."
    )
    readiness_failure_threshold: PositiveInt = Field(3, description="readinessProbe failureThreshold.")
    liveness_period_seconds: PositiveInt = Field(30, description="livenessProbe periodSeconds.")
    liveness_timeout_seconds: int = Field(15, ge=5, le=INT32_MAX, description="livenessProbe timeoutSeconds.")
    liveness_failure_threshold: PositiveInt = Field(4, description="livenessProbe failureThreshold (restart after ~2 min).")


class ServerConfig(ConfigGroup):
    """The vLLM container."""

    port: int = Field(8000, gt=0, le=65535, description="Container and Service port of the OpenAI server.")
    cpu: str | None = Field(None, description="CPU request = limit; defaults to 2 + 4 per GPU.")
    memory_gib: SizeGiB | None = Field(
        None, description="Memory request = limit without /dev/shm, GiB; defaults to 16 + 12 per GPU."
    )
    shm_size_gib: SizeGiB | None = Field(
        None, description="/dev/shm (memory-backed) size, GiB; defaults to 2 per GPU (NCCL buffers for tensor parallel)."
    )
    home_size_gib: SizeGiB = Field(10.0, description="Writable HOME (vLLM, Triton and torch compile caches), GiB.")
    tmp_size_gib: SizeGiB = Field(4.0, description="Writable /tmp, GiB.")
    pre_stop_sleep_seconds: NonNegativeInt = Field(
        10, description="preStop sleep: time for endpoints to drop the pod before SIGTERM."
    )
    termination_grace_period_seconds: PositiveInt = Field(
        180,
        description="terminationGracePeriodSeconds: the preStop sleep, then vLLM's drain of the answers in flight "
        "(--shutdown-timeout: this less the sleep and 15 s to exit), then SIGKILL.",
    )
    prepull_image: bool = Field(
        False,
        description="A DaemonSet on the GPU nodes pulls the vLLM image and keeps it (a sleeping container, no GPU), "
        "so a replica on a node that joined earlier finds the image there.",
    )
    image_pull_seconds: PositiveInt | None = Field(
        None,
        description="Time to pull the vLLM image on a node without it, added to the Pulumi timeout; unset: the "
        "release's compressed image size (catalog/vllm_images.py) / server.registry_throughput_mib_per_s.",
    )
    registry_throughput_mib_per_s: PositiveFloat = Field(
        50.0,
        description="Image pull rate of one node from the registry, MiB/s, unpacking included (an assumption: "
        "measure a pull and set it, or set server.image_pull_seconds).",
    )
    image_pull_secrets: tuple[DnsSubdomain, ...] = Field(
        (),
        description="Secrets (kubernetes.io/dockerconfigjson, in the stack's namespace) for pulling the vLLM "
        "image from a private registry; set on the server and download pods.",
    )


class SecurityConfig(ConfigGroup):
    """Pod security (Pod Security Standards "restricted") and the API key."""

    require_api_key: bool = Field(False, description="Require an API key on /v1 (secret api_key).")
    # The image needs no particular UID (HOME is a volume). 10000 and above: checkov CKV_K8S_40, "run as a high
    # UID to avoid host conflict" (bridgecrewio/checkov checkov/kubernetes/checks/resource/k8s/RootContainersHighUID.py).
    run_as_user: PositiveInt = Field(10001, description="runAsUser (non-root, a high UID no host user has).")
    run_as_group: PositiveInt = Field(10001, description="runAsGroup.")
    fs_group: PositiveInt = Field(10001, description="fsGroup: group ownership of the cache volume.")
