"""Where each config value lands: one table of (key as typed, target field, syntax), applied to every stack.

A value that reaches a Kubernetes field must satisfy that field's syntax as the API server checks it
(k8s.io/apimachinery pkg/util/validation/validation.go; config/syntax.py holds the expressions), or the
workload that reads it (an affinity that never matches a label with a space). The schema types catch most
keys at parse time; the table names every landing in one place, so a key typed as a plain string cannot slip
through, and validation/values.py checks the rules between values. Pure.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

from config.errors import ConfigIssue, show
from config.stack import StackConfig
from config.syntax import DNS_LABEL, check_label, image_repository, is_dns_subdomain
from validation.credentials import redacted

# Environment variable names, as the API server validated them before 1.34's relaxed rule
# (k8s.io/apimachinery validation.go envVarNameFmt "[-._a-zA-Z][-._a-zA-Z0-9]*"); the strict form works on
# every supported cluster.
_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
# A resource quantity as resource.ParseQuantity reads it (k8s.io/apimachinery pkg/api/resource/quantity.go),
# without exponents: "2", "500m", "1.5".
_CPU_QUANTITY = re.compile(r"^([0-9]+(\.[0-9]*)?|\.[0-9]+)m?$")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_TAG = re.compile(r"^[\w][\w.-]{0,127}$")


@dataclass(frozen=True)
class Syntax:
    """One target syntax: what it is called, its check and the fix a refusal gives."""

    name: str
    check: Callable[[str], bool]
    fix: str


def _label_value(value: str) -> bool:
    try:
        check_label("a", value)
    except ValueError:
        return False
    return True


def _label_key(key: str) -> bool:
    try:
        check_label(key, "")
    except ValueError:
        return False
    return True


def _image_reference(value: str) -> bool:
    """repository[:tag][@sha256:digest], distribution/reference's grammar (reference.go ReferenceRegexp)."""
    rest, at, digest = value.partition("@")
    if at and not _DIGEST.match(digest):
        return False
    head, colon, tag = rest.rpartition(":")
    if colon and "/" not in tag:
        return image_repository(head) and bool(_TAG.match(tag))
    return image_repository(rest)


def _url_with_scheme(value: str) -> bool:
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and not any(c.isspace() for c in value)


def _not_an_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return True
    return False


DNS_LABEL_SYNTAX = Syntax(
    "a DNS label (RFC 1123)",
    lambda v: len(v) <= 63 and bool(re.match(DNS_LABEL, v)),
    "use at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit.",
)
DNS_SUBDOMAIN_SYNTAX = Syntax(
    "a DNS subdomain (RFC 1123)",
    is_dns_subdomain,
    "use at most 253 lower-case letters, digits, '-' and '.', e.g. my-tls.example.com.",
)
LABEL_VALUE = Syntax(
    "a Kubernetes label value",
    _label_value,
    "use at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit.",
)
LABEL_KEY = Syntax(
    "a Kubernetes label key",
    _label_key,
    "use an optional DNS prefix and a name of at most 63 letters, digits, '-', '_', '.', e.g. example.com/pool.",
)
# Annotation keys are qualified names, as label keys (validation.go ValidateAnnotations -> IsQualifiedName).
ANNOTATION_KEY = Syntax("an annotation key", _label_key, "use a key such as eks.amazonaws.com/role-arn.")
IMAGE_REFERENCE = Syntax(
    "an image reference",
    _image_reference,
    "use repository[:tag][@sha256:<digest>], e.g. python:3.11-slim (lower-case repository, no spaces).",
)
URL_WITH_SCHEME = Syntax(
    "a URL with a scheme",
    _url_with_scheme,
    "write the scheme and host, e.g. https://minio.example.com:9000.",
)
ENV_NAME = Syntax(
    "an environment variable name",
    lambda v: bool(_ENV_NAME.match(v)),
    "use letters, digits, '_', '-' or '.', not starting with a digit, e.g. MY_SETTING.",
)
CPU_QUANTITY = Syntax(
    "a CPU quantity", lambda v: bool(_CPU_QUANTITY.match(v)), "write whole or fractional cores, e.g. 8, 0.5 or 500m."
)
# networking.k8s.io/v1 IngressRule.host and Gateway API Hostname: "IPs are not allowed" (k8s.io/kubernetes
# pkg/apis/networking/validation/validation.go validateIngressRules; gateway-api apis/v1/shared_types.go).
HOST_NAME = Syntax(
    "a host name (not an IP address)",
    _not_an_ip,
    "use the DNS name clients use, e.g. llm.example.com; an address-only client needs no Ingress host.",
)


