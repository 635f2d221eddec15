"""The ONE adapter between the e2e tier and the project's renderers: everything the tier runs comes from here.

The render entry points are being restructured; when they move, only this module follows them. It renders a
test stack (the dev stack, with an API key and KEDA on, and few batch slots so a small burst queues) for both
targets and hands back plain data: the Kubernetes container's command/args/env and startup probe, the
Docker container's entrypoint/command/env and health-check start period, the PrometheusRule groups, the
KEDA trigger queries and the dashboard's queries.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog.vllm_metrics import VersionMetrics, metrics_for
from components.render import docker as docker_render
from components.render.manifests import stack_manifests
from components.render.security import API_KEY_KEY, API_KEY_PREVIOUS_KEY
from config.sources import read_stack_file
from config.stack import StackConfig
from plan.lora import hub_snapshot
from plan.names import HF_HOME, PORT_NAME
from plan.scaling import Workload, hpa_name
from preflight.report import PreflightReport
from tests.kubernetes_fixtures import plan_of
from validation import Outcome, assess
from validation.keys import validate_config

REPO = Path(__file__).resolve().parents[2]
INSTANCE = "llama"
SCRAPE_PORT_NAME = PORT_NAME  # the port the ServiceMonitor endpoint names, so its `endpoint` label
# Few batch slots, so a burst of a few dozen requests keeps a queue for several scrapes on one CPU core.
MAX_NUM_SEQS = 4
CHANGES: dict[str, Any] = {
    "engine": {"max_num_seqs": MAX_NUM_SEQS},
    "security": {"require_api_key": True},
}
# Every trigger the config offers, so each rendered KEDA query meets the real series.
KUBERNETES_CHANGES: dict[str, Any] = {"autoscaling": {"enabled": True, "triggers": ["queue", "running", "kv_cache", "latency"]}}


@dataclass(frozen=True)
class Launch:
    """A rendered server: what the container runtime would exec, and how long it may take to be healthy."""

    command: list[str]  # the entrypoint (Kubernetes `command`, Docker `entrypoints`)
    args: list[str]  # the vLLM arguments (Kubernetes `args`, Docker `command`)
    env: dict[str, str]  # plain values; the API key where the runtime injects it from the secret
    startup_budget_seconds: int  # startupProbe failureThreshold x periodSeconds, or Docker's start period
    port: int
    served_model_name: str
    env_from: tuple[str, ...] = ()  # the Secrets whose keys the kubelet adds to env (envFrom secretRef)


@dataclass(frozen=True)
class Monitoring:
    workload: Workload
    service: str  # the Service (and job label) name the ServiceMonitor scrapes through
    rule_groups: list[dict[str, Any]]
    keda_queries: dict[str, str]  # trigger name -> query
    dashboard_queries: list[str]
    metrics: VersionMetrics


def _merge(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in changes.items():
        merged[key] = _merge(merged.get(key, {}), value) if isinstance(value, dict) else value
    return merged


def stack_for_tests(
    stack_file: str, changes: dict[str, Any], secrets: frozenset[str] = frozenset({"api_key", "hf_token"})
) -> tuple[StackConfig, PreflightReport]:
    raw, _, _ = read_stack_file(REPO / "stacks" / stack_file)
    cfg = validate_config(_merge(raw, {**CHANGES, **changes}))
    verdict = assess(cfg, secrets)  # the program's own validation: the stack must deploy
    assert verdict.outcome is Outcome.FITS and verdict.report is not None, verdict.issues
    return cfg, verdict.report


def kubernetes_stack() -> tuple[StackConfig, PreflightReport]:
    return stack_for_tests("Pulumi.dev.yaml", KUBERNETES_CHANGES)


def docker_stack() -> tuple[StackConfig, PreflightReport]:
    return stack_for_tests("Pulumi.docker-8b.yaml", {})


def _objects(cfg: StackConfig, report: PreflightReport, api_key_previous: bool = False) -> list[dict[str, Any]]:
    """Every object the program registers for the stack (components/render/manifests.py stack_manifests)."""
    return stack_manifests(plan_of(cfg, INSTANCE, api_key_previous=api_key_previous))


def _one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind)


def _deployment(cfg: StackConfig, report: PreflightReport) -> dict[str, Any]:
    """The server workload: a Deployment, or a StatefulSet when each replica owns its volume."""
    return next(o for o in _objects(cfg, report) if o["kind"] in ("Deployment", "StatefulSet"))


def _container_env(container: dict[str, Any], keys: dict[str, str]) -> dict[str, str]:
    """`keys`: the API-key Secret's values by key; the kubelet resolves an env var's secretKeyRef from them."""
    env: dict[str, str] = {}
    for item in container["env"]:
        ref = item.get("valueFrom", {}).get("secretKeyRef", {})
        if "value" in item:
            env[item["name"]] = item["value"]
        elif ref.get("name", "").endswith("-api-key") and ref.get("key") in keys:
            env[item["name"]] = keys[ref["key"]]
        else:
            raise AssertionError(f"the e2e tier cannot resolve env {item}")
    return env


def kubelet_expand(arg: str, env: dict[str, str]) -> str:
    """An argument as the kubelet hands it to the container: `$(NAME)` of a variable the container defines becomes
    its value, `$$` a `$`, anything else stays (kubernetes third_party/forked/golang/expansion/expand.go)."""
    out, at = [], 0
    while at < len(arg):
        if arg.startswith("$$", at):
            out.append("$")
            at += 2
        elif arg.startswith("$(", at) and (end := arg.find(")", at)) != -1:
            name = arg[at + 2 : end]
            out.append(env.get(name, arg[at : end + 1]))
            at = end + 1
        else:
            out.append(arg[at])
            at += 1
    return "".join(out)


def kubernetes_launch(api_key: str) -> Launch:
    cfg, report = kubernetes_stack()
    return _server_launch(cfg, report, api_key)


def docker_launch(api_key: str) -> Launch:
    """As components/docker_host.py registers it: the rendered spec, plus VLLM_API_KEY from the secret."""
    cfg, report = docker_stack()
    spec = docker_render.render_container(plan_of(cfg, INSTANCE).server, with_hf_token=False)
    env = dict(item.split("=", 1) for item in spec["envs"]) | {"VLLM_API_KEY": api_key}
    start_period = int(spec["healthcheck"]["start_period"].removesuffix("s"))
    return Launch(
        command=list(spec["entrypoints"]),
        args=list(spec["command"]),
        env=env,
        startup_budget_seconds=start_period,
        port=spec["ports"][0]["internal"],
        served_model_name=report.resolved.served_model_name,
    )


def monitoring() -> Monitoring:
    """Rules, KEDA queries and dashboard for the Kubernetes test stack, read off the objects the program registers."""
    cfg, report = kubernetes_stack()
    objects = _objects(cfg, report)
    deployment = next(o for o in objects if o["kind"] in ("Deployment", "StatefulSet"))
    workload = Workload(
        namespace=deployment["metadata"]["namespace"],
        model_name=cfg.served_model_name,
        deployment_name=deployment["metadata"]["name"],
        hpa_name=hpa_name(INSTANCE),
        kind=deployment["kind"],
    )
    triggers = _one(objects, "ScaledObject")["spec"]["triggers"]
    board = next(o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-dashboard"))
    dashboard = json.loads(next(iter(board["data"].values())))
    return Monitoring(
        workload=workload,
        service=_one(objects, "Service")["metadata"]["name"],
        rule_groups=_one(objects, "PrometheusRule")["spec"]["groups"],
        keda_queries={t["name"]: t["metadata"]["query"] for t in triggers},
        dashboard_queries=_dashboard_exprs(dashboard),
        metrics=metrics_for(cfg.vllm.version),
    )


def _dashboard_exprs(dashboard: dict[str, Any]) -> list[str]:
    return [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]


# The Kubernetes test stack with vLLM's router in front of two replicas (config/routing.py).
ROUTER_CHANGES: dict[str, Any] = {"replicas": 2, "routing": {"enabled": True}}


@dataclass(frozen=True)
class RouterLaunch:
    """The routed stack's rendered router command and the server command behind it."""

    command: list[str]  # the router container's command: `vllm-router` and its flags
    server: Launch
    policy: str
    grace_seconds: int  # the router pod's terminationGracePeriodSeconds: when the kubelet kills it after SIGTERM


