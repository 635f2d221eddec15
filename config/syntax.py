"""Target syntax for every value that lands in a Kubernetes or Docker object, as reusable Annotated types.

A key whose value reaches a manifest, a container argument or a PromQL string takes one of these types, so
Kubernetes, Docker, vLLM and Prometheus never see a value they would reject or read differently. Each rule
names its upstream source.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints

from config.errors import show

INT32_MAX = 2**31 - 1  # Kubernetes int32 fields (replicas, ports, seconds), k8s.io/api core/v1 types.go
MAX_REPLICAS = 1000  # far beyond one model's fleet; a typo like 10^6 should not reach the scheduler

# RFC 1123 label and subdomain: k8s.io/apimachinery pkg/util/validation/validation.go (dns1123LabelFmt).
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# Label names and values: the same file (qualifiedNameFmt, labelValueFmt), at most 63 characters.
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
# Image references: distribution/reference regexp.go (domain, path components, tag) and normalize.go
# (splitDockerDomain: the first component is a registry only with a `.` or `:`, or as `localhost`).
_IMAGE_DOMAIN = re.compile(
    r"^[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*"
    r"(?::[0-9]+)?$"
)
_IMAGE_PATH = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$")
_IMAGE_TAG = re.compile(r"^[\w][\w.-]{0,127}$")
# Hub repo ids: huggingface/huggingface_hub src/huggingface_hub/utils/_validators.py (REPO_ID_REGEX,
# validate_repo_id: no `--` or `..`, at most 96 characters per part).
_HF_REPO_ID = re.compile(r"^(?:[A-Za-z0-9](?:[\w.-]*[A-Za-z0-9])?/)?[A-Za-z0-9](?:[\w.-]{0,94}[A-Za-z0-9])?$", re.ASCII)
# Git revisions (a branch, tag or commit sha) as the Hub accepts them in a URL path.
_REVISION = re.compile(r"^[A-Za-z0-9][\w./-]{0,254}$", re.ASCII)
# Served model names reach container args and PromQL string literals: no quotes, backslashes, `$`, braces,
# whitespace or control characters, so no escaping is needed anywhere.
_SERVED_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,254}$")


def _rule(check: object, what: str, fix: str) -> AfterValidator:
    def validate(value: str) -> str:
        if not check(value):  # type: ignore[operator]
            raise ValueError(f"{show(value)} is not {what}. Fix: {fix}")
        return value

    return AfterValidator(validate)


def check_label(key: str, value: str) -> None:
    """A Kubernetes label (or node selector) pair. Raises ValueError naming what is wrong."""
    prefix, slash, name = key.rpartition("/")
    key_ok = (
        (not slash or (bool(_DNS_SUBDOMAIN.match(prefix)) and len(prefix) <= 253))
        and len(name) <= 63
        and bool(_LABEL_NAME.match(name))
    )
    if not key_ok:
        raise ValueError(
            f"{show(key)} is not a Kubernetes label key. Fix: use a key such as "
            "app.kubernetes.io/name: an optional DNS prefix and a name of at most 63 letters, digits, -_."
        )
    if value and (len(value) > 63 or not _LABEL_NAME.match(value)):
        raise ValueError(
            f"{show(value)} (label {key}) is not a Kubernetes label value. Fix: use at most 63 letters, "
            "digits, '-', '_' or '.', starting and ending with a letter or digit."
        )


def _labels(labels: dict[str, str]) -> dict[str, str]:
    for key, value in labels.items():
        check_label(key, value)
    return labels


def image_repository(value: str) -> bool:
    domain, slash, path = value.partition("/")
    if slash and (any(char in domain for char in ".:") or domain == "localhost"):
        return len(value) <= 255 and bool(_IMAGE_DOMAIN.match(domain)) and bool(_IMAGE_PATH.match(path))
    return len(value) <= 255 and bool(_IMAGE_PATH.match(value))


def is_dns_subdomain(value: str) -> bool:
    """An RFC 1123 subdomain: object names such as Secrets and PriorityClasses (validation.go IsDNS1123Subdomain)."""
    return len(value) <= 253 and bool(_DNS_SUBDOMAIN.match(value))


def _hub_repo_id(value: str) -> bool:
    return bool(_HF_REPO_ID.match(value)) and "--" not in value and ".." not in value and not value.endswith(".git")


def _confined_path(value: str) -> bool:
    parts = value.split("/")
    return ".." not in parts and not any(char in value for char in "\n\r\0") and value.strip() == value != ""


def _extra_arg(value: str) -> bool:
    """One argv item: a flag alone or `--flag=value`, or the value after a flag. A flag and its value in one
    item ("--max-num-seqs 64") would reach vLLM as one unknown flag."""
    if any(char in value for char in "\n\r\0"):
        return False
    return not (value.startswith("-") and any(char.isspace() for char in value.split("=", 1)[0]))


DnsLabel = Annotated[str, StringConstraints(pattern=DNS_LABEL, max_length=63)]
DnsSubdomain = Annotated[
    str,
    _rule(
        is_dns_subdomain,
        "a Kubernetes object name (RFC 1123 subdomain)",
        "use lower-case letters, digits, '-' and '.', at most 253 characters.",
    ),
]
Labels = Annotated[dict[str, str], AfterValidator(_labels)]
ImageRepository = Annotated[
    str,
    _rule(
        image_repository,
        "an image repository",
        "use a repository such as vllm/vllm-openai or registry.example.com:5000/team/vllm (lower case, no tag).",
    ),
]
ImageTag = Annotated[
    str,
    _rule(
        lambda v: bool(_IMAGE_TAG.match(v)), "an image tag", "use at most 128 letters, digits, '_', '.' or '-', e.g. v0.33.0."
    ),
]
HubRepoId = Annotated[
    str,
    _rule(_hub_repo_id, "a Hugging Face repository id", "use <organisation>/<name>, e.g. meta-llama/Llama-3.1-8B-Instruct."),
]
MountPath = Annotated[
    str,
    _rule(_confined_path, "a path inside its volume", "give a path without `..` components, newlines or surrounding spaces."),
]
Revision = Annotated[
    str, _rule(lambda v: bool(_REVISION.match(v)), "a git revision", "use a commit sha, a tag or a branch name.")
]
ExtraArg = Annotated[
    str, _rule(_extra_arg, "one command-line item", "give a flag and its value as two items, or as --flag=value; no newlines.")
]
ServedModelName = Annotated[
    str,
    _rule(
        lambda v: bool(_SERVED_NAME.match(v)),
        "a name safe in container args and PromQL",
        "use letters, digits and . _ : / @ + - (at most 255), starting with a letter or digit.",
    ),
]
PositiveInt = Annotated[int, Field(gt=0, le=INT32_MAX)]
NonNegativeInt = Annotated[int, Field(ge=0, le=INT32_MAX)]
Replicas = Annotated[int, Field(gt=0, le=MAX_REPLICAS)]
# A size in GiB rendered as a Kubernetes quantity (memory, emptyDir sizeLimit, claim storage): no quantity represents
# more than 2^63-1 bytes (kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go
# @009f4971a05ddf1edc5616eab805f5b79017da08:60), just under 2^33 GiB. Less than half that: the server's memory limit
# adds two of these sizes (server.memory_gib and /dev/shm, preflight/delivery.py server_memory_limit_gib). Refuses inf.
QUANTITY_MAX_GIB = 2**32 - 1
SizeGiB = Annotated[float, Field(gt=0, le=QUANTITY_MAX_GIB)]
# Model sizes (parameters, widths, vocabularies) never reach an int32 field, but a bound keeps arithmetic finite.
Quantity = Annotated[int, Field(gt=0, le=10**15)]
