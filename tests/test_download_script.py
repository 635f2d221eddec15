"""The download script run for real against a stand-in huggingface_hub: pruning, the deadline, the marker."""

from __future__ import annotations

import json
import signal
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from components.render.bucket_copy import COMPLETE_OBJECT, COPY_SCRIPT
from components.render.cache import DOWNLOAD_SCRIPT
from tests.kubernetes_fixtures import configured, manifests, model_cache_jobs, plan_of


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
            repos = [
                types.SimpleNamespace(repo_id=repo, revisions=[types.SimpleNamespace(commit_hash=sha) for sha in shas])
                for repo, shas in fake.cached.items()
            ]

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
    env = {
        "CACHE_MARKER": str(marker),
        "FAILURE_MARKER": str(marker.with_name("failed-x")),
        "DOWNLOAD_DEADLINE_SECONDS": "600",
        "HF_HOME": str(tmp_path),
        "DOWNLOADS": json.dumps([["org/model", None]]),
        "MAX_WORKERS": "1",
        "IGNORE_PATTERNS": "[]",
        "PRUNE_OTHER_REVISIONS": "1" if prune else "0",
    }
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


class FakeS3:
    """boto3.client("s3") as the copy script uses it: head_object, upload_file, put_object."""

    class exceptions:
        class ClientError(Exception):
            pass

    def __init__(self, objects: dict[str, int]) -> None:
        self.objects = dict(objects)  # key -> size
        self.uploaded: list[str] = []

    def head_object(self, Bucket: str, Key: str) -> dict[str, int]:
        if Key not in self.objects:
            raise self.exceptions.ClientError(Key)
        return {"ContentLength": self.objects[Key]}

    def upload_file(self, local: str, bucket: str, key: str) -> None:
        self.uploaded.append(key)
        self.objects[key] = Path(local).stat().st_size

    def put_object(self, Bucket: str, Key: str, Body: bytes) -> None:
        self.objects[Key] = len(Body)


def run_copy(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    s3: FakeS3,
    files: dict[str, bytes],
    seconds_per_gib: str = "30",
) -> list[str]:
    """Runs the copy script; returns the files it fetched from the Hub."""
    hub = types.ModuleType("huggingface_hub")
    fetched: list[str] = []

    class HfApi:
        def model_info(self, repo: str, revision: str | None, files_metadata: bool) -> types.SimpleNamespace:
            siblings = [types.SimpleNamespace(rfilename=name, size=len(data)) for name, data in files.items()]
            return types.SimpleNamespace(siblings=siblings)

    def hf_hub_download(repo: str, name: str, revision: str | None, cache_dir: str) -> str:
        path = Path(cache_dir) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(files[name])
        return str(path)

    def hf_hub_download_counted(repo: str, name: str, revision: str | None, cache_dir: str) -> str:
        fetched.append(name)
        return hf_hub_download(repo, name, revision, cache_dir)

    hub.HfApi, hub.hf_hub_download = HfApi, hf_hub_download_counted  # type: ignore[attr-defined]
    boto3 = types.ModuleType("boto3")
    boto3.client = lambda service: s3  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "huggingface_hub", hub)
    monkeypatch.setitem(sys.modules, "boto3", boto3)
    env = {
        "COPY_DEADLINE_SECONDS": "600",
        "TARGET": "s3://models/llama",
        "COMPLETE_OBJECT": COMPLETE_OBJECT,
        "DOWNLOADS": json.dumps([["org/model", "abc"]]),
        "IGNORE_PATTERNS": json.dumps(["original/*"]),
        "SCRATCH": str(tmp_path),
        "COPY_SECONDS_PER_GIB": seconds_per_gib,
        "COPY_FILE_MIN_SECONDS": "60",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    try:
        exec(compile(COPY_SCRIPT, "copy", "exec"), {"__name__": "__main__"})
    except SystemExit:
        pass
    finally:
        signal.alarm(0)
    return fetched


def test_the_copy_uploads_what_is_missing_skips_ignored_files_and_marks_the_copy_complete(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    s3 = FakeS3({"llama/config.json": 2})  # already there with the same size: a retry skips it
    files = {"config.json": b"{}", "model-1.safetensors": b"weights", "original/consolidated.pth": b"x"}
    run_copy(tmp_path, monkeypatch, s3, files)
    assert s3.uploaded == ["llama/model-1.safetensors"]
    assert "llama/.vllm-serving-complete" in s3.objects


def test_a_complete_copy_is_not_redone(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    s3 = FakeS3({"llama/.vllm-serving-complete": 10})
    run_copy(tmp_path, monkeypatch, s3, {"model-1.safetensors": b"weights"})
    assert s3.uploaded == []


def test_a_copy_retry_fetches_only_the_files_the_bucket_lacks_by_the_hubs_sizes(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    s3 = FakeS3({"llama/model-1.safetensors": 7})  # the first shard made it before the deadline
    fetched = run_copy(tmp_path, monkeypatch, s3, {"model-1.safetensors": b"weights", "model-2.safetensors": b"more"})
    assert fetched == ["model-2.safetensors"]


def recorder(alarms: list[int]):  # type: ignore[no-untyped-def]
    def alarm(seconds: int) -> int:
        alarms.append(seconds)
        return 0

    return alarm


def test_each_file_of_the_copy_gets_its_own_deadline_within_the_attempts(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    alarms: list[int] = []
    monkeypatch.setattr(signal, "alarm", recorder(alarms))
    files = {"model-1.safetensors": b"x" * 700, "config.json": b"{}"}
    # 700 bytes at 1e8 s per GiB: 66 s; 2 bytes: the one-minute floor
    run_copy(tmp_path, monkeypatch, FakeS3({}), files, seconds_per_gib="1e8")
    assert alarms[:3] == [600, 66, 60]


def test_a_files_deadline_never_outlasts_the_attempts(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    alarms: list[int] = []
    monkeypatch.setattr(signal, "alarm", recorder(alarms))
    run_copy(tmp_path, monkeypatch, FakeS3({}), {"model-1.safetensors": b"x" * 700}, seconds_per_gib="1e12")
    assert alarms[1] <= 600


def test_the_copy_job_passes_the_plans_rate_per_gib() -> None:
    bucket = {
        "mode": "object_storage",
        "object_storage": {"uri": "s3://m/llama", "copy_from_hub": True, "credentials_secret": "bucket-keys"},
    }
    cfg, report = configured(
        delivery=bucket,
        model={"id": "meta-llama/Llama-3.1-8B-Instruct", "revision": "0e9e39f249a16976918f6564b8830bc894c89659"},
    )
    job = model_cache_jobs(manifests(cfg, report))[0]
    env = {e["name"]: e["value"] for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    rate = plan_of(cfg).delivery.copy_seconds_per_gib
    assert float(env["COPY_SECONDS_PER_GIB"]) == rate == 3 / cfg.cache.download_throughput_gib_per_s