@dataclass(frozen=True)
class Landing:
    """One config key, the object field its value lands in, and that field's syntax."""

    key: str  # as typed; `[]` marks each item, `{}` each mapping key, `{}=` each mapping value
    field: str
    syntax: Syntax
    values: Callable[[StackConfig], Iterator[tuple[str, str]]]  # (key as typed, value) of one stack


def _one(get: Callable[[StackConfig], str | None], key: str) -> Callable[[StackConfig], Iterator[tuple[str, str]]]:
    def values(cfg: StackConfig) -> Iterator[tuple[str, str]]:
        value = get(cfg)
        if value is not None:
            yield key, value

    return values


def _bucket(cfg: StackConfig) -> Iterator[tuple[str, str]]:
    bucket = cfg.delivery.object_storage
    if bucket is not None and bucket.endpoint_url is not None:
        yield "delivery.object_storage.endpoint_url", bucket.endpoint_url


def _sts_endpoint(cfg: StackConfig) -> Iterator[tuple[str, str]]:
    bucket = cfg.delivery.object_storage
    if bucket is not None and bucket.sts_endpoint_url is not None:
        yield "delivery.object_storage.sts_endpoint_url", bucket.sts_endpoint_url


def _bucket_secret(cfg: StackConfig) -> Iterator[tuple[str, str]]:
    bucket = cfg.delivery.object_storage
    if bucket is not None and bucket.credentials_secret is not None:
        yield "delivery.object_storage.credentials_secret", bucket.credentials_secret


def _annotation_keys(cfg: StackConfig) -> Iterator[tuple[str, str]]:
    bucket = cfg.delivery.object_storage
    for key in bucket.service_account_annotations if bucket else ():
        yield "delivery.object_storage.service_account_annotations", key


def _pool_labels(keys: bool) -> Callable[[StackConfig], Iterator[tuple[str, str]]]:
    def values(cfg: StackConfig) -> Iterator[tuple[str, str]]:
        for index, pool in enumerate(cfg.cluster.node_pools):
            for key, value in pool.labels.items():
                yield f"cluster.node_pools[{index}].labels", key if keys else value

    return values


def _env_names(cfg: StackConfig) -> Iterator[tuple[str, str]]:
    for name in cfg.vllm.extra_env:
        yield "vllm.extra_env", name


def _ingress(get: Callable[..., str | None], key: str) -> Callable[[StackConfig], Iterator[tuple[str, str]]]:
    def values(cfg: StackConfig) -> Iterator[tuple[str, str]]:
        ingress = cfg.exposure.ingress
        value = get(ingress) if ingress is not None else None
        if value is not None:
            yield key, value

    return values


def _gateway_hostnames(cfg: StackConfig) -> Iterator[tuple[str, str]]:
    for host in cfg.exposure.gateway.hostnames if cfg.exposure.gateway else ():
        yield "exposure.gateway.hostnames", host


