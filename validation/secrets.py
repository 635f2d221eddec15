"""The secrets a stack's config requires."""

from __future__ import annotations

from catalog.models import Architecture, gated_on_hub
from catalog.vllm_flags import API_KEY_LIST_SINCE, FLAG_TABLES, SEVERAL_API_KEYS_SINCE
from catalog.vllm_releases import version_key
from config.errors import ConfigIssue
from config.stack import StackConfig


def missing_secrets(cfg: StackConfig, secrets_present: frozenset[str], arch: Architecture | None = None) -> list[ConfigIssue]:
    """Secrets the config requires that are not set. A rule of validation.check_stack: a stack file may get
    them from elsewhere (a Pulumi ESC environment, CI), so the offline preflight only notes them, and the
    program (which sees the stack's secrets) stops on them. `arch`: the sized model, whose gated flag the Hub
    gave when it was read from there."""
    issues = []
    if cfg.security.require_api_key and "api_key" not in secrets_present:
        issues.append(
            ConfigIssue(
                "api_key",
                "is required because security.require_api_key is true, but it is not set.",
                "pulumi config set --secret api_key <key>, or set security.require_api_key: false.",
            )
        )
    if _downloads_from_hub(cfg) and gated_on_hub(cfg.model.id, arch) and "hf_token" not in secrets_present:
        said_by = "the Hub's gated flag" if arch is not None and arch.gated is not None else "catalog/models.py GATED_ON_HUB"
        issues.append(
            ConfigIssue(
                "hf_token",
                f"is required because model.id {cfg.model.id!r} is gated on the Hugging Face Hub ({said_by}): "
                "without a token its download fails with 401.",
                "accept the licence on the model's Hub page, then pulumi config set --secret hf_token <token of that "
                "account>; or serve it from model.local_path.",
            )
        )
    return issues


def previous_api_key_issues(cfg: StackConfig, version: str) -> list[ConfigIssue]:
    """Where the api_key_previous secret, once set, cannot be honoured: it is accepted beside api_key only by
    the server pods of a Kubernetes roll, on a release that takes several keys on its command line and keeps them
    out of its start-up log (catalog/vllm_flags.py SEVERAL_API_KEYS_SINCE)."""
    fix = "pulumi config rm api_key_previous"
    if not cfg.security.require_api_key:
        return [
            ConfigIssue(
                "api_key_previous",
                "is set, but security.require_api_key is false: no server checks a key.",
                f"set security.require_api_key: true, or {fix}.",
            )
        ]
    if cfg.target == "docker":
        return [
            ConfigIssue(
                "api_key_previous",
                "is set, but the docker target runs one container, which a rotation restarts: no pod that accepts "
                "the old key keeps serving while clients move, so a second key gains nothing there.",
                f"{fix}; rotate by setting api_key alone.",
            )
        ]
    if not FLAG_TABLES[version].several_api_keys:
        takes_one = version_key(version) < version_key(API_KEY_LIST_SINCE)
        why = "takes one --api-key only" if takes_one else "prints the keys of its command line in its start-up log"
        return [
            ConfigIssue(
                "api_key_previous",
                f"is set, but vLLM {version} {why}; several keys are safe from {SEVERAL_API_KEYS_SINCE} on.",
                f"set vllm.version to {SEVERAL_API_KEYS_SINCE} or newer, or {fix} (a rotation then refuses the old "
                "key on each pod as it is replaced).",
            )
        ]
    return []


def _downloads_from_hub(cfg: StackConfig) -> bool:
    """Whether anything fetches the weights from the Hub: not a local_path model, nor one vLLM streams from a
    bucket that something else filled (plan/delivery.py needs_download and copies_to_bucket)."""
    if cfg.model.local_path is not None:
        return False
    bucket = cfg.delivery.object_storage
    streamed = cfg.target == "kubernetes" and cfg.delivery.mode == "object_storage"
    return not streamed or (bucket is not None and bucket.copy_from_hub)
