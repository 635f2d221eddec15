"""An exposed server without an API key would serve anyone the gateway lets in."""

from __future__ import annotations

from config.errors import ConfigIssue
from config.stack import StackConfig


def cross_checks(cfg: StackConfig) -> list[ConfigIssue]:
    """An exposed server without a key would serve anyone the gateway lets in; an InferencePool needs its picker."""
    return _key_issues(cfg) + _picker_issues(cfg)


def _picker_issues(cfg: StackConfig) -> list[ConfigIssue]:
    """GIE: an InferencePool "is expected to be bundled with an Endpoint Picker"; the gateways that implement
    it route through the picker the pool names, so a pool without one serves nothing (docs/exposure.md)."""
    gateway = cfg.exposure.gateway
    if gateway is None or gateway.backend != "InferencePool" or gateway.endpoint_picker is not None:
        return []
    return [
        ConfigIssue(
            "exposure.gateway.backend",
            "is InferencePool, but exposure.gateway.endpoint_picker is unset: the pool would name no Endpoint "
            "Picker (endpointPickerRef), and the gateways implementing the Inference Extension route through it.",
            "deploy a picker in the stack's namespace (the Inference Extension's inferencepool chart, or llm-d) and "
            "name its Service in exposure.gateway.endpoint_picker.service (port 9002 by default); or set "
            "exposure.gateway.backend: Service.",
        )
    ]


def _key_issues(cfg: StackConfig) -> list[ConfigIssue]:
    if cfg.exposure.kind == "none" or cfg.security.require_api_key:
        return []
    return [
        ConfigIssue(
            f"exposure.{cfg.exposure.kind}",
            "exposes the API outside the namespace, but security.require_api_key is false: anyone the "
            f"{cfg.exposure.kind} admits could run inference.",
            "set security.require_api_key: true (and pulumi config set --secret api_key <key>).",
        )
    ]
