"""Cluster checks: pure functions over ClusterFacts and plain values, each returning findings.

Each check takes the values the program renders (labels, access mode, features, ...) as arguments, so it
checks what is deployed, not a copy of the config rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from catalog import keda, keda_http
from catalog.gpus import GpuVendor
from catalog.selectors import Term
from catalog.storage import ClassSpec, is_node_local, volume_throughput
from catalog.vllm_images import MIN_DRIVER_MAJOR
from cluster.facts import (
    OWNER_LABEL,
    ClaimTemplate,
    ClusterFacts,
    Interceptor,
    Node,
    NodePool,
    Prometheus,
    StorageClass,
    Taint,
    quantity_int,
)
from cluster.findings import Finding, Level
from cluster.karpenter import Candidate, candidate_nodes
from cluster.selectors import matches_expression, matches_terms
from cluster.storage import ZONAL_DISKS, access_modes_of, describe_modes
from cluster.versions import keda_minimum, show
from reading.numbers import go_duration_seconds, whole_number

BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


def describe_terms(terms: list[Term]) -> str:
    """`key In [a, b]` expressions, AND within a term, OR between terms."""

    def expression(e: Mapping[str, Any]) -> str:
        return f"{e['key']} {e['operator']} [{', '.join(e.get('values') or [])}]"

    return " or ".join(" and ".join(expression(e) for e in t["matchExpressions"]) for t in terms) or "any node"


def tolerated(taints: Iterable[Taint], tolerations: Iterable[Mapping[str, str]]) -> list[Taint]:
    """The taints that keep the pods off (NoSchedule/NoExecute ones no toleration matches)."""

    def tolerates(t: Mapping[str, str], taint: Taint) -> bool:
        key_ok = t.get("key", "") in ("", taint.key) if t.get("operator") == "Exists" else t.get("key") == taint.key
        value_ok = t.get("operator") == "Exists" or t.get("value", "") == taint.value
        return key_ok and value_ok and t.get("effect", "") in ("", taint.effect)

    rules = list(tolerations)
    return [x for x in taints if x.effect in BLOCKING_EFFECTS and not any(tolerates(t, x) for t in rules)]


def gpu_nodes(facts: ClusterFacts, terms: list[Term], vendor: GpuVendor) -> list[Node]:
    """The nodes the server pods may land on that offer the vendor's GPUs."""
    return [n for n in facts.nodes if matches_terms(n.labels, terms) and _gpus(n, vendor) > 0]


def _gpus(node: Node, vendor: GpuVendor) -> int:
    return quantity_int(node.allocatable.get(vendor.resource, 0))


def _show_taints(taints: list[Taint]) -> str:
    return ", ".join(f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}" for t in taints)


# --- GPU capacity ---------------------------------------------------------------------------------------


def check_gpu(
    facts: ClusterFacts,
    terms: list[Term],
    gpus_per_replica: int,
    tolerations: Iterable[Mapping[str, str]],
    label_fix: str,
    vendor: GpuVendor,
) -> list[Finding]:
    """A node, or a pool that can create one, matches the GPU selector terms, has at least gpus_per_replica
    allocatable nvidia.com/gpu and no taint the pods do not tolerate. label_fix: how to change the selector."""
    rules = list(tolerations)
    wanted = describe_terms(terms)
    matching = [n for n in facts.nodes if matches_terms(n.labels, terms) and not n.unschedulable]
    fit = nodes_that_fit(facts, terms, gpus_per_replica, rules, vendor)
    if fit:
        return [
            Finding(
                "gpu",
                "ok",
                f"{len(fit)} node(s) match {wanted} with >= {gpus_per_replica} allocatable "
                f"{vendor.resource} (e.g. {fit[0].name}: {_gpus(fit[0], vendor)}).",
            )
        ]
    found = _pool_that_fits(facts.node_pools or (), terms, gpus_per_replica, rules)
    if found:
        pool, candidate = found
        creates = f"node pool {pool.name} ({candidate.name}) can create one with >= {gpus_per_replica} {vendor.resource}"
        if candidate.unknown:
            return [
                Finding(
                    "gpu",
                    "warn",
                    f"no node matches {wanted} yet; {creates} only if its requirements on "
                    f"{', '.join(candidate.unknown)} allow it (not modelled: catalog/instances.py).",
                    "check those requirements against the instance type, or add a node that matches.",
                )
            ]
        return [Finding("gpu", "ok", f"no node matches {wanted} yet, but {creates} (scale from zero).")]
    return [_gpu_block(facts, matching, terms, gpus_per_replica, rules, label_fix, vendor)]


