"""Every rendered object validates strictly against the OpenAPI schema of Kubernetes 1.37
(the newest release kubernetes-validate 1.37.0 ships: v1.37.0-local-strict)."""

from __future__ import annotations

import kubernetes_validate
import pytest

from tests.kubernetes_fixtures import configured, manifests, one, stack, stack_with

KUBERNETES_VERSION = "1.37.0"

VARIANTS = {
    "prod": lambda: stack("prod"),
    "dev": lambda: stack("dev"),
    "0.7.2 with ngram and api key": lambda: configured(
        vllm={"version": "0.7.2"},
        security={"require_api_key": True},
        engine={"max_model_len": 8192, "speculative": {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}},
    ),
    "autoscaled, zone spread, existing namespace": lambda: configured(
        autoscaling={"enabled": True, "max_replica_count": 4},
        scheduling={"spread": "zone"},
        namespace={"name": "llm", "create": False},
        gpu={"product": "A100-SXM4-80GB", "node_selector": {"cloud.google.com/gke-accelerator": "a"}},
    ),
    "read-write-once cache, GKE label without GFD": lambda: configured(
        cache={"access_mode": "ReadWriteOnce"},
        scheduling={"require_gpu_product_label": False},
        gpu={"product": "A100-SXM4-80GB", "node_selector": {"cloud.google.com/gke-accelerator": "nvidia-a100-80gb"}},
    ),
    "priority, runtime class and pull secrets, best-effort spread": lambda: configured(
        replicas=2,
        scheduling={
            "priority_class_name": "gpu-inference",
            "runtime_class_name": "nvidia",
            "when_unsatisfiable": "ScheduleAnyway",
        },
        server={"image_pull_secrets": ["registry-a", "registry-b"]},
    ),
    "prod on efs": lambda: stack("prod-on-efs"),
    "prod on per-replica volumes": lambda: stack_with(
        "prod-on-efs", delivery={"mode": "per_replica_volume"}, cache={"storage_class_name": None}
    ),
    "prod streaming from object storage": lambda: stack_with(
        "prod",
        delivery={
            "mode": "object_storage",
            "object_storage": {
                "uri": "s3://models/llama-70b/",
                "credentials_secret": "bucket-keys",
                "endpoint_url": "http://minio:9000",
                "service_account_annotations": {"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/r"},
            },
        },
    ),
    "object storage filled by the copy Job": lambda: stack_with(
        "prod",
        cache={"storage_class_name": None},
        model={"revision": "aaaa111"},
        delivery={
            "mode": "object_storage",
            "object_storage": {"uri": "s3://models/llama-70b/", "copy_from_hub": True, "credentials_secret": "bucket-keys"},
        },
    ),
    "image pre-pull DaemonSet and its policy": lambda: configured(server={"prepull_image": True}),
    "object storage with a Hub and a bucket LoRA adapter fetched by an init container": lambda: stack_with(
        "prod",
        cache={"storage_class_name": None},
        model={"revision": "aaaa111"},
        delivery={
            "mode": "object_storage",
            "object_storage": {"uri": "s3://models/llama-70b/", "copy_from_hub": True, "credentials_secret": "bucket-keys"},
        },
        lora={
            "adapters": [
                {
                    "name": "sql",
                    "id": "org/sql-lora",
                    "revision": "0123456789abcdef0123456789abcdef01234567",
                    "rank": 16,
                    "target_modules": ["q_proj", "v_proj"],
                },
                {"name": "ops", "uri": "s3://models/adapters/ops/", "rank": 8, "target_modules": ["q_proj"]},
            ]
        },
    ),
    "local path on an existing claim": lambda: configured(
        model={"id": "meta-llama/Llama-3.1-8B-Instruct", "local_path": "llama"}, cache={"existing_claim": "models"}
    ),
}


def strict_validate(obj: dict) -> None:
    kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_rendered_object_validates_strictly(variant: str):
    for obj in manifests(*VARIANTS[variant](), with_token=True):
        strict_validate(obj)


def test_strict_validation_rejects_an_unknown_field():
    deployment = one(manifests(*stack("prod")), "Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0]["startupProbes"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        strict_validate(deployment)


def test_prod_on_efs_renders_every_expected_kind():
    kinds = sorted(obj["kind"] for obj in manifests(*stack("prod-on-efs"), with_token=True))
    assert kinds == [
        "ConfigMap",
        "Deployment",
        "Job",
        "Job",
        "Namespace",
        "PersistentVolumeClaim",
        "PodDisruptionBudget",
        "Role",
        "RoleBinding",
        "Secret",
        "Secret",
        "Service",
        "ServiceAccount",
        "ServiceAccount",
        "ServiceAccount",
    ]  # the HF token and the API key; the download's and the rollout gate's Job, ConfigMap and account
