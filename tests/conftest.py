"""No test reaches a cluster: the live readers answer "not reachable" unless a test puts facts in their place.

Every skip prints its reason in the summary (pytest's `-rs`): a clone without ../shared skips the CRD schema
tests, and the reason says how to enable them (VLLM_SERVING_CRDS, tests/promtool/__init__.py).
"""

from __future__ import annotations

import fcntl
import functools
import gc
import itertools
import json
import os

import kubernetes_validate.utils
import pytest

from cluster import live, pod_start
from tests.harness import collect_quietly
from tests.promtool import run_unit_tests

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


@pytest.fixture(scope="module")
def promtool_batch(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The promtool sections of the module's promtool_scenario tests, all run at once (tests/promtool/__init__.py).
    Under xdist the first worker to need a module's run does it and leaves it in the run's shared folder for the
    others (the recipe of pytest-xdist's docs, "Making session-scoped fixtures execute only once"): each worker
    collects every test, so each would otherwise evaluate all of the module's scenarios."""
    items = [i for i in request.session.items if i.module is request.module and hasattr(i.function, "build")]  # type: ignore[attr-defined]
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return run_unit_tests(tmp_path_factory.mktemp("promtool"), items)
    shared = tmp_path_factory.getbasetemp().parent / f"promtool-{request.module.__name__}.json"
    with open(f"{shared}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not shared.exists():
            shared.write_text(json.dumps(run_unit_tests(tmp_path_factory.mktemp("promtool"), items)), encoding="utf-8")
        return json.loads(shared.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