def nodes_that_fit(
    facts: ClusterFacts, terms: list[Term], need: int, tolerations: Iterable[Mapping[str, str]], vendor: GpuVendor
) -> list[Node]:
    """The schedulable nodes that take one replica: they match the terms, offer `need` GPUs and carry no taint the
    pods do not tolerate."""
    rules = list(tolerations)
    return [
        n
        for n in facts.nodes
        if matches_terms(n.labels, terms) and not n.unschedulable
        if _gpus(n, vendor) >= need and not tolerated(n.taints, rules)
    ]


def candidates_that_fit(
    pools: Iterable[NodePool], terms: list[Term], need: int, tolerations: Iterable[Mapping[str, str]]
) -> list[tuple[NodePool, Candidate]]:
    """Each pool with each node it can create for one replica (a Karpenter pool: per instance and capacity type)."""
    return _fits(pools, terms, need, list(tolerations))


def _pool_that_fits(
    pools: Iterable[NodePool], terms: list[Term], need: int, rules: list[Mapping[str, str]]
) -> tuple[NodePool, Candidate] | None:
    """A pool and a node it can create for one replica; one whose every requirement is decided comes first."""
    return min(_fits(pools, terms, need, rules), key=lambda found: len(found[1].unknown), default=None)


def pools_of(fits: Iterable[tuple[NodePool, Candidate]]) -> list[NodePool]:
    """Each pool of candidates_that_fit, once, in the order given."""
    fitting = [pool for pool, _ in fits]
    return [pool for i, pool in enumerate(fitting) if pool not in fitting[:i]]


def _fits(
    pools: Iterable[NodePool], terms: list[Term], need: int, rules: list[Mapping[str, str]]
) -> list[tuple[NodePool, Candidate]]:
    return [
        (pool, candidate)
        for pool in pools
        if not (pool.gpu_limit is not None and pool.gpu_limit < need) and not tolerated(pool.taints, rules)
        for candidate in candidate_nodes(pool)
        if matches_terms(candidate.labels, terms) and (candidate.gpus is None or candidate.gpus >= need)
    ]


def _gpu_block(
    facts: ClusterFacts,
    matching: list[Node],
    terms: list[Term],
    need: int,
    rules: list[Mapping[str, str]],
    label_fix: str,
    vendor: GpuVendor,
) -> Finding:
    wanted = describe_terms(terms)
    if matching:
        best = max(matching, key=lambda node: _gpus(node, vendor))
        if _gpus(best, vendor) < need:
            return Finding(
                "gpu",
                "block",
                f"nodes matching {wanted} offer at most {_gpus(best, vendor)} allocatable "
                f"{vendor.resource} ({best.name}); one replica needs {need}.",
                "use nodes with more GPUs, or lower engine.tensor_parallel_size x pipeline_parallel_size.",
            )
        taints = tolerated(best.taints, rules)
        return Finding(
            "gpu",
            "block",
            f"nodes matching {wanted} are tainted {_show_taints(taints)}, which the pods do not tolerate.",
            f"taint the GPU nodes {vendor.taint_key} instead, or set cluster.profile (aks tolerates sku=gpu).",
        )
    gpu_nodes = [n for n in facts.nodes if _gpus(n, vendor) > 0]
    seen = "; ".join(f"{n.name}: {_gpu_labels(n, vendor)}" for n in gpu_nodes[:3]) or f"no node has {vendor.resource}"
    karpenter = any(e["key"].startswith("karpenter.") for t in terms for e in t["matchExpressions"])
    pools = " Karpenter NodePools were not read." if karpenter and facts.node_pools is None else ""
    return Finding(
        "gpu",
        "block",
        f"no node and no node pool matches {wanted}, so the pods stay Pending (GPU nodes seen: {seen}).{pools}",
        label_fix,
    )


def _gpu_labels(node: Node, vendor: GpuVendor) -> str:
    keys = (
        vendor.product_label,
        "cloud.google.com/gke-accelerator",
        "karpenter.k8s.aws/instance-gpu-name",
        "karpenter.k8s.aws/instance-gpu-memory",
        "node.kubernetes.io/instance-type",
    )
    shown = [f"{k}={node.labels[k]}" for k in keys if k in node.labels]
    return ", ".join(shown) + f", {_gpus(node, vendor)} x {vendor.resource}"


# --- the GPU driver vs the image's CUDA (a CUDA build: NVIDIA) ------------------------------------------


