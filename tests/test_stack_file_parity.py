"""The Pulumi program reads its own stack file for what the engine's YAML parser lets through, so the CLI
and `pulumi preview` agree on duplicate keys, aliases and the loader's bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.preflight import main
from config import sources
from tests.program import run_main

VALID = (
    "config:\n  vllm-serving:model:\n    id: meta-llama/Llama-3.1-8B-Instruct\n"
    "  vllm-serving:gpu:\n    product: H100-80GB-HBM3\n  vllm-serving:security:\n    require_api_key: false\n"
)
ENGINE_VIEW = {  # what the Pulumi engine hands over for both files below: the last duplicate, the alias expanded
    "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
    "gpu": {"product": "H100-80GB-HBM3"},
    "security": {"require_api_key": False},
}
DUPLICATE = VALID + "  vllm-serving:gpu:\n    product: H100-80GB-HBM3\n"
ALIAS = VALID.replace("    product: H100-80GB-HBM3\n", "    product: &p H100-80GB-HBM3\n    also_accept: [*p]\n")
LEADING_ZERO = VALID + "  vllm-serving:replicas: 010\n"  # YAML 1.1: octal 8; Pulumi's string value: 10
BESIDE_CONFIG = VALID + "vllm-serving:replicas: 2\n"  # the engine ignores a key outside `config:`


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: vllm-serving\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    monkeypatch.setattr(sources, "PROJECT_DIR", tmp_path)
    return tmp_path / "stacks"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (DUPLICATE, "appears twice"),
        (ALIAS, "an alias (*p) is not allowed"),
        (LEADING_ZERO, "'010' is an integer in YAML 1.1 but another value in YAML 1.2"),
        (BESIDE_CONFIG, "the top-level key 'vllm-serving:replicas' is not one a stack file has"),
    ],
    ids=["duplicate", "alias", "leading-zero", "beside-config"],
)
def test_the_program_refuses_what_the_cli_refuses_in_its_own_stack_file(
    project: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    stack = project / "Pulumi.parity.yaml"
    stack.write_text(text)
    assert main([str(stack)]) == 2 and message in capsys.readouterr().err
    registered, error = run_main(ENGINE_VIEW, stack="parity")
    assert (message in str(error), f"{stack}: " in str(error), registered.resources) == (True, True, [])


def test_the_program_runs_a_valid_stack_file_it_reads_itself(project: Path) -> None:
    (project / "Pulumi.parity.yaml").write_text(VALID)
    registered, error = run_main(ENGINE_VIEW, stack="parity")
    assert error is None and registered.resources


def test_a_stack_without_a_file_is_config_from_elsewhere_and_runs(project: Path) -> None:
    registered, error = run_main(ENGINE_VIEW, stack="esc-only")
    assert error is None and registered.resources


def test_a_new_stack_file_without_config_is_no_error(project: Path) -> None:
    (project / "Pulumi.parity.yaml").write_text("encryptionsalt: v1:abc\n")
    _registered, error = run_main(ENGINE_VIEW, stack="parity")
    assert error is None


def test_a_stack_file_that_is_a_fifo_stops_the_program_naming_it(project: Path) -> None:
    import os

    os.mkfifo(project / "Pulumi.parity.yaml")
    registered, error = run_main(ENGINE_VIEW, stack="parity")
    assert "is a named pipe (FIFO), not a regular file" in str(error) and registered.resources == []


def test_the_stack_files_folder_comes_from_pulumi_yaml(project: Path) -> None:
    (project.parent / "Pulumi.yaml").write_text("name: vllm-serving\nruntime: python\n")  # no stackConfigDir
    (project.parent / "Pulumi.parity.yaml").write_text(DUPLICATE)
    _registered, error = run_main(ENGINE_VIEW, stack="parity")
    assert "appears twice" in str(error)


def test_a_config_key_without_a_namespace_is_refused_as_pulumi_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stack = tmp_path / "Pulumi.bare.yaml"
    stack.write_text(VALID + "  replicas: 2\n")
    assert main([str(stack)]) == 2 and "'replicas' is not a Pulumi config key" in capsys.readouterr().err


def test_pulumi_long_form_config_key_is_read_as_the_project_key(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.long.yaml"
    stack.write_text(VALID.replace("vllm-serving:gpu:", "vllm-serving:config:gpu:"))
    assert sources.read_stack_file(stack)[0]["gpu"] == {"product": "H100-80GB-HBM3"}


def test_an_empty_ciphertext_is_refused_naming_the_secret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stack = tmp_path / "Pulumi.empty.yaml"
    stack.write_text(VALID + "  vllm-serving:hf_token:\n    secure: ''\n")
    message = "vllm-serving:hf_token: has a `secure:` value Pulumi cannot decrypt"
    assert main([str(stack)]) == 2 and message in capsys.readouterr().err


def test_the_stack_file_settings_pulumi_writes_beside_config_are_accepted(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.salted.yaml"
    stack.write_text("secretsprovider: passphrase\nencryptionsalt: v1:abc\nenvironment: [team/prod]\n" + VALID)
    assert sources.read_stack_file(stack)[2] == []
