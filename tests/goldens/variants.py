"""The stacks the goldens record: every stack file in stacks/ and tests/, and feature variants of the shipped
stacks, so that a refactor that changes any rendered object or report field fails tests/test_goldens.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.factories import REPO

# tests/data/pr-comment holds copies of shipped stacks (and prod on vLLM 0.7.2): their golden is the PR comment's.
# tests/data/hub/stacks/ name models read from a served Hub: tests/test_hub.py preflights and renders them there.
STACK_FILES: list[Path] = sorted((REPO / "stacks").rglob("*.yaml")) + sorted(
    path for path in (REPO / "tests").rglob("*.yaml") if not {"goldens", "pr-comment", "hub"} & set(path.parts)
)

GATEWAY = {
    "name": "inference-gateway",
    "namespace": "gateway-system",
    "section_name": "https",
    "hostnames": ["llm.example.com"],
}
INGRESS = {
    "class_name": "nginx",
    "host": "llm.example.com",
    "tls_secret_name": "llm-tls",
    "controller_namespace": "ingress-nginx",
    "controller_pod_selector": {"app.kubernetes.io/name": "ingress-nginx"},
}
S3 = {"uri": "s3://models/llama-70b/", "credentials_secret": "keys", "endpoint_url": "http://minio:9000"}

# name: (shipped stack file under stacks/, changes merged group by group)
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "prod-per-replica": (
        "Pulumi.prod.yaml",
        {"delivery": {"mode": "per_replica_volume"}, "cache": {"storage_class_name": None}},
    ),
    "prod-s3": ("Pulumi.prod.yaml", {"delivery": {"mode": "object_storage", "object_storage": S3}}),
    "prod-s3-copy": (
        "Pulumi.prod.yaml",
        {
            "delivery": {"mode": "object_storage", "object_storage": {**S3, "copy_from_hub": True}},
            "cache": {"storage_class_name": None},
            "model": {"revision": "0e9e39f2"},
        },
    ),
    "prod-gs-identity": (
        "Pulumi.prod.yaml",
        {
            "delivery": {
                "mode": "object_storage",
                "object_storage": {
                    "uri": "gs://models/llama-70b/",
                    "service_account_annotations": {"iam.gke.io/gcp-service-account": "vllm@p.iam.gserviceaccount.com"},
                },
            },
            "cluster": {"profile": "gke"},
        },
    ),
    "prod-gateway": ("Pulumi.prod.yaml", {"exposure": {"gateway": GATEWAY}}),
    "prod-inference-pool": (
        "Pulumi.prod.yaml",
        {"exposure": {"gateway": {**GATEWAY, "backend": "InferencePool", "endpoint_picker": {"service": "vllm-prod-epp"}}}},
    ),
    "prod-ingress": ("Pulumi.prod.yaml", {"exposure": {"ingress": INGRESS}}),
    "prod-no-autoscaling": ("Pulumi.prod.yaml", {"autoscaling": {"enabled": False}}),
    "prod-no-monitoring": ("Pulumi.prod.yaml", {"monitoring": {"enabled": False}, "autoscaling": {"enabled": False}}),
    "prod-no-smoke": ("Pulumi.prod.yaml", {"smoke_test": {"enabled": False}}),
    "prod-keda-2-17": ("Pulumi.prod.yaml", {"autoscaling": {"keda_version": "2.17"}}),
    "prod-gke": ("Pulumi.prod.yaml", {"cluster": {"profile": "gke"}}),
    "prod-karpenter": ("Pulumi.prod.yaml", {"cluster": {"profile": "eks-karpenter"}}),
    "prod-aks": ("Pulumi.prod.yaml", {"cluster": {"profile": "aks"}}),
    "prod-openshift": ("Pulumi.prod.yaml", {"cluster": {"profile": "openshift"}}),
    "prod-gpu-operator": ("Pulumi.prod.yaml", {"cluster": {"profile": "gpu-operator"}}),
    "prod-settings": (
        "Pulumi.prod.yaml",
        {
            "scheduling": {"priority_class_name": "gpu-inference", "runtime_class_name": "nvidia"},
            "server": {"image_pull_secrets": ["registry-a"]},
            "network_policy": {"client_namespaces": ["team-a"]},
            "monitoring": {"release": "prom", "prometheus_namespace": "observability"},
        },
    ),
    "prod-existing-namespace": ("Pulumi.prod.yaml", {"namespace": {"name": "llm", "create": False}}),
    "dev-api-key": ("Pulumi.dev.yaml", {"security": {"require_api_key": True}}),
    "dev-autoscaling": ("Pulumi.dev.yaml", {"autoscaling": {"enabled": True, "min_replica_count": 1, "max_replica_count": 3}}),
    "dev-revision": ("Pulumi.dev.yaml", {"model": {"revision": "0e9e39f2"}}),
    "dev-cache-size": ("Pulumi.dev.yaml", {"cache": {"size_gib": 60}}),
    "dev-docker": ("Pulumi.dev.yaml", {"target": "docker", "docker": {}, "security": {"require_api_key": True}}),
    "dev-old-release": ("Pulumi.dev.yaml", {"vllm": {"version": "0.7.2"}}),
    "405b-openshift": (
        "examples/Pulumi.llama-405b-on-2x8-a100-80gb.yaml",
        {
            "cluster": {"profile": "openshift"},
            "multinode": {"rdma_resources": {"rdma/ib": 1}, "nccl_env": {"NCCL_IB_HCA": "mlx5"}, "openshift_scc": "privileged"},
        },
    ),
    "405b-gateway": (
        "examples/Pulumi.llama-405b-on-2x8-a100-80gb.yaml",
        {"exposure": {"gateway": GATEWAY}, "security": {"require_api_key": True}},
    ),
    "405b-inference-pool": (
        "examples/Pulumi.llama-405b-on-2x8-a100-80gb.yaml",
        {
            "exposure": {"gateway": {**GATEWAY, "backend": "InferencePool", "endpoint_picker": {"service": "llama-epp"}}},
            "security": {"require_api_key": True},
        },
    ),
    # Scale to zero (docs/scale-to-zero.md): the InterceptorRoute form, the Service only, and prod refused at zero.
    "zero-interceptor-route": (
        "examples/Pulumi.dev-scale-to-zero.yaml",
        {"autoscaling": {"http_add_on": {"version": "0.15.0", "resource": "InterceptorRoute"}}},
    ),
    "zero-service-only": ("examples/Pulumi.dev-scale-to-zero.yaml", {"exposure": {"gateway": None}}),
    "prod-at-zero": (
        "Pulumi.prod.yaml",
        {"autoscaling": {"enabled": True, "min_replica_count": 0, "max_replica_count": 4, "http_add_on": {}}},
    ),
}
