"""What an RBAC Role lets a request do, the way the API server's authorizer decides it: a request's attributes
from its HTTP method and path (kubernetes.io/docs/reference/access-authn-authz/authorization, "Determine the
request verb": GET of a collection is `list`, of one object `get`), matched against each rule
(kubernetes/kubernetes pkg/apis/rbac/v1/evaluation_helpers.go: VerbMatches, APIGroupMatches, ResourceMatches,
ResourceNameMatches; a rule with resourceNames matches only requests that name one of them, never a list)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Request:
    verb: str
    api_group: str
    namespace: str
    resource: str
    name: str  # empty for a collection


def get_request(path: str) -> Request:
    """A GET of `/api/v1/namespaces/NS/RESOURCE[/NAME]` or `/apis/GROUP/VERSION/namespaces/NS/RESOURCE[/NAME]`,
    query dropped: `get` of one object, `list` of a collection."""
    parts = path.partition("?")[0].strip("/").split("/")
    group, rest = ("", parts[2:]) if parts[0] == "api" else (parts[1], parts[3:])
    assert rest[0] == "namespaces" and len(rest) in (3, 4), f"not a namespaced resource path: {path}"
    name = rest[3] if len(rest) == 4 else ""
    return Request("get" if name else "list", group, rest[1], rest[2], name)


def _matches(values: list[str], wanted: str) -> bool:
    return "*" in values or wanted in values


def rule_allows(rule: dict[str, Any], request: Request) -> bool:
    names = rule.get("resourceNames") or []
    return (
        _matches(rule.get("verbs", []), request.verb)
        and _matches(rule.get("apiGroups", []), request.api_group)
        and _matches(rule.get("resources", []), request.resource)
        and (not names or request.name in names)
    )


def role_allows(role: dict[str, Any], request: Request) -> bool:
    """A Role grants in its own namespace only."""
    in_namespace = role["metadata"]["namespace"] == request.namespace
    return in_namespace and any(rule_allows(rule, request) for rule in role.get("rules", []))