def check_driver(
    facts: ClusterFacts, terms: list[Term], cuda_major: int | None, image: str, vendor: GpuVendor
) -> list[Finding]:
    """GPU nodes the pods may land on run a driver that can run the image's CUDA (when both are known)."""
    minimum = MIN_DRIVER_MAJOR.get(cuda_major) if cuda_major is not None else None
    if minimum is None:
        return []
    nodes = gpu_nodes(facts, terms, vendor)
    known = {n.name: int(v) for n in nodes for v in [_driver(n, vendor)] if v is not None}
    old = sorted(name for name, major in known.items() if major < minimum)
    fix = f"upgrade the GPU nodes' driver to >= {minimum}, or use the image's CUDA 12.9 build (vllm.tag: v<version>-cu129)."
    if old:
        level: Level = "block" if len(old) == len(nodes) else "warn"
        return [
            Finding(
                "driver",
                level,
                f"{image} is a CUDA {cuda_major} build that needs NVIDIA driver >= "
                f"{minimum}, but {', '.join(old)} run(s) driver {known[old[0]]}.",
                fix,
            )
        ]
    if nodes and len(known) == len(nodes):
        return [Finding("driver", "ok", f"GPU nodes run driver >= {minimum}, as {image} (CUDA {cuda_major}) needs.")]
    why = "the GPU nodes carry no GPU Feature Discovery driver label" if nodes else "no matching GPU node exists yet"
    return [
        Finding(
            "driver",
            "warn",
            f"{image} is a CUDA {cuda_major} build that needs NVIDIA driver >= {minimum}; the driver is not known ({why}).",
            f"make sure the GPU node image's driver is >= {minimum}, or use vllm.tag: v<version>-cu129.",
        )
    ]


def _driver(node: Node, vendor: GpuVendor) -> str | None:
    return next((node.labels[k] for k in vendor.driver_labels if whole_number(node.labels.get(k, ""), 6) is not None), None)


# --- storage --------------------------------------------------------------------------------------------


def check_storage(facts: ClusterFacts, storage_class: str | None, access_mode: str) -> list[Finding]:
    """The claim's class exists (or a default does) and its provisioner supports the access mode."""
    names = ", ".join(sorted(c.name for c in facts.storage_classes)) or "none"
    if storage_class is None:
        defaults = [c for c in facts.storage_classes if c.is_default]
        if not defaults:
            return [
                Finding(
                    "storage",
                    "block",
                    f"no default StorageClass (classes: {names}), so a claim without a "
                    "class stays Pending and the download Job never starts.",
                    "set cache.storage_class_name to one of the classes.",
                )
            ]
        chosen, how = defaults[0], "the default class"
    else:
        found = [c for c in facts.storage_classes if c.name == storage_class]
        if not found:
            able = [c.name for c in facts.storage_classes if access_mode in (access_modes_of(c.provisioner) or ())]
            fix = (
                f"set cache.storage_class_name to {' or '.join(able)} ({access_mode})"
                if able
                else f"install a storage driver with {access_mode} (EFS, Filestore, Azure Files, CephFS, NFS) and name its "
                "class in cache.storage_class_name"
            )
            return [
                Finding(
                    "storage",
                    "block",
                    f"StorageClass {storage_class} does not exist (classes: {names}).",
                    fix + ("." if access_mode == "ReadWriteOnce" else ", or delivery.mode: per_replica_volume."),
                )
            ]
        chosen, how = found[0], "class"
    return [_access_mode(facts, chosen, how, access_mode), *_binding(chosen)]


def _stack_class(facts: ClusterFacts, storage_class: str | None) -> StorageClass | None:
    """The class the cache's claims get: the one named, else the cluster's default (None when there is none)."""
    return next((c for c in facts.storage_classes if (c.name == storage_class if storage_class else c.is_default)), None)


def check_read_throughput(
    facts: ClusterFacts, storage_class: str | None, size_gib: int, budget: DeliveryTerms
) -> list[Finding]:
    """The cluster's class (catalog/storage.py from its provisioner and parameters) against the throughput the
    startup budget assumed: slower than the probe covers blocks, slower than assumed warns."""
    chosen = _stack_class(facts, storage_class)
    if chosen is None:
        return []  # check_storage reports the missing class
    actual = volume_throughput(ClassSpec(chosen.provisioner, chosen.parameters), size_gib)
    if not actual.known or actual.mib_per_s >= budget.assumed_mib_per_s * 0.95:
        return []
    needed = budget.weights_gib * 1024 / actual.mib_per_s + budget.other_seconds
    level: Level = "block" if needed > budget.probe_seconds else "warn"
    effect = (
        f"the {budget.probe_seconds} s startup probe would expire ({needed:.0f} s needed)"
        if level == "block"
        else f"the startup probe's margin shrinks to {budget.probe_seconds - needed:.0f} s"
    )
    return [
        Finding(
            "storage",
            level,
            f"StorageClass {chosen.name} ({chosen.provisioner}, {dict(chosen.parameters)}) reads "
            f"{actual.mib_per_s:g} MiB/s ({actual.source}), but the startup budget assumes "
            f"{budget.assumed_mib_per_s:g} MiB/s: {effect}.",
            f"set probes.load_throughput_gib_per_s: {actual.mib_per_s / 1024:.3f} (the budget follows), or name a "
            "faster class in cache.storage_class_name (gp3 with a `throughput` parameter), or delivery.mode: "
            "object_storage.",
        )
    ]


