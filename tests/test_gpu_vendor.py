"""A GPU product carries its vendor's facts (catalog/gpus.py GpuVendor): a second vendor is data."""

from __future__ import annotations

from dataclasses import replace

import pytest

from catalog.gpus import GPUS, NVIDIA, GpuVendor, MetricsExporter
from tests.factories import make_config
from tests.kubernetes_fixtures import manifests, one, plan_of

OTHER = GpuVendor(
    name="other",
    resource="example.com/gpu",
    product_label="example.com/gpu.product",
    taint_key="example.com/gpu",
    driver_labels=("example.com/driver.major",),
    exporter=MetricsExporter("example exporter", "used", "free", "util"),
)


@pytest.fixture
def other_gpu(monkeypatch: pytest.MonkeyPatch) -> str:
    """A catalog product of another vendor, sized like the 80 GB A100."""
    monkeypatch.setitem(GPUS, "Other-80GB", replace(GPUS["A100-SXM4-80GB"], name="Other-80GB", vendor=OTHER))
    return "Other-80GB"


def test_the_server_requests_its_gpu_vendors_resource(other_gpu: str) -> None:
    cfg = make_config(gpu={"product": other_gpu})
    container = one(manifests(cfg, plan_of(cfg).sizing), "Deployment")["spec"]["template"]["spec"]["containers"][0]
    limits = container["resources"]["limits"]
    assert limits["example.com/gpu"] == "1" and NVIDIA.resource not in limits


def test_the_server_tolerates_its_gpu_vendors_taint(other_gpu: str) -> None:
    tolerations = plan_of(make_config(gpu={"product": other_gpu})).placement.tolerations
    assert tolerations == ({"key": "example.com/gpu", "operator": "Exists", "effect": "NoSchedule"},)


def test_the_catalog_gpus_are_nvidia_with_its_device_plugin_resource() -> None:
    assert {gpu.vendor.resource for gpu in GPUS.values()} == {"nvidia.com/gpu"}
