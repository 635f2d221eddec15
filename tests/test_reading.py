"""The bounded reader: regular files only (saying what a path is instead), a size cap, UTF-8 with the byte."""

from __future__ import annotations

import contextlib
import json
import os
import socket
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli.preflight import main
from cluster.facts import facts_from_items
from cluster.snapshot import SnapshotError, read_items
from preflight.startup_log import LogError, check_startup_log
from reading.files import FileReadError, iter_text_chunks, read_bytes, read_text, read_text_prefix
from reading.numbers import NumberError, loads, whole_number


def test_a_fifo_is_named_and_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(FileReadError, match=r"pipe: is a named pipe \(FIFO\), not a regular file"):
        read_bytes(tmp_path / "pipe", 100, "")


def test_a_symlink_to_a_fifo_is_refused_as_the_fifo(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "link.json").symlink_to(tmp_path / "pipe")
    with pytest.raises(FileReadError, match=r"is a named pipe \(FIFO\)"):
        read_text(tmp_path / "link.json", 100, "")


@pytest.mark.parametrize(("path", "what"), [("/dev/zero", "a character device"), ("/dev/null", "a character device")])
def test_a_device_is_named_a_device(path: str, what: str) -> None:
    with pytest.raises(FileReadError, match=f"is {what}, not a regular file"):
        read_text_prefix(path, 100)


def test_a_directory_is_named_a_directory(tmp_path: Path) -> None:
    with pytest.raises(FileReadError, match="is a directory, not a regular file"):
        read_bytes(tmp_path, 100, "")


def test_a_socket_is_named_a_socket(tmp_path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "s"))
        with pytest.raises(FileReadError, match="is a socket, not a regular file"):
            read_bytes(tmp_path / "s", 100, "")
    finally:
        server.close()


def test_a_path_swapped_for_a_fifo_after_the_check_is_refused_on_the_open_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "file").write_text("x")
    real_open = os.open
    monkeypatch.setattr("reading.files.os.open", lambda _path, flags: real_open(tmp_path / "pipe", flags))
    with pytest.raises(FileReadError, match="is a named pipe"):
        read_bytes(tmp_path / "file", 100, "")


def test_a_file_over_the_cap_is_refused_with_the_callers_fix(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 2049)
    with pytest.raises(FileReadError, match="big: is larger than 2 KiB; write a smaller one"):
        read_bytes(tmp_path / "big", 2048, "write a smaller one")


def test_a_file_that_is_not_utf8_names_the_first_bad_byte(tmp_path: Path) -> None:
    (tmp_path / "latin1").write_bytes("ok: caf\xe9".encode("latin-1"))
    with pytest.raises(FileReadError, match=r"is not UTF-8 text \(byte 7\)"):
        read_text(tmp_path / "latin1", 100, "")


def test_chunks_name_the_bad_byte_by_its_offset_in_the_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"a" * 10 + b"\xff")
    with pytest.raises(FileReadError, match=r"byte 10\)"):
        list(iter_text_chunks(tmp_path / "f", 100, "", chunk=4))


def test_a_byte_order_mark_is_dropped(tmp_path: Path) -> None:
    (tmp_path / "bom").write_bytes(b"\xef\xbb\xbfconfig: {}")
    assert read_text(tmp_path / "bom", 100, "") == "config: {}"


@pytest.mark.parametrize("text", ["1e400", "-1e400", "NaN", "Infinity", "9" * 5000, "1" + "0" * 31])
def test_a_json_number_out_of_bounds_is_a_number_error(text: str) -> None:
    with pytest.raises(NumberError):
        loads(f'{{"a": {text}}}')


@pytest.mark.parametrize("text", ["²", "٣", "1e400", "-1", "8.5", "", "1" * 19])
def test_only_ascii_digits_within_the_bound_are_a_whole_number(text: str) -> None:
    assert whole_number(text) is None


def test_a_stack_file_that_is_a_fifo_exits_two_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.mkfifo(tmp_path / "Pulumi.x.yaml")
    assert main([str(tmp_path / "Pulumi.x.yaml")]) == 2
    assert "Pulumi.x.yaml: is a named pipe (FIFO), not a regular file." in capsys.readouterr().err


def test_a_config_json_that_is_a_fifo_or_holds_a_5000_digit_integer_is_a_config_error_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "digits.json").write_text('{"hidden_size": ' + "9" * 5000 + "}")
    for name, reason in (("fifo.json", "is a named pipe (FIFO)"), ("digits.json", "an integer of 5,000 digits")):
        stack = tmp_path / "Pulumi.x.yaml"
        stack.write_text(
            f"config:\n  vllm-serving:model:\n    id: acme/private\n    config_json: {tmp_path / name}\n"
            "    num_parameters: 8000000000\n  vllm-serving:gpu:\n    product: H100-80GB-HBM3\n"
        )
        assert main([str(stack), "--json"]) == 2
        (error,) = json.loads(capsys.readouterr().out)["config_errors"]
        assert error.startswith("vllm-serving:model.config_json: cannot read") and reason in error, error


FIELDS = ["metadata", "labels", "name", "spec", "status", "allocatable", "nvidia.com/gpu", "taints", "versions", "kind"]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(FIELDS), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "80")), deadline=None)
@given(st.sampled_from(["Node", "Namespace", "StorageClass", "CustomResourceDefinition", "Pod"]), JSON, st.binary(max_size=40))
def test_any_object_or_bytes_in_a_snapshot_are_facts_or_a_snapshot_error(kind: str, body: object, tail: bytes) -> None:
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"fuzz-snapshot-{os.getpid()}.json"
    item = {"kind": kind, **body} if isinstance(body, dict) else body
    path.write_bytes(json.dumps({"kind": "List", "items": [item]}).encode() + tail)
    with contextlib.suppress(SnapshotError):
        facts_from_items(read_items(path), "fuzz")


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "60")), deadline=None)
@given(st.text(max_size=400))
def test_any_text_as_a_log_is_figures_or_a_log_error(text: str) -> None:
    with contextlib.suppress(LogError):
        check_startup_log("vllm.log", text, ("meta-llama/Llama-3.1-8B-Instruct",))


def test_the_reader_imports_no_project_layer() -> None:
    import ast

    for module in Path(__file__).resolve().parent.parent.joinpath("reading").glob("*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        imported = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert not {name.split(".")[0] for name in imported} & {"config", "plan", "preflight", "components", "cluster"}
