"""No credential outside a Secret: refuse one in the bucket URI, the endpoint or plain-text environment.

Whatever the stack file holds reaches the Pulumi state and the pod spec in plain text; a credential belongs
in a Secret the pods read by reference. A credential is recognised by its variable's name and by its shape
(Azure connection strings and SAS tokens, presigned-URL signatures, AWS key ids, Hugging Face tokens). Pure.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

from config.errors import ConfigIssue, show
from config.stack import StackConfig

# Names of variables that carry credentials: HF_TOKEN, OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY,
# AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_SAS_TOKEN, DB_PASSWORD, ...
CREDENTIAL_NAME = re.compile(
    r"(^|_)(TOKEN|API_KEY|ACCESS_KEY|SAS_TOKEN|CONNECTION_STRING)$|SECRET|PASSWORD|PASSWD|_KEY$",
    re.IGNORECASE,
)
# *_KEY names that hold no secret: a public key, an identifier or a lookup key.
NON_SECRET_KEY = re.compile(r"(PUBLIC|CACHE|SORT|PARTITION|ROUTING|SHARD|HASH)_KEY$", re.IGNORECASE)
# Credential shapes in a value: Azure Storage connection strings (AccountKey=, SharedAccessSignature=),
# SAS and presigned-URL query parameters (sig=, X-Amz-Signature=, X-Goog-Signature=), AWS access key ids
# (AKIA/ASIA + 16, docs.aws.amazon.com IAM "Unique identifiers"), Hugging Face tokens (hf_ + 34).
CREDENTIAL_SHAPE = re.compile(
    r"AccountKey=|SharedAccessSignature=|(^|[?&;])sig=|X-Amz-Signature=|X-Amz-Credential=|X-Goog-Signature="
    r"|\b(AKIA|ASIA)[0-9A-Z]{16}\b|\bhf_[A-Za-z0-9]{30,}",
    re.IGNORECASE,
)
SIGNATURE_PARAMS = frozenset({"sig", "x-amz-signature", "x-amz-credential", "x-amz-security-token", "x-goog-signature"})

# The streamer's Azure client takes no connection string outside its Azurite test build: DefaultAzureCredential
# reads a service principal from the environment (docs/sources.md §S12).
STORAGE_FIX = (
    "put the credentials in a Secret (e.g. keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for s3://, or a "
    "service principal's AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET for az://) and name it in "
    "delivery.object_storage.credentials_secret: its keys "
    "become the server's environment through envFrom; or use workload identity "
    "(delivery.object_storage.service_account_annotations)."
)
ENV_FIX = (
    "remove it; give the Hugging Face token with `pulumi config set --secret hf_token`, the API key with "
    "`pulumi config set --secret api_key`, and storage credentials in a Secret named by "
    "delivery.object_storage.credentials_secret (its keys become the server's environment through envFrom)."
)


def is_credential_name(name: str) -> bool:
    return bool(CREDENTIAL_NAME.search(name)) and not NON_SECRET_KEY.search(name)


def has_credential_shape(value: str) -> bool:
    return bool(CREDENTIAL_SHAPE.search(value))


def cross_checks(cfg: StackConfig) -> list[ConfigIssue]:
    return _bucket_issues(cfg) + _env_issues(cfg.vllm.extra_env, "vllm.extra_env") + _nccl_issues(cfg)


def _embedded(url: str) -> str | None:
    """What credential a URL carries: user info, or a signature in its query string."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if "@" in parts.netloc:
        return "a user name or password before the host (user:pass@)"
    params = {name.lower() for name, _ in parse_qsl(parts.query, keep_blank_values=True)}
    if params & SIGNATURE_PARAMS or has_credential_shape(url):
        return "a signature or key in its query string (a SAS token or presigned URL)"
    return None


def _bucket_issues(cfg: StackConfig) -> list[ConfigIssue]:
    bucket = cfg.delivery.object_storage
    if bucket is None:
        return []
    issues: list[ConfigIssue] = []
    for key, url in (
        ("delivery.object_storage.uri", bucket.uri),
        ("delivery.object_storage.endpoint_url", bucket.endpoint_url),
        ("delivery.object_storage.sts_endpoint_url", bucket.sts_endpoint_url),
    ):
        found = _embedded(url) if url else None
        if url and found:
            issues.append(ConfigIssue(key, f"is {show(redacted(url))}, which carries {found}.", STORAGE_FIX))
    if ".." in bucket.uri.split("?")[0].split("/"):
        issues.append(
            ConfigIssue(
                "delivery.object_storage.uri",
                f"is {show(bucket.uri)}, which has a `..` segment: object stores take it literally or resolve it "
                "outside the folder.",
                "give the folder's own path, e.g. s3://models/llama-70b/.",
            )
        )
    return issues


def redacted(url: str) -> str:
    """The URL with its user info and query string hidden: a refusal never prints the credential it found."""
    head, query, _ = url.partition("?")
    scheme, sep, rest = head.rpartition("://")
    return f"{scheme}{sep}{rest.rpartition('@')[2]}" + ("?..." if query else "")


def _env_issues(env: dict[str, str], key: str) -> list[ConfigIssue]:
    by_name = sorted(name for name in env if is_credential_name(name))
    by_shape = sorted(name for name, value in env.items() if name not in by_name and has_credential_shape(value))
    by_user = sorted(name for name, value in env.items() if name not in by_name + by_shape and _has_user_info(value))
    issues = []
    if by_name:
        issues.append(
            ConfigIssue(
                key,
                f"sets {', '.join(by_name)}, which looks like a credential; it would sit in plain text in the "
                "Pulumi state and the pod spec.",
                ENV_FIX,
            )
        )
    if by_shape:
        issues.append(
            ConfigIssue(
                key,
                f"sets {', '.join(by_shape)} to a value shaped like a credential (a key, signature or token); it "
                "would sit in plain text in the Pulumi state and the pod spec.",
                ENV_FIX,
            )
        )
    if by_user:
        issues.append(
            ConfigIssue(
                key,
                f"sets {', '.join(by_user)} to a URL with a user name or password before the host (user:pass@); "
                "it would sit in plain text in the Pulumi state and in the spec of every pod that gets it (a "
                "proxy's variables reach every container that fetches from the Hub).",
                "remove the user info from the URL, and let the proxy admit the cluster's egress addresses instead.",
            )
        )
    return issues


def _has_user_info(value: str) -> bool:
    try:
        return "://" in value and "@" in urlsplit(value).netloc
    except ValueError:
        return False


def _nccl_issues(cfg: StackConfig) -> list[ConfigIssue]:
    return _env_issues(cfg.multinode.nccl_env, "multinode.nccl_env")