# A tiny LoRA adapter on the routed stack (tests/e2e/tiny_lora.py writes it into the model cache's snapshot).
LORA_ADAPTER = "llama-e2e-lora"
LORA_REPO = "e2e/tiny-lora"
LORA_REVISION = "0123456789abcdef0123456789abcdef01234567"
LORA_CHANGES: dict[str, Any] = {
    "lora": {
        "adapters": [
            {
                "name": LORA_ADAPTER,
                "id": LORA_REPO,
                "revision": LORA_REVISION,
                "rank": 8,
                "target_modules": ["q_proj", "v_proj"],
            }
        ]
    }
}


def lora_snapshot() -> str:
    """Where the rendered server loads the adapter from: its snapshot in the model cache (plan/lora.py)."""
    return hub_snapshot(HF_HOME, LORA_REPO, LORA_REVISION)


# Two stacks of one namespace on one endpoint (routing.endpoint): the first runs the router, the second joins;
# without API keys, which an endpoint refuses (validation/routing.py: the router's model discovery sends none).
ENDPOINT_CHANGES: dict[str, Any] = {
    "namespace": {"name": "llm"},
    "routing": {"enabled": True, "endpoint": "fleet"},
    "security": {"require_api_key": False},
}
MEMBER_CHANGES: dict[str, Any] = {
    "namespace": {"name": "llm"},
    "security": {"require_api_key": False},
    "routing": {"endpoint": "fleet"},
    "engine": {"served_model_name": "qwen-e2e"},
}


