"""A real cluster's `kubectl get nodes -o json`, at scale: nodes as the kubelet reports them (labels,
conditions, addresses, node info and the image list that makes up most of each object), no managed fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO


def realistic_node(index: int) -> dict[str, Any]:
    name = f"gpu-node-{index:05d}"
    images = [
        {
            "names": [
                f"registry.example.com/team/image-{i:03d}@sha256:{'%064x' % (index * 97 + i)}",
                f"registry.example.com/team/image-{i:03d}:v1.{i}.0",
            ],
            "sizeBytes": 1_000_000 + i,
        }
        for i in range(128)
    ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"{index:08d}-0000-0000-0000-000000000000",
            "resourceVersion": str(1000 + index),
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "nvidia.com/gpu.present": "true",
                "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
                "nvidia.com/cuda.driver-version.major": "580",
            },
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {"podCIDR": f"10.{index // 256}.{index % 256}.0/24", "providerID": f"aws:///us-east-1a/i-{index:017x}"},
        "status": {
            "addresses": [
                {"type": "InternalIP", "address": f"10.0.{index // 256}.{index % 256}"},
                {"type": "Hostname", "address": name},
            ],
            "allocatable": {"cpu": "95", "memory": "1000Gi", "pods": "110", "nvidia.com/gpu": "8"},
            "capacity": {"cpu": "96", "memory": "1008Gi", "pods": "110", "nvidia.com/gpu": "8"},
            "conditions": [
                {
                    "type": kind,
                    "status": "False",
                    "reason": f"Kubelet{kind}",
                    "message": f"kubelet reports {kind} is fine",
                    "lastHeartbeatTime": "2026-01-01T00:00:00Z",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
                for kind in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": images,
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": "containerd://1.7.0",
                "kernelVersion": "6.1.0",
                "kubeletVersion": "v1.31.0",
                "osImage": "Ubuntu 22.04",
                "operatingSystem": "linux",
            },
        },
    }


def _write(out: TextIO, nodes: int) -> None:
    template = json.dumps(realistic_node(0)).replace("gpu-node-00000", "gpu-node-{index:05d}")  # fast: one dumps
    out.write('{\n    "apiVersion": "v1",\n    "items": [\n')
    for index in range(nodes):
        out.write(("," if index else "") + template.replace("{index:05d}", f"{index:05d}"))
    out.write('\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')


def write_nodes_list(path: Path, nodes: int) -> Path:
    """`kubectl get nodes -o json` of a cluster of `nodes` GPU nodes (compact: kubectl's indentation only adds bytes)."""
    with path.open("w", encoding="utf-8") as out:
        _write(out, nodes)
    return path
