"""The router discovers single-node server pods on the Kubernetes target and is the route's backend."""

from __future__ import annotations

from catalog.vllm_flags import FLAG_TABLES, SCALE_OUT_FLAG
from config.errors import ConfigIssue
from config.stack import StackConfig
from plan.routing import needs_render


def cross_checks(cfg: StackConfig) -> list[ConfigIssue]:
    issues = _endpoint_issues(cfg) + _render_issues(cfg)
    if not cfg.routing.enabled:
        return issues
    if cfg.target != "kubernetes":
        issues.append(
            ConfigIssue(
                "routing.enabled",
                f"is true, but target is {cfg.target!r}: the router discovers server pods through the Kubernetes API.",
                "set routing.enabled: false, or target: kubernetes.",
            )
        )
    if cfg.engine.nnodes > 1:
        issues.append(
            ConfigIssue(
                "routing.enabled",
                f"is true with engine.nnodes {cfg.engine.nnodes}: the router would discover the worker pods of "
                "each group too, which serve no HTTP.",
                "set routing.enabled: false for a multi-node replica.",
            )
        )
    gateway = cfg.exposure.gateway
    if gateway is not None and gateway.backend == "InferencePool":
        issues.append(
            ConfigIssue(
                "exposure.gateway.backend",
                "is 'InferencePool', but routing.enabled is true: the route goes to the router's Service, which picks "
                "the replica itself.",
                "set exposure.gateway.backend: Service, or routing.enabled: false.",
            )
        )
    return issues


def _endpoint_issues(cfg: StackConfig) -> list[ConfigIssue]:
    """A shared endpoint's router discovers pods in its own namespace only (a namespaced Role)."""
    endpoint = cfg.routing.endpoint
    if endpoint is None:
        return []
    if cfg.target != "kubernetes" or cfg.engine.nnodes > 1:
        return [
            ConfigIssue(
                "routing.endpoint",
                f"is {endpoint!r}, but the router discovers single-node server pods on the Kubernetes target only.",
                "remove routing.endpoint.",
            )
        ]
    if cfg.security.require_api_key:
        return [
            ConfigIssue(
                "routing.endpoint",
                f"is {endpoint!r} with security.require_api_key: the router learns each server's model from its "
                "/v1/models and calls it without a key (vllm-router 0.1.17: 401, the server joins as model "
                "'unknown'), so no request would be routed by its model.",
                "set security.require_api_key: false on the endpoint's stacks and authenticate clients in front of "
                "the router (the Gateway), or give each model its own router (routing.endpoint unset).",
            )
        ]
    if cfg.namespace.name is None:
        return [
            ConfigIssue(
                "routing.endpoint",
                f"is {endpoint!r}, but namespace.name is unset: each stack then has a namespace of its own, and the "
                "endpoint's router sees the pods of its own namespace only.",
                "set namespace.name to one namespace for every stack of the endpoint.",
            )
        ]
    return []


def _render_issues(cfg: StackConfig) -> list[ConfigIssue]:
    """The router's policy tokenizes each prompt through the server's render routes; a release with no switch for
    them (neither --enable-scale-out nor VLLM_ENABLE_SCALE_OUT_ENDPOINTS in its table) cannot be given them."""
    version = cfg.vllm.version
    if not needs_render(cfg.routing) or FLAG_TABLES[version].scale_out_switch is not None:
        return []
    return [
        ConfigIssue(
            "routing.policy",
            f"is {cfg.routing.policy!r}, which asks each server for the prompt's token ids "
            f"(/v1/completions/render), but vLLM {version} (vllm.version) has no switch for those routes in its "
            f"table (neither {SCALE_OUT_FLAG} nor VLLM_ENABLE_SCALE_OUT_ENDPOINTS): every request would be routed "
            "without its prefix (vllm-router counts it missing_tokens) to the least loaded server.",
            f"set vllm.version to a release with {SCALE_OUT_FLAG} (0.30.0 or later), or routing.policy to one that "
            "needs no token ids (round_robin, power_of_two, consistent_hash, random).",
        )
    ]
