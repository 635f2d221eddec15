"""No test reaches a cluster: the live readers answer "not reachable" unless a test puts facts in their place.

Every skip prints its reason in the summary (pytest's `-rs`): a clone without ../shared skips the CRD schema
tests, and the reason says how to enable them (VLLM_SERVING_CRDS, tests/promtool/__init__.py).
"""

from __future__ import annotations

import functools
import gc
import itertools

import kubernetes_validate.utils
import pytest

from cluster import live, pod_start
from tests.harness import collect_quietly

# kubernetes_validate.validate parses the kind's schema and the 1.8 MB _definitions.json from disk at every call
# (utils.schema_contents, kubernetes-validate 1.37.0): 50 ms an object, 5 ms once parsed. The files never change
# and the schema dicts are only read (referencing.Resource.from_contents, jsonschema), so each is parsed once a
# process; a missing file still raises at each call (an exception is not cached).
kubernetes_validate.utils.schema_contents = functools.cache(kubernetes_validate.utils.schema_contents)


def pytest_configure(config: pytest.Config) -> None:
    chars = config.option.reportchars
    if not any(char in chars for char in "sSaA"):
        config.option.reportchars = chars + "s"


def pytest_runtest_setup(item: pytest.Item) -> None:
    """What earlier tests left alive is frozen before each test: the full collection after each failed program
    (tests/harness.py) then walks only what this test made, not the whole process (94 ms a collection by the end
    of a one-process run). Young garbage goes first, quietly (a failed program's futures)."""
    collect_quietly(generation=1)
    gc.freeze()


@pytest.fixture(autouse=True)
def _no_live_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    def unreachable(*_args: object, **_kwargs: object) -> None:
        raise live.LiveReadError("no cluster in tests")

    monkeypatch.setattr(live, "read_live", unreachable)
    monkeypatch.setattr(pod_start, "read_pod_start", unreachable)


_HUB_CACHES = itertools.count()


@pytest.fixture(autouse=True)
def _no_hub(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No test reaches the Hub: a model outside the catalog is read from a closed local port (tests that serve
    one use tests/fake_hub.py), with an empty Hub cache and no token."""
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    cache = tmp_path_factory.getbasetemp() / "hub-caches" / str(next(_HUB_CACHES))  # made by the first write
    monkeypatch.setenv("PREFLIGHT_HUB_CACHE", str(cache))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
