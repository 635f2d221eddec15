"""The download script run for real against a stand-in huggingface_hub: pruning, the deadline, the marker."""

from __future__ import annotations

import json
import signal
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from components.render.cache import DOWNLOAD_SCRIPT


@dataclass
class FakeHub:
    """What the script calls: HfApi().repo_info, scan_cache_dir and snapshot_download."""

    root: Path
    cached: dict[str, list[str]]  # repo -> commit shas on the volume
    remote_sha: str
    deleted: list[str] = field(default_factory=list)

    def module(self) -> types.ModuleType:
        hub = types.ModuleType("huggingface_hub")
        fake = self

        class HfApi:
            def repo_info(self, repo: str, revision: str | None = None) -> types.SimpleNamespace:
                return types.SimpleNamespace(sha=revision or fake.remote_sha)

        def scan_cache_dir() -> types.SimpleNamespace:
            repos = [types.SimpleNamespace(repo_id=repo, revisions=[types.SimpleNamespace(commit_hash=sha) for sha in shas])
                     for repo, shas in fake.cached.items()]
            def delete_revisions(*shas: str) -> types.SimpleNamespace:
                fake.deleted.extend(shas)
                return types.SimpleNamespace(execute=lambda: None)

            return types.SimpleNamespace(repos=repos, delete_revisions=delete_revisions)

        def snapshot_download(repo: str, revision: str | None, **_: object) -> str:
            path = fake.root / "snapshot"
            path.mkdir(parents=True, exist_ok=True)
            return str(path)

        hub.HfApi, hub.scan_cache_dir, hub.snapshot_download = HfApi, scan_cache_dir, snapshot_download  # type: ignore[attr-defined]
        return hub


def run_script(tmp_path: Path, hub: FakeHub, monkeypatch: pytest.MonkeyPatch, prune: bool) -> Path:
    (tmp_path / "hub").mkdir()
    marker = tmp_path / ".vllm-serving" / "complete-x"
    env = {"CACHE_MARKER": str(marker), "DOWNLOAD_DEADLINE_SECONDS": "600", "HF_HOME": str(tmp_path),
           "DOWNLOADS": json.dumps([["org/model", None]]), "MAX_WORKERS": "1", "IGNORE_PATTERNS": "[]",
           "PRUNE_OTHER_REVISIONS": "1" if prune else "0"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setitem(sys.modules, "huggingface_hub", hub.module())
    try:
        exec(compile(DOWNLOAD_SCRIPT, "download", "exec"), {"__name__": "__main__"})
    finally:
        signal.alarm(0)
    return marker


def test_a_per_replica_download_frees_the_revisions_it_no_longer_serves(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    hub = FakeHub(tmp_path, {"org/model": ["old111", "new222"], "org/other": ["ccc333"]}, remote_sha="new222")
    run_script(tmp_path, hub, monkeypatch, prune=True)
    assert sorted(hub.deleted) == ["ccc333", "old111"]


def test_a_shared_volume_download_frees_nothing(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    hub = FakeHub(tmp_path, {"org/model": ["old111"]}, remote_sha="new222")
    run_script(tmp_path, hub, monkeypatch, prune=False)
    assert hub.deleted == []


def test_a_complete_download_writes_its_marker(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    hub = FakeHub(tmp_path, {}, remote_sha="new222")
    assert run_script(tmp_path, hub, monkeypatch, prune=True).is_file()