def router_launch(api_key: str, changes: dict[str, Any] | None = None) -> RouterLaunch:
    """The routed stack (`changes` over ROUTER_CHANGES, e.g. LORA_CHANGES or ENDPOINT_CHANGES)."""
    cfg, report = stack_for_tests("Pulumi.dev.yaml", _merge(ROUTER_CHANGES, changes or {}))
    objects = _objects(cfg, report)
    router = next(o for o in objects if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("-router"))
    command = list(router["spec"]["template"]["spec"]["containers"][0]["command"])
    server = next(o for o in objects if o["kind"] in ("Deployment", "StatefulSet") and o is not router)
    launch = _launch(server["spec"]["template"]["spec"]["containers"][0], cfg, report, api_key)
    grace = router["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    return RouterLaunch(command=command, server=launch, policy=cfg.routing.policy, grace_seconds=grace)


def member_launch(api_key: str) -> Launch:
    """The server of the stack that joins the endpoint (MEMBER_CHANGES): its own model name, no router."""
    cfg, report = stack_for_tests("Pulumi.dev.yaml", MEMBER_CHANGES)
    return _server_launch(cfg, report, api_key)


def _server_launch(cfg: StackConfig, report: PreflightReport, api_key: str) -> Launch:
    """The server container as the Deployment renders it: its command line, env and startup budget."""
    return _launch(_deployment(cfg, report)["spec"]["template"]["spec"]["containers"][0], cfg, report, api_key)


def _launch(
    container: dict[str, Any], cfg: StackConfig, report: PreflightReport, api_key: str, previous: str | None = None
) -> Launch:
    """How to run a rendered server container: its command line as the kubelet expands it, env and startup
    budget. `previous`: the api_key_previous secret's value, where the stack sets it."""
    probe = container["startupProbe"]
    env = _container_env(container, {API_KEY_KEY: api_key} | ({API_KEY_PREVIOUS_KEY: previous} if previous else {}))
    return Launch(
        command=list(container["command"]),
        args=[kubelet_expand(arg, env) for arg in container["args"]],
        env=env,
        startup_budget_seconds=probe["failureThreshold"] * probe["periodSeconds"],
        port=cfg.server.port,
        served_model_name=report.resolved.served_model_name,
        env_from=tuple(source["secretRef"]["name"] for source in container.get("envFrom", [])),
    )


# The stack streaming its weights from an S3-compatible store (tests/e2e/test_object_storage.py): the store's
# endpoint is known once its server listens, so the stack is rendered after.
BUCKET_URI = "s3://models/tiny/"
BUCKET_SECRET = "llama-bucket"


def object_storage_stack(endpoint_url: str, **credentials: Any) -> tuple[StackConfig, PreflightReport]:
    """`credentials`: how the server reads the bucket (delivery.object_storage keys); a Secret by default."""
    bucket = {"uri": BUCKET_URI, "endpoint_url": endpoint_url, **(credentials or {"credentials_secret": BUCKET_SECRET})}
    return stack_for_tests("Pulumi.dev.yaml", {"delivery": {"mode": "object_storage", "object_storage": bucket}})


def object_storage_launch(api_key: str, endpoint_url: str, **credentials: Any) -> Launch:
    cfg, report = object_storage_stack(endpoint_url, **credentials)
    return _server_launch(cfg, report, api_key)


def rotation_launch(api_key: str, previous: str) -> Launch:
    """The Kubernetes test stack halfway through a rotation: api_key is the new key, api_key_previous the old one."""
    cfg, report = stack_for_tests("Pulumi.dev.yaml", {}, frozenset({"api_key", "api_key_previous", "hf_token"}))
    deployment = next(o for o in _objects(cfg, report, api_key_previous=True) if o["kind"] == "Deployment")
    return _launch(deployment["spec"]["template"]["spec"]["containers"][0], cfg, report, api_key, previous)


def rotation_smoke_command(base_url: str, mounted: dict[str, Path]) -> list[str]:
    """The smoke Job's command of the stack mid-rotation, run here: each volume's mount path becomes the local folder
    `mounted` names for the volume (what the kubelet would mount: the script's ConfigMap, the API-key Secret's keys as
    files), and the in-cluster Service URL the server's `base_url`."""
    cfg, report = stack_for_tests("Pulumi.dev.yaml", {}, frozenset({"api_key", "api_key_previous", "hf_token"}))
    job = next(
        o for o in _objects(cfg, report, api_key_previous=True) if o["kind"] == "Job" and "smoke" in o["metadata"]["name"]
    )
    (container,) = job["spec"]["template"]["spec"]["containers"]
    paths = {mount["mountPath"]: str(mounted[mount["name"]]) for mount in container["volumeMounts"] if mount["name"] in mounted}
    command = [_local_path(arg, paths) for arg in container["command"]]
    command[command.index("--base-url") + 1] = base_url
    return command


def _local_path(arg: str, paths: dict[str, str]) -> str:
    for mount_path, local in paths.items():
        if arg.startswith(mount_path + "/"):
            return local + arg[len(mount_path) :]
    return arg
