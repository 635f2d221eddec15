"""Kubernetes name and label syntax, for config keys that name objects the program does not create.

Rules from kubernetes.io/docs/concepts/overview/working-with-objects/names (DNS subdomain: at most 253
lowercase letters, digits, '-' and '.') and .../labels (syntax and character set).
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


def check_dns_subdomain(name: str) -> str:
    if len(name) > 253 or not _DNS_SUBDOMAIN.match(name):
        raise ValueError(f"{name[:80]!r} is not a Kubernetes object name. Fix: use at most 253 lowercase letters, "
                         "digits, '-' or '.', starting and ending with a letter or digit.")
    return name


def check_labels(labels: dict[str, str]) -> dict[str, str]:
    for key, value in labels.items():
        check_label(key, value)
    return labels


def check_label(key: str, value: str) -> None:
    prefix, slash, name = key.rpartition("/")
    key_ok = (not slash or (bool(_DNS_SUBDOMAIN.match(prefix)) and len(prefix) <= 253)) and \
        len(name) <= 63 and bool(_LABEL_NAME.match(name))
    if not key_ok:
        raise ValueError(f"{key[:80]!r} is not a Kubernetes label key. Fix: use a key such as release or "
                         "app.kubernetes.io/name: an optional DNS prefix and a name of at most 63 letters, digits, -_.")
    if value and (len(value) > 63 or not _LABEL_NAME.match(value)):
        raise ValueError(f"{value[:80]!r} (label {key}) is not a Kubernetes label value. Fix: use at most 63 "
                         "letters, digits, '-', '_' or '.', starting and ending with a letter or digit.")


ObjectName = Annotated[str, AfterValidator(check_dns_subdomain)]
Labels = Annotated[dict[str, str], AfterValidator(check_labels)]