LANDINGS: tuple[Landing, ...] = (
    Landing(
        "monitoring.release",
        "metadata.labels.release of the ServiceMonitor/PodMonitor and PrometheusRule",
        LABEL_VALUE,
        _one(lambda c: c.monitoring.release, "monitoring.release"),
    ),
    Landing(
        "gpu.label",
        "spec.affinity.nodeAffinity values of nvidia.com/gpu.product",
        LABEL_VALUE,
        _one(lambda c: c.gpu.label, "gpu.label"),
    ),
    Landing("cluster.node_pools[].labels{}", "a node's metadata.labels key", LABEL_KEY, _pool_labels(keys=True)),
    Landing("cluster.node_pools[].labels{}=", "a node's metadata.labels value", LABEL_VALUE, _pool_labels(keys=False)),
    Landing(
        "smoke_test.image",
        "the smoke-test Job's spec.template.spec.containers[].image",
        IMAGE_REFERENCE,
        _one(lambda c: c.smoke_test.image, "smoke_test.image"),
    ),
    Landing(
        "delivery.download_image",
        "the download Job's (init container's) image",
        IMAGE_REFERENCE,
        _one(lambda c: c.delivery.download_image, "delivery.download_image"),
    ),
    Landing(
        "delivery.object_storage.endpoint_url",
        "the server's env AWS_ENDPOINT_URL (AZURE_STORAGE_ENDPOINT for az://)",
        URL_WITH_SCHEME,
        _bucket,
    ),
    Landing(
        "delivery.object_storage.sts_endpoint_url",
        "the server's and the copy Job's env AWS_ENDPOINT_URL_STS",
        URL_WITH_SCHEME,
        _sts_endpoint,
    ),
    Landing(
        "delivery.object_storage.credentials_secret",
        "the server's envFrom[].secretRef.name (a Secret name)",
        DNS_SUBDOMAIN_SYNTAX,
        _bucket_secret,
    ),
    Landing(
        "delivery.object_storage.service_account_annotations{}",
        "the ServiceAccount's metadata.annotations key",
        ANNOTATION_KEY,
        _annotation_keys,
    ),
    Landing("vllm.extra_env{}", "the server's env[].name", ENV_NAME, _env_names),
    Landing("server.cpu", "the server's resources.requests.cpu", CPU_QUANTITY, _one(lambda c: c.server.cpu, "server.cpu")),
    Landing(
        "cache.download_cpu",
        "the download Job's resources.requests.cpu",
        CPU_QUANTITY,
        _one(lambda c: c.cache.download_cpu, "cache.download_cpu"),
    ),
    Landing(
        "exposure.ingress.host", "the Ingress spec.rules[].host", HOST_NAME, _ingress(lambda i: i.host, "exposure.ingress.host")
    ),
    Landing(
        "exposure.ingress.tls_secret_name",
        "the Ingress spec.tls[].secretName (a Secret name)",
        DNS_SUBDOMAIN_SYNTAX,
        _ingress(lambda i: i.tls_secret_name, "exposure.ingress.tls_secret_name"),
    ),
    Landing("exposure.gateway.hostnames[]", "the HTTPRoute spec.hostnames[]", HOST_NAME, _gateway_hostnames),
)


# k8s.io/apimachinery pkg/api/validation/objectmeta.go (TotalAnnotationSizeLimitB): keys and values together.
ANNOTATIONS_TOTAL_BYTES = 256 * 1024


def check_landings(cfg: StackConfig) -> list[ConfigIssue]:
    """Every value against the syntax of the field it lands in. A URL is shown without what may be a password."""
    return [
        _refusal(landing, key, value)
        for landing in LANDINGS
        for key, value in landing.values(cfg)
        if not landing.syntax.check(value)
    ] + _annotations_too_large(cfg)


def _annotations_too_large(cfg: StackConfig) -> list[ConfigIssue]:
    bucket = cfg.delivery.object_storage
    annotations = bucket.service_account_annotations if bucket else {}
    total = sum(len(key.encode()) + len(value.encode()) for key, value in annotations.items())
    if total <= ANNOTATIONS_TOTAL_BYTES:
        return []
    return [
        ConfigIssue(
            "delivery.object_storage.service_account_annotations",
            f"holds {total:,} bytes; the API server refuses an object whose annotations exceed "
            f"{ANNOTATIONS_TOTAL_BYTES:,} bytes.",
            "keep only the workload-identity annotation (e.g. eks.amazonaws.com/role-arn).",
        )
    ]


def _refusal(landing: Landing, key: str, value: str) -> ConfigIssue:
    shown = show(redacted(value) if landing.syntax is URL_WITH_SCHEME else value)
    return ConfigIssue(key, f"is {shown}, which is not {landing.syntax.name} ({landing.field}).", landing.syntax.fix)
