"""What the Kubernetes API server would refuse in the objects a stack renders, beyond "it parses".

Four kinds of check, each returning a list of problems ([] when the API server admits the objects):
- `schema_problems`: built-in kinds against kubernetes-validate's strict OpenAPI schema (tests/test_k8s_schema.py),
  custom resources against the upstream CRDs (tests/promtool crd_errors, ../shared/crds);
- `object_problems`: the API server's own validation of one object (k8s.io/apimachinery pkg/util/validation/
  validation.go, pkg/apis/core/validation/validation.go): names per kind, label keys and values, annotation keys
  and total size, int32 fields and port ranges, quantities, unique container, volume and port names, volume mounts;
- `reference_problems`: every Secret, ConfigMap, claim and ServiceAccount a pod uses is rendered or provided, and
  (`secret_key_problems`) every key a pod reads from a rendered Secret is in it;
- `selector_problems`: every Service, NetworkPolicy, PodDisruptionBudget, ServiceMonitor, PodMonitor and
  InferencePool selects a rendered pod template, and every workload's selector matches its own template.

The rules are written out here, not imported from config/syntax.py: the check must not share the program's regexes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any

import kubernetes_validate

from tests.promtool import crd_errors

KUBERNETES_VERSION = "1.37.0"  # the newest kubernetes-validate 1.37.0 ships (tests/test_k8s_schema.py)
SECRET_SIG = "4dabf18193072939515e22adb298388d"  # how the Pulumi wire format marks a secret value

# Custom resources: (API group, kind) -> the upstream CRD file in ../shared/crds.
CRD_FILES = {
    ("keda.sh", "ScaledObject"): "keda.sh_scaledobjects.yaml",
    ("keda.sh", "TriggerAuthentication"): "keda.sh_triggerauthentications.yaml",
    ("monitoring.coreos.com", "ServiceMonitor"): "monitoring.coreos.com_servicemonitors.yaml",
    ("monitoring.coreos.com", "PodMonitor"): "monitoring.coreos.com_podmonitors.yaml",
    ("monitoring.coreos.com", "PrometheusRule"): "monitoring.coreos.com_prometheusrules.yaml",
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
    ("gateway.networking.k8s.io", "HTTPRoute"): "gateway.networking.k8s.io_httproutes.yaml",
    ("gateway.networking.k8s.io", "Gateway"): "gateway.networking.k8s.io_gateways.yaml",
    ("gateway.networking.k8s.io", "ReferenceGrant"): "gateway.networking.k8s.io_referencegrants.yaml",
    ("inference.networking.k8s.io", "InferencePool"): "inference.networking.k8s.io_inferencepools.yaml",
    ("http.keda.sh", "HTTPScaledObject"): "http.keda.sh_httpscaledobjects.yaml",
    ("http.keda.sh", "InterceptorRoute"): "http.keda.sh_interceptorroutes.yaml",
}
# Kinds with no schema at hand: checked for names and labels only.
NO_SCHEMA = {
    ("networking.gke.io", "GCPBackendPolicy"),
    ("networking.gke.io", "HealthCheckPolicy"),
    ("security.openshift.io", "SecurityContextConstraints"),
}

INT32_MAX = 2**31 - 1
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_IANA_SVC_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")  # and a letter, no "--", at most 15
_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
ANNOTATIONS_MAX_BYTES = 256 * 1024  # TotalAnnotationSizeLimitB, keys and values together
# Names the API server holds to a DNS-1123 label (63); a Service to a DNS-1035 label. A Job's name becomes its
# pods' job-name label value (63); a StatefulSet's its pods' controller-revision-hash label, name-<10 char hash>.
_NAME_MAX = {"Namespace": 63, "Service": 63, "Job": 63, "StatefulSet": 52}
# Fields the API types declare int32 (k8s.io/api core/v1, apps/v1, batch/v1 types.go), and their lower bounds.
INT32_FIELDS = {
    "initialDelaySeconds": 0,
    "timeoutSeconds": 1,
    "periodSeconds": 1,
    "successThreshold": 1,
    "failureThreshold": 1,
    "progressDeadlineSeconds": 1,
    "minReadySeconds": 0,
    "revisionHistoryLimit": 0,
    "replicas": 0,
    "backoffLimit": 0,
    "completions": 0,
    "parallelism": 0,
    "ttlSecondsAfterFinished": 0,
    "defaultMode": 0,
    "mode": 0,
}
INT64_FIELDS = {"terminationGracePeriodSeconds": 0, "activeDeadlineSeconds": 1}
PORT_FIELDS = ("containerPort", "port", "targetPort", "hostPort", "nodePort")


def plain(value: Any) -> Any:
    """A mocked input as the API server gets it: whole floats as ints, secret values unwrapped."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict) and SECRET_SIG in value:
        return plain(value.get("value"))
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def registered_objects(resources: Iterable[Any]) -> list[dict[str, Any]]:
    """The Kubernetes objects among a mocked run's registered resources (tests/harness.py Registered.resources)."""
    return [plain(dict(r.inputs)) for r in resources if r.typ.startswith("kubernetes:")]