def check_node_local(facts: ClusterFacts, storage_class: str | None, node_local: str | None, size_gib: int) -> list[Finding]:
    """A node-local class binds each claim to one node: it must wait for the pod (WaitForFirstConsumer), the stack
    should say so (delivery.node_local), and its disk's room is not something the API shows."""
    chosen = _stack_class(facts, storage_class)
    if chosen is None:
        return []  # check_storage reports the missing class
    label = f"StorageClass {chosen.name} ({chosen.provisioner})"
    local = is_node_local(chosen.provisioner)
    findings = []
    if local and chosen.binding_mode != "WaitForFirstConsumer":
        findings.append(
            Finding(
                "storage",
                "block",
                f"{label} binds Immediately: the node-local volume is placed before the server pod is scheduled, on "
                "any node (one without the GPUs, or already full), and the pod is then bound to that node.",
                "create a class with volumeBindingMode: WaitForFirstConsumer (a class's binding mode cannot be "
                "changed) and name it in cache.storage_class_name.",
            )
        )
    if local and node_local is None:
        findings.append(
            Finding(
                "storage",
                "warn",
                f"{label} keeps each claim on one node's disk, but delivery.node_local is unset: the budget reads at "
                "an unknown class's conservative rate and the report does not count a fresh node's download.",
                "set delivery.node_local: nvme (instance store, local SSD) or boot_disk.",
            )
        )
    if node_local is not None and not local and access_modes_of(chosen.provisioner) is not None:
        findings.append(
            Finding(
                "storage",
                "warn",
                f"delivery.node_local is {node_local}, but {label} is a network disk: the budget assumed the node-local rate.",
                "name a node-local class in cache.storage_class_name, or remove delivery.node_local.",
            )
        )
    if node_local is not None and (local or access_modes_of(chosen.provisioner) is None):
        findings.append(
            Finding(
                "storage",
                "warn",
                f"each GPU node's local disk behind {chosen.name} must hold a {size_gib} GiB claim per replica it "
                "runs; not checked: a node-local volume's free space is not in the Node objects (their "
                "ephemeral-storage is the kubelet's root file system, and local static PVs are listed only as PVs).",
                "check the disks (kubectl get pv for local static PVs; the provisioner's path on each node for "
                "local-path or OpenEBS hostpath), or set cache.size_gib to what one replica needs.",
            )
        )
    return findings


@dataclass(frozen=True)
class DeliveryTerms:
    """What the throughput check needs of the startup budget."""

    assumed_mib_per_s: float
    weights_gib: float
    other_seconds: float  # engine start, compile and CUDA graphs
    probe_seconds: int


def _access_mode(facts: ClusterFacts, chosen: StorageClass, how: str, access_mode: str) -> Finding:
    modes = access_modes_of(chosen.provisioner)
    label = f"{how} {chosen.name} ({chosen.provisioner})"
    if modes is None:
        return Finding(
            "storage",
            "warn",
            f"{label}: whether it supports {access_mode} is not known.",
            "check the driver's documentation; the claim stays Pending if it does not.",
        )
    if access_mode in modes:
        return Finding("storage", "ok", f"{label} supports {access_mode}.")
    better = [c.name for c in facts.storage_classes if access_mode in (access_modes_of(c.provisioner) or ())]
    fix = (
        f"set cache.storage_class_name to {' or '.join(better)}"
        if better
        else f"install a storage driver with {access_mode} (EFS, Filestore, Azure Files, CephFS, NFS)"
    )
    return Finding(
        "storage",
        "block",
        f"{label} supports {describe_modes(modes)} only, but the model cache asks for "
        f"{access_mode}: the claim stays Pending and the download Job never starts.",
        fix + ("" if access_mode == "ReadWriteOnce" else ", or cache.access_mode: ReadWriteOnce with one replica") + ".",
    )


