"""No test reaches a cluster: the live reader answers "not reachable" unless a test puts facts in its place."""

from __future__ import annotations

import pytest

from cluster import live


@pytest.fixture(autouse=True)
def _no_live_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    def unreachable(*_args: object, **_kwargs: object) -> None:
        raise live.LiveReadError("no cluster in tests")

    monkeypatch.setattr(live, "read_live", unreachable)
