"""KEDA's access to OpenShift's Thanos Querier (plan/scaling.py ThanosAccess): a ServiceAccount, its token
Secret, a Role reading the namespace's metrics with its RoleBinding, and the TriggerAuthentication
(keda.sh/v1alpha1) the Prometheus triggers name. Pure.

The steps and the Role are openshift/openshift-docs modules/nodes-cma-autoscaling-custom-prometheus-config.adoc
(catalog/profiles.py UserWorkloadMonitoring, docs/sources.md §S8). The token Secret is a
`kubernetes.io/service-account-token`: the token controller fills `token` and `ca.crt` for the named account.
"""

from __future__ import annotations

from typing import Any

from catalog.profiles import THANOS_READER_RULES
from components.render.security import RBAC_API
from plan.scaling import ThanosAccess

TOKEN_TYPE = "kubernetes.io/service-account-token"
ACCOUNT_ANNOTATION = "kubernetes.io/service-account.name"


def _metadata(thanos: ThanosAccess, name: str | None = None) -> dict[str, Any]:
    return {"name": name or thanos.name, "namespace": thanos.namespace, "labels": dict(thanos.labels)}


def render_thanos_access(thanos: ThanosAccess) -> list[dict[str, Any]]:
    """In creation order: the account, its token, the Role and binding, then the TriggerAuthentication."""
    secret_metadata = _metadata(thanos, thanos.token_secret) | {"annotations": {ACCOUNT_ANNOTATION: thanos.name}}
    rules = [
        {"apiGroups": list(groups), "resources": list(resources), "verbs": list(verbs)}
        for groups, resources, verbs in THANOS_READER_RULES
    ]
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _metadata(thanos), "automountServiceAccountToken": False},
        {"apiVersion": "v1", "kind": "Secret", "type": TOKEN_TYPE, "metadata": secret_metadata},
        {"apiVersion": RBAC_API, "kind": "Role", "metadata": _metadata(thanos), "rules": rules},
        {
            "apiVersion": RBAC_API,
            "kind": "RoleBinding",
            "metadata": _metadata(thanos),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": thanos.name},
            "subjects": [{"kind": "ServiceAccount", "name": thanos.name, "namespace": thanos.namespace}],
        },
        render_trigger_authentication(thanos),
    ]


def render_trigger_authentication(thanos: ThanosAccess) -> dict[str, Any]:
    """The bearer token and the cluster CA from the token Secret (the Querier serves a service-CA certificate)."""
    refs = [("bearerToken", "token"), ("ca", "ca.crt")]
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "TriggerAuthentication",
        "metadata": _metadata(thanos),
        "spec": {"secretTargetRef": [{"parameter": p, "name": thanos.token_secret, "key": key} for p, key in refs]},
    }


def thanos_trigger_fields(thanos: ThanosAccess) -> tuple[dict[str, str], dict[str, Any]]:
    """(metadata added to each Prometheus trigger, fields added to the trigger): bearer auth, the namespace the
    tenancy port scopes the query to, and the TriggerAuthentication."""
    return {"authModes": "bearer", "namespace": thanos.namespace}, {"authenticationRef": {"name": thanos.name}}