def _binding(chosen: StorageClass) -> list[Finding]:
    if chosen.binding_mode == "WaitForFirstConsumer":
        return [
            Finding(
                "storage",
                "ok",
                f"{chosen.name} binds on first consumer: the claim stays Pending until the "
                "download Job's pod is scheduled, and is then created in that pod's zone.",
            )
        ]
    if chosen.provisioner in ZONAL_DISKS:
        return [
            Finding(
                "storage",
                "warn",
                f"{chosen.name} binds Immediately: a zonal disk may be created in a zone "
                "without GPU nodes, and the pods then cannot mount it.",
                "use a class with volumeBindingMode: WaitForFirstConsumer.",
            )
        ]
    return []


# --- KEDA -----------------------------------------------------------------------------------------------


def check_keda(facts: ClusterFacts, features: Iterable[str]) -> list[Finding]:
    """KEDA is installed and its version accepts every rendered feature (cluster/versions.py KEDA_FEATURES)."""
    minimum, needing = keda_minimum(features)
    need = f">= {show(minimum)} for {', '.join(needing)}" if needing != ["scaledobject"] else "any release"
    if not facts.has_crd("scaledobjects.keda.sh"):
        return [
            Finding(
                "keda",
                "block",
                "KEDA is not installed (no scaledobjects.keda.sh CRD); the ScaledObject cannot be created.",
                f"install KEDA ({need}), or set autoscaling.enabled: false.",
            )
        ]
    if facts.keda_version is None:
        return [
            Finding(
                "keda",
                "warn",
                f"KEDA is installed but its version is not known; this stack needs {need}.",
                "add `kubectl get deployments -n <keda namespace> -o json` to the snapshot (or set cluster.keda_namespace).",
            )
        ]
    from cluster.facts import parse_version

    if parse_version(facts.keda_version) < minimum:
        return [
            Finding(
                "keda",
                "block",
                f"KEDA {facts.keda_version} rejects this ScaledObject; it needs {need}.",
                f"upgrade KEDA to {show(minimum)} or newer, or set autoscaling.enabled: false.",
            )
        ]
    if needing == ["scaledobject"]:
        return [
            Finding(
                "keda",
                "ok",
                f"KEDA {facts.keda_version} accepts every rendered field (no version-gated one "
                "is rendered for autoscaling.keda_version).",
            )
        ]
    return [Finding("keda", "ok", f"KEDA {facts.keda_version} accepts every rendered field (needs {need}).")]


def check_keda_release(installed: str | None, configured: str) -> list[Finding]:
    """The ScaledObject follows autoscaling.keda_version, not the cluster (plan/scaling.py keda_features): a
    cluster running a release with fallback.behavior while keda_version is older gets KEDA's static fallback,
    which during a Prometheus outage sets fallback.replicas whatever the load (4 replicas under load drop to 2)."""
    if installed is None:
        return []
    try:
        running = keda.parse_version(installed)
    except ValueError:
        return []
    feature = keda.Feature.FALLBACK_BEHAVIOR
    if keda.supports(configured, feature) or running < keda.parse_version(keda.FEATURES[feature][0]):
        return []
    release = f"{running[0]}.{running[1]}"
    return [
        Finding(
            "keda",
            "warn",
            f"the cluster runs KEDA {installed}, but autoscaling.keda_version is {configured!r}: the ScaledObject "
            f"leaves out {feature} (KEDA >= {keda.FEATURES[feature][0]}), so a Prometheus outage sets the static "
            "fallback.replicas instead of keeping the current count.",
            f'set autoscaling.keda_version: "{release}".',
        )
    ]


# --- Prometheus -----------------------------------------------------------------------------------------


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A metav1.LabelSelector; None (null) matches nothing, {} matches everything."""
    if selector is None:
        return False
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not isinstance(match_labels, Mapping) or not isinstance(expressions, list):
        return False
    return all(labels.get(k) == v for k, v in match_labels.items()) and all(
        isinstance(e, Mapping) and matches_expression(labels, e) for e in expressions
    )


def _namespace_selected(
    selector: Mapping[str, Any] | None, own: str, namespace: str, namespace_labels: Mapping[str, str]
) -> bool:
    """Prometheus *NamespaceSelector: null = the Prometheus's own namespace only, {} = every namespace."""
    return namespace == own if selector is None else selector_matches(selector, namespace_labels)


