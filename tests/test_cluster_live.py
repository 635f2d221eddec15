"""The live reader, for shape, through the official client with a fake transport (no cluster here)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cluster import live
from tests.cluster_facts import fixture

ITEMS = json.loads(fixture("onprem-gpu-operator-ceph").read_text())["items"]
PATHS = {
    "/api/v1/nodes": "Node",
    "/api/v1/namespaces": "Namespace",
    "/apis/storage.k8s.io/v1/storageclasses": "StorageClass",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions": "CustomResourceDefinition",
    "/apis/monitoring.coreos.com/v1/prometheuses": "Prometheus",
    "/apis/apps/v1/namespaces/keda/deployments": "Deployment",
    "/apis/apps/v1/namespaces/vllm-prod/statefulsets": "StatefulSet",
    "/api/v1/namespaces/models/services": "Service",
    "/apis/apps/v1/namespaces/kube-system/daemonsets": "DaemonSet",
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations": "MutatingWebhookConfiguration",
}


class Response:
    def __init__(self, status: int, body: Any) -> None:
        self.status, self.reason = status, "OK" if status == 200 else "Forbidden"
        self.data = json.dumps(body).encode()
        self.headers = {"content-type": "application/json"}

    def getheaders(self) -> dict[str, str]:
        return self.headers

    def getheader(self, name: str, default: str | None = None) -> str | None:
        return self.headers.get(name, default)

    def read(self, *_args: object, **_kwargs: object) -> bytes:
        return self.data

    def release_conn(self) -> None:
        pass

    def close(self) -> None:
        pass


class FakeApiServer:
    """Answers list calls from a fixture's items, as the API server does (no kind on list items)."""

    def __init__(self, forbidden: tuple[str, ...] = (), page: int | None = None) -> None:
        self.calls: list[tuple[str, str]] = []
        self.forbidden, self.page = forbidden, page

    def request(self, method: str, url: str, **_kwargs: object) -> Response:
        self.calls.append((method, url))
        path, _, query = url.partition("?")
        path = path.removeprefix("https://cluster.test")
        if path in self.forbidden:
            return Response(403, {"kind": "Status", "code": 403})
        kind = PATHS[path]
        items = [{k: v for k, v in i.items() if k not in ("kind", "apiVersion")} for i in ITEMS if i["kind"] == kind]
        start = int(query.split("continue=")[1].split("&")[0]) if "continue=" in query else 0
        size = self.page or len(items) or 1
        chunk = items[start : start + size]
        more = {"continue": str(start + size)} if start + size < len(items) else {}
        return Response(200, {"kind": f"{kind}List", "apiVersion": "v1", "metadata": more, "items": chunk})


def client(server: FakeApiServer) -> Any:
    from kubernetes import client as k8s

    configuration = k8s.Configuration()
    configuration.host = "https://cluster.test"
    api = k8s.ApiClient(configuration)
    api.rest_client.pool_manager = server  # type: ignore[assignment]  # a stand-in for urllib3, same calls
    return api


