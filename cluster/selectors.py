"""Kubernetes node selector semantics, to match nodes and pools against the terms of catalog/selectors.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog.selectors import Term


def matches_expression(labels: Mapping[str, str], expression: Mapping[str, Any]) -> bool:
    """Kubernetes node selector requirement semantics (In, NotIn, Exists, DoesNotExist, Gt, Lt)."""
    key, operator, values = expression.get("key"), expression.get("operator"), expression.get("values") or []
    if not isinstance(key, str) or not isinstance(values, list):  # a hand-edited snapshot: matches nothing
        return False
    value = labels.get(key)
    if operator == "In":
        return value in values
    if operator == "NotIn":
        return value not in values
    if operator == "Exists":
        return value is not None
    if operator == "DoesNotExist":
        return value is None
    if (
        operator in ("Gt", "Lt")
        and value is not None
        and value.lstrip("-").isdigit()
        and values
        and str(values[0]).lstrip("-").isdigit()
    ):
        return int(value) > int(values[0]) if operator == "Gt" else int(value) < int(values[0])
    return False


def matches_terms(labels: Mapping[str, str], terms: list[Term]) -> bool:
    """True when any term matches (no terms: every node matches)."""
    if not terms:
        return True
    return any(all(matches_expression(labels, e) for e in term["matchExpressions"]) for term in terms)