def check_prometheus(
    facts: ClusterFacts,
    monitor_kind: str,
    monitor_labels: Mapping[str, str],
    rule_labels: Mapping[str, str],
    namespace: str,
    namespace_labels: Mapping[str, str],
    server_address: str | None = None,
) -> list[Finding]:
    """The Prometheus Operator CRDs exist and some Prometheus selects the monitor's and the rule's labels in
    this namespace; when KEDA queries Prometheus (server_address), it is that Prometheus's Service."""
    plural = "servicemonitors" if monitor_kind == "ServiceMonitor" else "podmonitors"
    missing = [c for c in (f"{plural}.monitoring.coreos.com", "prometheusrules.monitoring.coreos.com") if not facts.has_crd(c)]
    if missing:
        return [
            Finding(
                "prometheus",
                "block",
                f"the Prometheus Operator CRDs {', '.join(missing)} are not installed.",
                "install kube-prometheus-stack (or the Prometheus Operator), or set monitoring.enabled: false.",
            )
        ]
    if not facts.prometheuses:
        why = "were not read" if facts.prometheuses is None else "do not exist"
        return [
            Finding(
                "prometheus",
                "warn",
                f"Prometheus objects {why}, so whether anything scrapes the {monitor_kind} and loads the rules is not known.",
                "add `kubectl get prometheuses.monitoring.coreos.com -A -o json` to the snapshot.",
            )
        ]
    field = "serviceMonitor" if monitor_kind == "ServiceMonitor" else "podMonitor"
    monitors = [p for p in facts.prometheuses if _selects(p, field, monitor_labels, namespace, namespace_labels)]
    rules = [p for p in facts.prometheuses if _selects(p, "rule", rule_labels, namespace, namespace_labels)]
    if not monitors or not rules:
        return [
            _not_selected(
                facts, monitor_kind if not monitors else "PrometheusRule", monitor_labels if not monitors else rule_labels
            )
        ]
    found = [
        Finding(
            "prometheus",
            "ok",
            f"Prometheus {monitors[0].namespace}/{monitors[0].name} selects the {monitor_kind} and the PrometheusRule.",
        )
    ]
    return found + _server_address(monitors, server_address)


def _selects(p: Prometheus, field: str, labels: Mapping[str, str], namespace: str, namespace_labels: Mapping[str, str]) -> bool:
    selector, ns_selector = {
        "rule": (p.rule_selector, p.rule_namespace_selector),
        "serviceMonitor": (p.service_monitor_selector, p.service_monitor_namespace_selector),
        "podMonitor": (p.pod_monitor_selector, p.pod_monitor_namespace_selector),
    }[field]
    return selector_matches(selector, labels) and _namespace_selected(ns_selector, p.namespace, namespace, namespace_labels)


def _not_selected(facts: ClusterFacts, kind: str, labels: Mapping[str, str]) -> Finding:
    wants = "; ".join(f"{p.namespace}/{p.name} selects {_show_selector(p)}" for p in (facts.prometheuses or ())[:3])
    release = next(
        (
            str(s["matchLabels"]["release"])
            for p in facts.prometheuses or ()
            for s in [p.service_monitor_selector]
            if s and "release" in (s.get("matchLabels") or {})
        ),
        None,
    )
    fix = f"set monitoring.release: {release}" if release else "set monitoring.release to the label your Prometheus selects"
    shown = ", ".join(f"{k}: {v}" for k, v in sorted(labels.items()))
    return Finding(
        "prometheus",
        "block",
        f"no Prometheus selects the {kind} labelled {{{shown}}} in this namespace "
        f"({wants}): nothing is scraped, no alert loads, and KEDA sits on its "
        "fallback.",
        fix + ".",
    )


def _show_selector(p: Prometheus) -> str:
    selector = p.service_monitor_selector
    if selector is None:
        return "nothing"
    labels = selector.get("matchLabels") or {}
    return "{" + ", ".join(f"{k}: {v}" for k, v in sorted(labels.items())) + "}" if labels else "everything"


def _server_address(monitors: list[Prometheus], server_address: str | None) -> list[Finding]:
    """kube-prometheus-stack's Service has the Prometheus's name; the operator adds `prometheus-operated`."""
    if server_address is None:
        return []
    host = server_address.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0]
    service, _, rest = host.partition(".")
    service_namespace = rest.split(".", 1)[0] if rest else ""
    for p in monitors:
        if service in (p.name, "prometheus-operated") and service_namespace == p.namespace:
            return [Finding("prometheus", "ok", f"KEDA queries {p.namespace}/{p.name} ({server_address}).")]
    p = monitors[0]
    return [
        Finding(
            "prometheus",
            "warn",
            f"autoscaling.server_address {server_address} is not the Service of the "
            f"Prometheus that scrapes this stack ({p.namespace}/{p.name}).",
            f"set autoscaling.server_address: http://{p.name}.{p.namespace}.svc:9090.",
        )
    ]


# --- namespace ------------------------------------------------------------------------------------------