@pytest.fixture
def real_read_live(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.undo()  # tests/conftest.py stands in for the live reader everywhere else
    return live.read_live


def test_the_live_reader_gives_the_same_facts_as_the_snapshot(real_read_live) -> None:  # type: ignore[no-untyped-def]
    from cluster.snapshot import read_snapshots

    facts = real_read_live(None, "ctx", "keda", client=client(FakeApiServer()))
    expected = read_snapshots([fixture("onprem-gpu-operator-ceph")])
    assert (facts.nodes, facts.storage_classes, facts.crds, facts.namespaces, facts.prometheuses, facts.keda_version) == (
        expected.nodes,
        expected.storage_classes,
        expected.crds,
        expected.namespaces,
        expected.prometheuses,
        "2.16.1",
    )
    assert facts.source == "live cluster (context ctx)"


def test_the_live_reader_only_gets(real_read_live) -> None:  # type: ignore[no-untyped-def]
    server = FakeApiServer()
    real_read_live(None, None, "keda", client=client(server))
    assert {method for method, _ in server.calls} == {"GET"}
    assert not any("karpenter" in url for _, url in server.calls)  # its CRD is not installed: not asked


def test_the_live_reader_follows_continue_tokens(real_read_live) -> None:  # type: ignore[no-untyped-def]
    facts = real_read_live(None, None, "keda", client=client(FakeApiServer(page=1)))
    assert len(facts.nodes) == 3


def test_a_forbidden_optional_kind_is_not_read_rather_than_failing(real_read_live) -> None:  # type: ignore[no-untyped-def]
    server = FakeApiServer(forbidden=("/apis/monitoring.coreos.com/v1/prometheuses",))
    assert real_read_live(None, None, "keda", client=client(server)).prometheuses is None


def test_a_forbidden_node_list_is_a_live_read_error(real_read_live) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(live.LiveReadError, match="HTTP 403"):
        real_read_live(None, None, "keda", client=client(FakeApiServer(forbidden=("/api/v1/nodes",))))


def test_no_kubeconfig_is_a_live_read_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(live.LiveReadError, match="no usable kubeconfig"):
        live.api_client(str(tmp_path / "missing"), None)


def test_kubeconfig_contents_and_the_context_are_used_as_the_provider_uses_them() -> None:
    text = (
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://a.test'}\n"
        "- name: d\n  cluster: {server: 'https://b.test'}\nusers:\n- name: u\n  user: {token: t}\n"
        "contexts:\n- name: one\n  context: {cluster: c, user: u}\n- name: two\n  context: {cluster: d, user: u}\n"
        "current-context: one\n"
    )
    assert live.api_client(text, "two").configuration.host == "https://b.test"


def test_the_live_reader_reads_the_stacks_statefulsets_when_given_its_namespace(real_read_live) -> None:  # type: ignore[no-untyped-def]
    server = FakeApiServer()
    facts = real_read_live(None, None, "keda", client=client(server), namespace="vllm-prod")
    assert facts.statefulsets == {} and ("GET", "/apis/apps/v1/namespaces/vllm-prod/statefulsets") in {
        (method, url.removeprefix("https://cluster.test").partition("?")[0]) for method, url in server.calls
    }


def test_the_live_reader_reads_the_services_of_an_in_cluster_bucket_stores_namespace(real_read_live) -> None:  # type: ignore[no-untyped-def]
    server = FakeApiServer()
    real_read_live(None, None, "keda", client=client(server), store_namespace="models")
    assert ("GET", "/api/v1/namespaces/models/services") in {
        (method, url.removeprefix("https://cluster.test").partition("?")[0]) for method, url in server.calls
    }


def test_the_live_reader_reads_no_services_without_a_store(real_read_live) -> None:  # type: ignore[no-untyped-def]
    server = FakeApiServer()
    real_read_live(None, None, "keda", client=client(server))
    assert not any("/services" in url for _, url in server.calls)


def test_the_live_reader_reads_kube_systems_daemonsets_when_asked(real_read_live) -> None:  # type: ignore[no-untyped-def]
    server = FakeApiServer()
    facts = real_read_live(None, None, "keda", client=client(server), daemonset_namespace="kube-system")
    assert facts.daemonsets == frozenset() and ("GET", "/apis/apps/v1/namespaces/kube-system/daemonsets") in {
        (method, url.removeprefix("https://cluster.test").partition("?")[0]) for method, url in server.calls
    }


def test_a_forbidden_daemonset_list_leaves_them_not_read(real_read_live) -> None:  # type: ignore[no-untyped-def]
    server = FakeApiServer(forbidden=("/apis/apps/v1/namespaces/kube-system/daemonsets",))
    assert real_read_live(None, None, "keda", client=client(server), daemonset_namespace="kube-system").daemonsets is None


def test_the_live_reader_reads_the_mutating_webhooks_when_asked(real_read_live) -> None:  # type: ignore[no-untyped-def]
    facts = real_read_live(None, None, "keda", client=client(FakeApiServer()), webhooks=True)
    assert facts.mutating_webhooks == frozenset()


def test_a_forbidden_webhook_list_leaves_them_not_read(real_read_live) -> None:  # type: ignore[no-untyped-def]
    server = FakeApiServer(forbidden=("/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",))
    assert real_read_live(None, None, "keda", client=client(server), webhooks=True).mutating_webhooks is None
