"""The CPU-backend adjustments on their own (fast suite: no server): only the listed changes are made."""

from __future__ import annotations

from pathlib import Path

from tests.e2e import cpu_backend
from tests.e2e.rendered import kubernetes_launch

HOST = cpu_backend.Host(
    python=Path("/venv/bin/python"), model_dir=Path("/tmp/tiny"), home=Path("/tmp/home"), port=18000, core=1
)


def test_only_model_port_and_eager_change_in_the_rendered_arguments() -> None:
    rendered = kubernetes_launch("sk-test").args
    adapted = cpu_backend.adapt_args(rendered, HOST)
    expected = ["--model", "/tmp/tiny", *rendered[1:], "--enforce-eager"]
    expected[expected.index("--port") + 1] = "18000"
    # No --block-size is rendered unless engine.block_size is set: vLLM (here its CPU backend) picks its own.
    assert "--block-size" not in rendered and adapted == expected


def test_block_size_rounds_up_to_a_multiple_of_32() -> None:
    assert cpu_backend.adapt_args(["m", "--block-size", "48"], HOST)[3] == "64"


def test_rendered_home_paths_move_under_the_temporary_home() -> None:
    env = cpu_backend.adapt_env({"HOME": "/home/vllm", "HF_HOME": "/home/vllm/.cache/huggingface", "USER": "vllm"}, HOST)
    assert (env["HOME"], env["HF_HOME"], env["USER"]) == ("/tmp/home", "/tmp/home/.cache/huggingface", "vllm")


def test_the_server_runs_pinned_to_its_core_through_the_api_server_module() -> None:
    command = cpu_backend.adapt_command(kubernetes_launch("sk-test"), HOST)
    assert command[:6] == ["taskset", "-c", "1", "/venv/bin/python", "-m", "vllm.entrypoints.openai.api_server"]


def test_a_rendered_bucket_uri_stays_the_model() -> None:
    assert cpu_backend.adapt_args(["s3://models/tiny/", "--load-format", "runai_streamer"], HOST)[:2] == [
        "--model",
        "s3://models/tiny/",
    ]