# Pod Security admission rejects a pod that violates the level its namespace's enforce label names
# (kubernetes.io/docs/concepts/security/pod-security-admission); the levels from the most permissive.
POD_SECURITY_ENFORCE = "pod-security.kubernetes.io/enforce"
POD_SECURITY_LEVELS = ("privileged", "baseline", "restricted")


@dataclass(frozen=True)
class NamespaceNeeds:
    """The namespace the stack deploys into and the Pod Security level its pods meet (plan/security.py)."""

    name: str
    create: bool
    instance: str
    pod_security: str  # privileged, baseline or restricted
    why: str  # what needs a level below restricted


def check_namespace(facts: ClusterFacts, needs: NamespaceNeeds) -> list[Finding]:
    """Created and owned by this stack (label app.kubernetes.io/instance), or existing and left alone, where its
    enforced Pod Security level must admit the pods; never two stacks owning one."""
    namespace, create, instance = needs.name, needs.create, needs.instance
    if facts.namespaces is None:
        return [
            Finding(
                "namespace",
                "warn",
                f"namespaces were not read, so whether {namespace} exists is not known.",
                "add namespaces to the snapshot (the kubectl command in the README).",
            )
        ]
    labels = facts.namespaces.get(namespace)
    if labels is None:
        if create:
            return [
                Finding(
                    "namespace", "ok", f"{namespace} does not exist; this stack creates and owns it ({OWNER_LABEL}={instance})."
                )
            ]
        return [
            Finding(
                "namespace",
                "block",
                f"{namespace} does not exist and namespace.create is false.",
                f"create it first (kubectl create namespace {namespace}), or set namespace.create: true.",
            )
        ]
    owner = labels.get(OWNER_LABEL)
    if not create:
        return _enforced_level(needs, labels.get(POD_SECURITY_ENFORCE)) or [
            Finding("namespace", "ok", f"{namespace} exists and is left alone (namespace.create: false).")
        ]
    if owner == instance:
        return [Finding("namespace", "ok", f"{namespace} exists and is owned by this stack ({OWNER_LABEL}={instance}).")]
    who = f"is owned by {owner} ({OWNER_LABEL})" if owner else "exists and was not created by this stack"
    return [
        Finding(
            "namespace",
            "block",
            f"{namespace} {who}; creating it again fails, and destroying this stack would delete everything in it.",
            f"set namespace.create: false to use it as it is, or choose another namespace.name (e.g. {instance}).",
        )
    ]


def _enforced_level(needs: NamespaceNeeds, enforced: str | None) -> list[Finding]:
    """A block when the existing namespace enforces a stricter level than the pods meet: every such pod is rejected
    at creation, so its controller retries while `pulumi up` waits out its timeout. No label: the cluster's default
    (the API server's admission configuration), which no snapshot shows."""
    if enforced not in POD_SECURITY_LEVELS or POD_SECURITY_LEVELS.index(enforced) <= POD_SECURITY_LEVELS.index(
        needs.pod_security
    ):
        return []
    return [
        Finding(
            "namespace",
            "block",
            f"{needs.name} enforces {POD_SECURITY_ENFORCE}: {enforced}, but {needs.why}, which only the "
            f"{needs.pod_security} level admits: Pod Security admission would reject those pods.",
            f"kubectl label namespace {needs.name} {POD_SECURITY_ENFORCE}={needs.pod_security} --overwrite (if its "
            "other workloads may run there), or deploy into a namespace this stack creates (namespace.create: true), "
            "or set multinode.ipc_lock: false if the nodes' memlock limit is unlimited.",
        )
    ]


@dataclass(frozen=True)
class ReplicaClaims:
    """What the stack's StatefulSet will claim per replica, and what a replacement of it costs."""

    namespace: str
    statefulset: str
    template: ClaimTemplate
    replicas: int  # the most that run: all of them stop together on a replacement
    back_seconds: int  # a replica's download and start from its emptied claim (the plan's budgets)
    accepted: bool  # delivery.accept_replacement_outage


