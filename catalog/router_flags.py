"""The flags of `vllm-router` per release, read once from the wheel's `vllm-router --help`.

Parsed from the PyPI wheel vllm-router 0.1.17 (vllm_router/router_args.py prints this help;
`pip install vllm-router==0.1.17 && vllm-router --help`). tests/test_router_flags.py re-reads the help from the
binary when it is installed (requirements-e2e.txt) and checks this table equals it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RouterFlags:
    version: str
    flags: frozenset[str]  # every option of `vllm-router --help`
    policies: tuple[str, ...]  # the choices of --policy


ROUTER_FLAGS: dict[str, RouterFlags] = {
    "0.1.17": RouterFlags(
        version="0.1.17",
        flags=frozenset(
            {
                "--api-key",
                "--balance-abs-threshold",
                "--balance-rel-threshold",
                "--cache-threshold",
                "--cb-failure-threshold",
                "--cb-success-threshold",
                "--cb-timeout-duration-secs",
                "--cb-window-duration-secs",
                "--cors-allowed-origins",
                "--decode",
                "--decode-policy",
                "--decode-selector",
                "--disable-circuit-breaker",
                "--disable-retries",
                "--enable-igw",
                "--enable-program-scheduling",
                "--eviction-interval-secs",
                "--health-check-endpoint",
                "--health-check-interval-secs",
                "--health-check-timeout-secs",
                "--health-failure-threshold",
                "--health-success-threshold",
                "--host",
                "--intra-node-data-parallel-size",
                "--kv-aware-session-affinity-ttl-secs",
                "--kv-connector",
                "--kv-event-block-size",
                "--kv-event-model",
                "--kv-event-replay-source",
                "--kv-event-source",
                "--kv-penalty-disk",
                "--kv-penalty-external",
                "--kv-penalty-host",
                "--log-dir",
                "--log-level",
                "--max-concurrent-requests",
                "--max-payload-size",
                "--max-tree-size",
                "--mini-lb",
                "--pd-kv-events",
                "--policy",
                "--port",
                "--prefill",
                "--prefill-policy",
                "--prefill-selector",
                "--program-scheduling-config-json",
                "--prometheus-host",
                "--prometheus-port",
                "--queue-size",
                "--queue-timeout-secs",
                "--rate-limit-tokens-per-second",
                "--request-id-headers",
                "--request-timeout-secs",
                "--retry-backoff-multiplier",
                "--retry-initial-backoff-ms",
                "--retry-jitter-factor",
                "--retry-max-backoff-ms",
                "--retry-max-retries",
                "--router-temperature",
                "--selector",
                "--service-discovery",
                "--service-discovery-namespace",
                "--service-discovery-port",
                "--vllm-discovery-address",
                "--vllm-pd-disaggregation",
                "--wasm-middleware",
                "--wasm-middleware-route",
                "--wasm-middleware-sha256",
                "--worker-startup-check-interval",
                "--worker-startup-timeout-secs",
                "--worker-urls",
            }
        ),
        policies=("random", "round_robin", "cache_aware", "kv_aware", "power_of_two", "consistent_hash", "sticky_least_loaded"),
    ),
}


def router_flags(version: str) -> RouterFlags:
    """The table of one router release; KeyError names the versions there are."""
    if version not in ROUTER_FLAGS:
        raise KeyError(f"no vllm-router flag table for {version!r}; known: {sorted(ROUTER_FLAGS)}")
    return ROUTER_FLAGS[version]