def _group_kind(obj: dict[str, Any]) -> tuple[str, str]:
    group, slash, _ = str(obj.get("apiVersion", "")).rpartition("/")
    return (group if slash else ""), str(obj.get("kind", ""))


def _where(obj: dict[str, Any]) -> str:
    return f"{obj.get('kind')} {obj.get('metadata', {}).get('name')!r}"


# --- Schema ---------------------------------------------------------------------------------------------------
@cache
def _builtin_schema_errors(text: str) -> tuple[str, ...]:
    try:
        kubernetes_validate.validate(json.loads(text), KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as error:
        return (f"{'.'.join(map(str, error.path))}: {error.message}",)
    return ()


def schema_problems(obj: dict[str, Any]) -> list[str]:
    group_kind = _group_kind(obj)
    if group_kind in NO_SCHEMA:
        return []
    if group_kind in CRD_FILES:
        return [f"{_where(obj)} (CRD): {error}" for error in crd_errors(obj, CRD_FILES[group_kind])]
    if "." in group_kind[0] and not group_kind[0].endswith(".k8s.io"):
        return [f"{_where(obj)}: no schema for {group_kind} (add its CRD to CRD_FILES or NO_SCHEMA)"]
    return [f"{_where(obj)}: {error}" for error in _builtin_schema_errors(json.dumps(obj, sort_keys=True))]


# --- One object -----------------------------------------------------------------------------------------------
def name_problem(kind: str, name: str) -> str | None:
    """Why the API server refuses `name` for a `kind` object, or None."""
    most = _NAME_MAX.get(kind, 253)
    pattern = {"Namespace": _DNS1123_LABEL, "Service": _DNS1035_LABEL}.get(kind, _DNS1123_SUBDOMAIN)
    if len(name) > most or not pattern.match(name):
        return f"{kind} name {name!r}: not a {'DNS-1035 label' if kind == 'Service' else 'DNS-1123 name'} of at most {most}"
    return None


def _qualified_name_problem(key: str) -> str | None:
    prefix, slash, name = key.rpartition("/")
    if slash and (len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        return f"key {key!r}: its prefix is not a DNS subdomain"
    if len(name) > 63 or not _QUALIFIED_NAME.match(name):
        return f"key {key!r}: not a qualified name"
    return None


def label_problems(labels: dict[str, Any] | None, where: str) -> list[str]:
    problems = []
    for key, value in (labels or {}).items():
        problem = _qualified_name_problem(str(key))
        if problem:
            problems.append(f"{where} label {problem}")
        if not isinstance(value, str) or (value and (len(value) > 63 or not _QUALIFIED_NAME.match(value))):
            problems.append(f"{where} label {key}: value {str(value)[:80]!r} is not a label value")
    return problems


def annotation_problems(annotations: dict[str, Any] | None, where: str) -> list[str]:
    annotations = annotations or {}
    problems = [f"{where} annotation {p}" for p in map(_qualified_name_problem, map(str, annotations)) if p]
    size = sum(len(str(k).encode()) + len(str(v).encode()) for k, v in annotations.items())
    if size > ANNOTATIONS_MAX_BYTES:
        problems.append(f"{where} annotations: {size} bytes, over {ANNOTATIONS_MAX_BYTES}")
    return problems


def _metadata(node: Any) -> Iterator[dict[str, Any]]:
    """The object's metadata and its templates' (pod, claim, job templates), wherever they nest."""
    if isinstance(node, dict):
        if isinstance(node.get("metadata"), dict):
            yield node["metadata"]
        for value in node.values():
            yield from _metadata(value)
    elif isinstance(node, list):
        for item in node:
            yield from _metadata(item)


FREE_FORM = ("labels", "annotations", "data", "stringData", "matchLabels", "selector")  # maps of the user's own keys


def _fields(node: Any, path: str) -> Iterator[tuple[str, str, Any]]:
    """(field name, path, value) of every field of every object below `node`, outside the free-form maps."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key not in FREE_FORM:
                yield key, f"{path}.{key}", value
                yield from _fields(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _fields(item, f"{path}[{index}]")


def _numbers(spec: Any) -> Iterator[tuple[str, str, Any]]:
    return (
        (key, path, value)
        for key, path, value in _fields(spec, "spec")
        if isinstance(value, int | float) and not isinstance(value, bool)
    )


def number_problems(obj: dict[str, Any]) -> list[str]:
    problems = []
    for key, path, value in _numbers(obj.get("spec", {})):
        if key in INT32_FIELDS and not (INT32_FIELDS[key] <= value <= INT32_MAX and float(value).is_integer()):
            problems.append(f"{_where(obj)} {path}: {value} is not an int32 of at least {INT32_FIELDS[key]}")
        elif key in INT64_FIELDS and not (INT64_FIELDS[key] <= value < 2**63 and float(value).is_integer()):
            problems.append(f"{_where(obj)} {path}: {value} is not an int64 of at least {INT64_FIELDS[key]}")
        elif key in PORT_FIELDS and not 1 <= value <= 65535:
            problems.append(f"{_where(obj)} {path}: port {value} is not in 1-65535")
    return problems


# k8s.io/apimachinery pkg/api/resource/quantity.go: <signedNumber><suffix>; no quantity represents more than 2^63-1.
_QUANTITY = re.compile(r"^([+-]?[0-9]+(?:\.[0-9]*)?|[+-]?\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][-+]?[0-9]+)?$")
_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60, "m": 1e-3}
_SUFFIX |= {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18, "": 1}


def quantity_problem(text: Any) -> str | None:
    """Why `text` is no Kubernetes quantity the API server keeps as written, or None."""
    match = _QUANTITY.match(str(text)) if isinstance(text, str | int) else None
    if match is None:
        return f"{str(text)[:40]!r} is not a quantity"
    number, suffix = match.group(1), match.group(2) or ""
    scale = 10 ** float(suffix[1:]) if suffix[:1] in ("e", "E") else _SUFFIX[suffix]
    if abs(float(number)) * scale > 2**63 - 1:
        return f"{str(text)[:40]!r} is more than a quantity holds (2^63-1)"
    return None


def _quantities(spec: Any) -> Iterator[tuple[str, Any]]:
    """(path, value) of every resource request and limit, emptyDir sizeLimit and claim storage."""
    for key, path, value in _fields(spec, "spec"):
        if key in ("requests", "limits") and isinstance(value, dict):
            yield from ((f"{path}.{name}", amount) for name, amount in value.items())
        elif key == "sizeLimit":
            yield path, value


def quantity_problems(obj: dict[str, Any]) -> list[str]:
    found = ((path, quantity_problem(value)) for path, value in _quantities(obj.get("spec", {})))
    return [f"{_where(obj)} {path}: {problem}" for path, problem in found if problem]


def pod_specs(obj: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(where, pod spec) of every pod template in `obj`, with the StatefulSet's claim templates as volumes."""
    found: list[tuple[str, dict[str, Any]]] = []
    spec = obj.get("spec", {})
    kind = obj.get("kind")
    if kind == "Pod":
        found.append(("pod", spec))
    for template in _templates(obj):
        pod = dict(template.get("spec", {}))
        if kind == "StatefulSet":
            claims = [
                {"name": c["metadata"]["name"], "persistentVolumeClaim": {}} for c in spec.get("volumeClaimTemplates", [])
            ]
            pod["volumes"] = [*pod.get("volumes", []), *claims]
        found.append((template.get("_where", "template"), pod))
    return found


def _templates(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The pod templates of a workload (LeaderWorkerSet: leader and worker), each with a `_where` note."""
    spec, kind = obj.get("spec", {}), obj.get("kind")
    if kind in ("Deployment", "StatefulSet", "DaemonSet", "Job", "ReplicaSet"):
        return [{**spec.get("template", {}), "_where": "template"}]
    if kind == "CronJob":
        return [{**spec.get("jobTemplate", {}).get("spec", {}).get("template", {}), "_where": "jobTemplate"}]
    if kind == "LeaderWorkerSet":
        templates = spec.get("leaderWorkerTemplate", {})
        return [{**templates[role], "_where": role} for role in ("leaderTemplate", "workerTemplate") if role in templates]
    return []


def _port_name_problem(name: str) -> str | None:
    if len(name) > 15 or not _IANA_SVC_NAME.match(name) or "--" in name or not re.search("[a-z]", name):
        return f"port name {name!r} is not an IANA service name (at most 15, a letter, no --)"
    return None


def _duplicates(names: list[str]) -> list[str]:
    return sorted({name for name in names if names.count(name) > 1})


def pod_problems(pod: dict[str, Any], where: str) -> list[str]:
    problems = []
    containers = [*pod.get("initContainers", []), *pod.get("containers", [])]
    names = [c.get("name", "") for c in containers]
    volumes = [v.get("name", "") for v in pod.get("volumes", [])]
    problems += [f"{where}: container name {n!r} twice" for n in _duplicates(names)]
    problems += [f"{where}: volume name {n!r} twice" for n in _duplicates(volumes)]
    problems += [
        f"{where}: {kind} name {n!r} is not a DNS-1123 label"
        for kind, group in (("container", names), ("volume", volumes))
        for n in group
        if len(n) > 63 or not _DNS1123_LABEL.match(n)
    ]
    for container in containers:
        at = f"{where} container {container.get('name')}"
        ports = container.get("ports", [])
        port_names = [p["name"] for p in ports if "name" in p]
        problems += [f"{at}: port name {n!r} twice" for n in _duplicates(port_names)]
        problems += [f"{at}: containerPort {n} twice" for n in _duplicates([p.get("containerPort") for p in ports])]
        problems += [f"{at}: {p}" for p in map(_port_name_problem, port_names) if p]
        env_names = [e.get("name", "") for e in container.get("env", [])]
        problems += [f"{at}: env {n!r} twice" for n in _duplicates(env_names)]
        problems += [f"{at}: env name {n!r}" for n in env_names if not _ENV_NAME.match(n)]
        for mount in container.get("volumeMounts", []):
            if mount.get("name") not in volumes:
                problems.append(f"{at}: volumeMount {mount.get('name')!r} names no volume of the pod")
        mount_paths = [m.get("mountPath") for m in container.get("volumeMounts", [])]
        problems += [f"{at}: mountPath {p!r} twice" for p in _duplicates(mount_paths)]
        for probe_kind in ("livenessProbe", "startupProbe"):
            if container.get(probe_kind, {}).get("successThreshold", 1) != 1:
                problems.append(f"{at}: {probe_kind}.successThreshold must be 1")
    return problems


def object_problems(obj: dict[str, Any]) -> list[str]:
    """What the API server's validation of this one object refuses."""
    meta, kind, where = obj.get("metadata", {}), str(obj.get("kind")), _where(obj)
    problems = [p for p in [name_problem(kind, str(meta.get("name", "")))] if p]
    if "namespace" in meta and (len(meta["namespace"]) > 63 or not _DNS1123_LABEL.match(meta["namespace"])):
        problems.append(f"{where}: namespace {meta['namespace']!r} is not a DNS-1123 label")
    for found in _metadata(obj):
        problems += label_problems(found.get("labels"), where)
        problems += annotation_problems(found.get("annotations"), where)
    for selector in _label_selectors(obj):
        problems += label_problems(selector.get("matchLabels"), f"{where} selector")
    if kind == "Service":
        selector = obj.get("spec", {}).get("selector")
        problems += label_problems(selector, f"{where} selector")
        port_names = [p.get("name") for p in obj.get("spec", {}).get("ports", []) if p.get("name")]
        problems += [f"{where}: port name {n!r} twice" for n in _duplicates(port_names)]
    problems += number_problems(obj) + quantity_problems(obj)
    for at, pod in pod_specs(obj):
        problems += pod_problems(pod, f"{where} {at}")
    problems += own_selector_problems(obj)
    return problems


# --- Selectors ------------------------------------------------------------------------------------------------
def _label_selectors(obj: dict[str, Any]) -> list[dict[str, Any]]:
    spec, kind = obj.get("spec", {}), obj.get("kind")
    if kind == "NetworkPolicy":
        return [spec.get("podSelector", {})]
    if kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "PodDisruptionBudget", "ServiceMonitor", "PodMonitor"):
        return [spec["selector"]] if isinstance(spec.get("selector"), dict) else []
    if kind == "InferencePool":
        return [spec.get("selector", {})]
    return []


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A LabelSelector (matchLabels, matchExpressions) against a label set."""
    if any(labels.get(key) != value for key, value in (selector.get("matchLabels") or {}).items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
        held = {"In": key in labels and labels[key] in values, "NotIn": labels.get(key) not in values}
        held |= {"Exists": key in labels, "DoesNotExist": key not in labels}
        if not held[operator]:
            return False
    return True


def own_selector_problems(obj: dict[str, Any]) -> list[str]:
    """A workload's selector must match its template's labels (apps/v1 validation: `selector` does not match)."""
    kind, spec = obj.get("kind"), obj.get("spec", {})
    if kind not in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet") and not (kind == "Job" and "selector" in spec):
        return []
    labels = spec.get("template", {}).get("metadata", {}).get("labels", {})
    if not spec.get("selector") and kind != "Job":
        return [f"{_where(obj)}: no selector"]
    if not selects(spec.get("selector", {}), labels):
        return [f"{_where(obj)}: selector {spec.get('selector')} does not match its template's labels {labels}"]
    return []


def pod_templates(objects: list[dict[str, Any]]) -> list[tuple[str, str, dict[str, str]]]:
    """(namespace, where, labels) of every rendered pod template, with the labels its controller adds."""
    found = []
    for obj in objects:
        meta = obj.get("metadata", {})
        namespace = meta.get("namespace", "")
        if obj.get("kind") == "Pod":
            found.append((namespace, _where(obj), dict(meta.get("labels", {}))))
        for template in _templates(obj):
            labels = dict(template.get("metadata", {}).get("labels", {}))
            if obj.get("kind") == "Job":
                labels |= {"job-name": meta.get("name"), "batch.kubernetes.io/job-name": meta.get("name")}
            if obj.get("kind") == "LeaderWorkerSet":
                labels |= {"leaderworkerset.sigs.k8s.io/name": meta.get("name")}
                index = "0" if template["_where"] == "leaderTemplate" else "1"
                labels |= {"leaderworkerset.sigs.k8s.io/worker-index": index}
            found.append((namespace, f"{_where(obj)} {template['_where']}", labels))
    return found


def _selected(selector: dict[str, Any], namespace: str, templates: list[tuple[str, str, dict[str, str]]]) -> list[str]:
    return [where for ns, where, labels in templates if ns == namespace and selects(selector, labels)]


def selector_problems(objects: list[dict[str, Any]]) -> list[str]:
    """Every selector-based object selects at least one rendered pod template (a ServiceMonitor: a rendered
    Service that does)."""
    templates, problems = pod_templates(objects), []
    services = [o for o in objects if o.get("kind") == "Service"]
    for obj in objects:
        kind, namespace, spec = obj.get("kind"), obj.get("metadata", {}).get("namespace", ""), obj.get("spec", {})
        if kind == "Service" and spec.get("selector") is not None:
            if not _selected({"matchLabels": spec["selector"]}, namespace, templates):
                problems.append(f"{_where(obj)}: selector {spec['selector']} selects no rendered pod")
        elif kind in ("NetworkPolicy", "PodDisruptionBudget", "PodMonitor", "InferencePool"):
            for selector in _label_selectors(obj):
                if not _selected(selector, namespace, templates):
                    problems.append(f"{_where(obj)}: selector {selector} selects no rendered pod")
        elif kind == "ServiceMonitor":
            names = spec.get("namespaceSelector", {}).get("matchNames") or [namespace]
            chosen = [
                s
                for s in services
                if s["metadata"].get("namespace") in names
                and selects(spec.get("selector", {}), s["metadata"].get("labels", {}))
            ]
            if not chosen:
                problems.append(f"{_where(obj)}: selector {spec.get('selector')} selects no rendered Service")
    return problems


# --- References -----------------------------------------------------------------------------------------------
def _pod_references(pod: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(kind, name) of every Secret, ConfigMap, claim and ServiceAccount the pod needs (optional ones left out)."""
    if pod.get("serviceAccountName"):
        yield "ServiceAccount", pod["serviceAccountName"]
    for volume in pod.get("volumes", []):
        if "secret" in volume and not volume["secret"].get("optional"):
            yield "Secret", volume["secret"].get("secretName", "")
        if "configMap" in volume and not volume["configMap"].get("optional"):
            yield "ConfigMap", volume["configMap"].get("name", "")
        if volume.get("persistentVolumeClaim", {}).get("claimName"):
            yield "PersistentVolumeClaim", volume["persistentVolumeClaim"]["claimName"]
        for source in volume.get("projected", {}).get("sources", []):
            for kind, key in (("Secret", "secret"), ("ConfigMap", "configMap")):
                if key in source and not source[key].get("optional"):
                    yield kind, source[key].get("name", "")
    for container in [*pod.get("initContainers", []), *pod.get("containers", [])]:
        for entry in container.get("env", []):
            source = entry.get("valueFrom", {})
            for kind, key in (("Secret", "secretKeyRef"), ("ConfigMap", "configMapKeyRef")):
                if key in source and not source[key].get("optional"):
                    yield kind, source[key].get("name", "")
        for entry in container.get("envFrom", []):
            for kind, key in (("Secret", "secretRef"), ("ConfigMap", "configMapRef")):
                if key in entry and not entry[key].get("optional"):
                    yield kind, entry[key].get("name", "")


def reference_problems(objects: list[dict[str, Any]], provided: Iterable[tuple[str, str]] = ()) -> list[str]:
    """Every object a pod needs is rendered (in its namespace) or in `provided` ((kind, name) the stack documents
    as the user's, such as delivery.object_storage.credentials_secret); the namespace's `default` account exists."""
    have = {(o.get("kind"), o.get("metadata", {}).get("namespace", ""), o.get("metadata", {}).get("name")) for o in objects}
    given = set(provided) | {("ServiceAccount", "default")}
    problems = []
    for obj in objects:
        namespace = obj.get("metadata", {}).get("namespace", "")
        for at, pod in pod_specs(obj):
            for kind, name in _pod_references(pod):
                if (kind, namespace, name) not in have and (kind, name) not in given:
                    problems.append(f"{_where(obj)} {at}: {kind} {name!r} is neither rendered nor provided by the user")
    return problems


def secret_key_problems(objects: list[dict[str, Any]]) -> list[str]:
    """Every key an env var takes from a rendered Secret (secretKeyRef) is one of its keys: the kubelet does not
    start a container whose required key is missing (CreateContainerConfigError, `couldn't find key`)."""
    keys = {
        (o["metadata"].get("namespace", ""), o["metadata"]["name"]): {*o.get("stringData", {}), *o.get("data", {})}
        for o in objects
        if o.get("kind") == "Secret"
    }
    problems = []
    for obj in objects:
        namespace = obj.get("metadata", {}).get("namespace", "")
        for at, pod in pod_specs(obj):
            for container in [*pod.get("initContainers", []), *pod.get("containers", [])]:
                for entry in container.get("env", []):
                    ref = entry.get("valueFrom", {}).get("secretKeyRef", {})
                    held = keys.get((namespace, ref.get("name", "")))
                    if held is not None and not ref.get("optional") and ref.get("key") not in held:
                        problems.append(
                            f"{_where(obj)} {at}: env {entry['name']} reads key {ref.get('key')!r}, "
                            f"which Secret {ref['name']!r} does not hold ({sorted(held)})"
                        )
    return problems


def stack_problems(objects: list[dict[str, Any]], provided: Iterable[tuple[str, str]] = ()) -> list[str]:
    """Everything above, over one stack's objects."""
    problems = [p for obj in objects for p in (*schema_problems(obj), *object_problems(obj))]
    return problems + reference_problems(objects, provided) + secret_key_problems(objects) + selector_problems(objects)