def check_replica_claims(facts: ClusterFacts, claims: ReplicaClaims) -> list[Finding]:
    """A StatefulSet whose claim template would change: the API refuses the update, so pulumi-kubernetes
    deletes and recreates it (the name is fixed), and every replica stops at once."""
    if facts.statefulsets is None:
        return []
    current = {t.name: t for t in facts.statefulsets.get(f"{claims.namespace}/{claims.statefulset}", ())}
    before, after = current.get(claims.template.name), claims.template
    if before is None or (before.storage, before.storage_class) == (after.storage, after.storage_class):
        return []
    change = f"{before.storage} -> {after.storage}" + (
        f", class {before.storage_class or 'default'} -> {after.storage_class or 'default'}"
        if before.storage_class != after.storage_class
        else ""
    )
    message = (
        f"StatefulSet {claims.namespace}/{claims.statefulset} exists with another claim template ({change}); the API "
        f"refuses that update, so it is deleted and created again: all {claims.replicas} replica(s) stop at once and "
        f"come back after about {claims.back_seconds // 60} min (download and start)."
    )
    if claims.accepted:
        return [Finding("storage", "warn", message + " Accepted by delivery.accept_replacement_outage.")]
    return [
        Finding(
            "storage",
            "block",
            message,
            f"keep the claims: set cache.size_gib to {before.storage.removesuffix('Gi')} if the new model fits in it; "
            "or accept the outage for this update with delivery.accept_replacement_outage: true (then remove it).",
        )
    ]


# --- KEDA HTTP add-on -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class AddOnNeeds:
    """What the stack assumes of the KEDA HTTP add-on (autoscaling.http_add_on)."""

    version: str
    namespace: str
    request_timeout_seconds: int | None
    crd: str = keda_http.HTTP_SCALED_OBJECT_CRD  # the rendered resource's: HTTPScaledObject or InterceptorRoute


def check_http_add_on(facts: ClusterFacts, needs: AddOnNeeds) -> list[Finding]:
    """The add-on's CRD is served, its interceptor runs the stated release, and its install-wide request timeout
    is the one the feasibility check used."""
    if not facts.has_crd(needs.crd):
        return [
            Finding(
                "keda-http-add-on",
                "block",
                f"the KEDA HTTP add-on is not installed (no {needs.crd} CRD): the route cannot be created and "
                "nothing would hold requests at zero.",
                f"install it (helm install http-add-on kedacore/keda-add-ons-http -n {needs.namespace}, "
                f"{keda_http.OLDEST_SUPPORTED} or newer), or remove autoscaling.http_add_on and set "
                "autoscaling.min_replica_count to 1 or more.",
            )
        ]
    found = facts.interceptor
    if found is None:
        return [
            Finding(
                "keda-http-add-on",
                "warn",
                f"the {needs.crd} CRD is served, but no interceptor Deployment was read, so its release and "
                "request timeout are unchecked.",
                f"include namespace {needs.namespace}'s Deployments in the snapshot (or cluster.keda_namespace).",
            )
        ]
    return _interceptor_findings(found, needs)


def _interceptor_findings(found: Interceptor, needs: AddOnNeeds) -> list[Finding]:
    findings: list[Finding] = []
    if found.version is not None and not keda_http.supported(found.version):
        findings.append(
            Finding(
                "keda-http-add-on",
                "block",
                f"the interceptor runs {found.version}, older than {keda_http.OLDEST_SUPPORTED}: its metrics and "
                "timeouts differ from what the HTTPScaledObject and the alerts expect.",
                f"upgrade the add-on to {keda_http.RELEASE} or newer.",
            )
        )
    elif found.version is not None and keda_http.parse_version(found.version) != keda_http.parse_version(needs.version):
        findings.append(
            Finding(
                "keda-http-add-on",
                "warn",
                f"the interceptor runs {found.version}, but autoscaling.http_add_on.version is {needs.version!r}.",
                f'set autoscaling.http_add_on.version: "{found.version}".',
            )
        )
    if found.namespace and found.namespace != needs.namespace:
        findings.append(
            Finding(
                "keda-http-add-on",
                "block",
                f"the interceptor runs in namespace {found.namespace}, but the route and the ReferenceGrant name "
                f"{needs.namespace} (autoscaling.http_add_on.namespace).",
                f"set autoscaling.http_add_on.namespace: {found.namespace}.",
            )
        )
    findings += _timeout_findings(found, needs)
    return findings or [Finding("keda-http-add-on", "ok", f"the KEDA HTTP add-on {found.version} runs in {found.namespace}.")]


def _timeout_findings(found: Interceptor, needs: AddOnNeeds) -> list[Finding]:
    seconds = go_duration_seconds(found.request_timeout) if found.request_timeout else None
    installed = int(seconds) if seconds else None  # 0s and unset: no deadline
    if installed == needs.request_timeout_seconds:
        return []
    return [
        Finding(
            "keda-http-add-on",
            "warn",
            f"the interceptor's KEDA_HTTP_REQUEST_TIMEOUT is {found.request_timeout or 'unset'}, but "
            f"autoscaling.http_add_on.request_timeout_seconds is {needs.request_timeout_seconds}: the cold-start "
            "check compared the wrong deadline.",
            f"set autoscaling.http_add_on.request_timeout_seconds: {installed if installed else 'null'}.",
        )
    ]
