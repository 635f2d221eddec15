"""Rules between values that land in the same object: ports, environment ownership, reserved names, token
budgets and figures out of range. Pure; `cross_checks` runs when the keys are parsed, `check_token_budget`
with the preflight report (validation.check_stack)."""

from __future__ import annotations

from catalog.keda import parse_version
from config.delivery import AZURE_ACCOUNT_ENV, AZURE_ENDPOINT_ENV, STS_ENDPOINT_ENV
from config.errors import ConfigIssue, show
from config.exposure import SmokeTestConfig
from config.stack import StackConfig

# Variables the program, the device plugin or LeaderWorkerSet set in the server container, and the key that
# owns each. plan/vllm_args.py OWNED_ENV (checked in validation/vllm.py) holds vLLM's own.
PROGRAM_ENV: dict[str, str] = {
    # components/render/delivery.py server_env
    "AWS_ENDPOINT_URL": "delivery.object_storage.endpoint_url",
    "RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING": "delivery.object_storage.endpoint_url",
    AZURE_ACCOUNT_ENV: "delivery.object_storage.azure_storage_account",
    AZURE_ENDPOINT_ENV: "delivery.object_storage.endpoint_url",
    STS_ENDPOINT_ENV: "delivery.object_storage.sts_endpoint_url",
    "RUNAI_STREAMER_LOG_TO_STDERR": "delivery.mode (object_storage)",
    # The NVIDIA device plugin and container toolkit pick the GPUs a pod was granted through these
    # (NVIDIA/k8s-device-plugin, "NVIDIA_VISIBLE_DEVICES"; CUDA_VISIBLE_DEVICES narrows them in the process).
    "NVIDIA_VISIBLE_DEVICES": "gpu.count (the device plugin assigns the GPUs)",
    "CUDA_VISIBLE_DEVICES": "gpu.count (the device plugin assigns the GPUs)",
    # LeaderWorkerSet injects these into every container of a group (plan/multinode.py).
    "LWS_LEADER_ADDRESS": "engine.nnodes (LeaderWorkerSet sets it)",
    "LWS_WORKER_INDEX": "engine.nnodes (LeaderWorkerSet sets it)",
    "LWS_GROUP_SIZE": "engine.nnodes (LeaderWorkerSet sets it)",
}
# Admitted only in kube-system by default: the Priority admission plugin's SystemPriorityClasses
# (kubernetes/kubernetes plugin/pkg/admission/priority) and the default ResourceQuota limit on critical pods
# (kubernetes.io/docs/concepts/policy/resource-quotas, "Limit Priority Class consumption by default").
RESERVED_PRIORITY_CLASSES = ("system-node-critical", "system-cluster-critical")
# The largest GPU memory in any product line is under 300 GiB (AMD MI355X, NVIDIA B300: 288 GB); 1024 leaves
# room while catching the MiB figure nvidia-smi prints (81559 for an 80 GB card).
MAX_GPU_MEMORY_GIB = 1024
# KEDA 2.0 moved the API to keda.sh/v1alpha1 (kedacore/keda CHANGELOG v2.0.0); the ScaledObject rendered
# here does not exist in KEDA 1.x (keda.k8s.io).
FIRST_KEDA_MAJOR = 2


def cross_checks(cfg: StackConfig) -> list[ConfigIssue]:
    return (
        _port_issues(cfg)
        + _env_issues(cfg)
        + _priority_issues(cfg.scheduling.priority_class_name)
        + _keda_issues(cfg)
        + _gpu_memory_issues(cfg.gpu.memory_gib)
    )


def _port_issues(cfg: StackConfig) -> list[ConfigIssue]:
    if cfg.engine.nnodes == 1 or cfg.server.port != cfg.multinode.master_port:
        return []
    return [
        ConfigIssue(
            "server.port",
            f"is {cfg.server.port}, the same as multinode.master_port: the leader's API server and "
            "torch.distributed would both bind it.",
            "use another server.port (default 8000) or multinode.master_port (default 29501).",
        )
    ]


def _env_issues(cfg: StackConfig) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []
    env = cfg.vllm.extra_env
    owned = sorted(name for name in env if name in PROGRAM_ENV)
    if owned:
        owners = "; ".join(f"{name}: {PROGRAM_ENV[name]}" for name in owned)
        issues.append(
            ConfigIssue(
                "vllm.extra_env",
                f"sets {', '.join(owned)}, which the program, the GPU device plugin or LeaderWorkerSet sets itself.",
                f"remove them from vllm.extra_env; the owner of each is {owners}.",
            )
        )
    empty = sorted(name for name, value in env.items() if not name or not value)
    if empty:
        issues.append(
            ConfigIssue(
                "vllm.extra_env",
                f"has an empty name or value ({', '.join(show(name) for name in empty)}).",
                "give each variable a name and a value, or remove it.",
            )
        )
    twice = sorted(set(env) & set(cfg.multinode.nccl_env))
    if twice:
        issues.append(
            ConfigIssue(
                "multinode.nccl_env",
                f"sets {', '.join(twice)}, which vllm.extra_env sets too: the container would list it twice.",
                "keep each collective-library variable in multinode.nccl_env only.",
            )
        )
    return issues


def _priority_issues(name: str | None) -> list[ConfigIssue]:
    if name not in RESERVED_PRIORITY_CLASSES:
        return []
    return [
        ConfigIssue(
            "scheduling.priority_class_name",
            f"is {name!r}, a priority class Kubernetes reserves for system pods (admitted only in kube-system "
            "by default); the server could also preempt the cluster's own components.",
            "create a PriorityClass of your own (value below 1000000000) and name it here, or remove the key.",
        )
    ]


def _keda_issues(cfg: StackConfig) -> list[ConfigIssue]:
    version = cfg.autoscaling.keda_version
    if parse_version(version)[0] >= FIRST_KEDA_MAJOR:
        return []
    return [
        ConfigIssue(
            "autoscaling.keda_version",
            f"is {show(version)}; KEDA 1.x has no keda.sh/v1alpha1 ScaledObject, the API this program renders.",
            "install KEDA 2.16 or newer and set its version here, e.g. 2.16.",
        )
    ]


def _gpu_memory_issues(memory_gib: float | None) -> list[ConfigIssue]:
    if memory_gib is None or memory_gib <= MAX_GPU_MEMORY_GIB:
        return []
    return [
        ConfigIssue(
            "gpu.memory_gib",
            f"is {show(memory_gib)} GiB, more than any GPU has (at most {MAX_GPU_MEMORY_GIB}); nvidia-smi prints MiB.",
            f"give GiB as CUDA reports it, e.g. {memory_gib / 1024:.1f} for {memory_gib:g} MiB."
            if memory_gib < 1024 * MAX_GPU_MEMORY_GIB
            else "give the GPU's total memory in GiB, e.g. 79.1 for an 80 GB card.",
        )
    ]


def check_token_budget(smoke: SmokeTestConfig, max_model_len: int) -> list[ConfigIssue]:
    """vLLM refuses a request whose prompt plus max_tokens exceeds the context ("maximum context length")."""
    if not smoke.enabled or smoke.max_tokens < max_model_len:
        return []
    return [
        ConfigIssue(
            "smoke_test.max_tokens",
            f"is {smoke.max_tokens}, not below the context of {max_model_len} tokens (engine.max_model_len): vLLM "
            "would refuse the smoke test's request.",
            f"set smoke_test.max_tokens below {max_model_len}, e.g. 16.",
        )
    ]
