"""Models outside the catalog, read from the Hub (a local server speaking its API, tests/fake_hub.py): exact
bytes from the safetensors headers, the cache that makes a second read offline, and every error's key."""

from __future__ import annotations

import ctypes
import json
import math
import runpy
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import safetensors
import yaml

import preflight.hub
from cli.preflight import main
from cli.render import main as render_main
from config.errors import ConfigError
from preflight.checkpoint import Tensor, checkpoint_bytes, pp_layer_counts
from preflight.hub import cache_path
from preflight.memory import GIB, weights_gib_per_gpu, weights_on_disk_gib
from preflight.model_source import from_config_dict, from_hub
from tests import hub_checkpoints
from tests.factories import REPO, STACKS, preflight_imports
from tests.fake_hub import Repo, serving
from tests.program import run_main

POPULAR = hub_checkpoints.MODELS
REAL = [(repo, real) for repo, model in POPULAR.items() for real in model["real"]]


@pytest.fixture
def hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_TOKEN_PATH", str(tmp_path / "no-saved-token"))
    monkeypatch.setenv("PREFLIGHT_HUB_CACHE", str(tmp_path / "facts"))
    return tmp_path / "facts"


@pytest.fixture(scope="module")
def popular_repos() -> dict[str, Repo]:
    return {repo: Repo(hub_checkpoints.repository_files(repo), gated=model["gated"]) for repo, model in POPULAR.items()}


@pytest.fixture(scope="module")
def hub_endpoint(popular_repos: dict[str, Repo]) -> Iterator[str]:
    """One local Hub for the module: it serves popular_repos as they are at each request (a test's monkeypatch
    of a repository included), and stopping a server after each test waited out its poll interval."""
    with serving(popular_repos) as endpoint:
        yield endpoint


@pytest.fixture
def hub(popular_repos: dict[str, Repo], hub_endpoint: str, hub_cache: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Repo]:
    monkeypatch.setenv("HF_ENDPOINT", hub_endpoint)
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    return popular_repos


def test_the_data_holds_at_least_ten_models_each_with_its_sources() -> None:
    assert len(POPULAR) >= 10
    assert all(model["config_source"] and all(real["source"] for real in model["real"]) for model in POPULAR.values())
    assert all(model["real"] or model["real_missing"] for model in POPULAR.values())


@pytest.mark.parametrize(("repo", "real"), REAL, ids=[f"{repo}-{i}" for i, (repo, _) in enumerate(REAL)])
def test_a_popular_model_sizes_from_its_headers_within_one_percent_of_its_real_bytes(hub, repo, real) -> None:  # type: ignore[no-untyped-def]
    arch = from_hub(repo, None)
    if "disk_bytes" in real:
        assert weights_on_disk_gib(arch) * GIB == pytest.approx(real["disk_bytes"], rel=0.01)
    else:
        quantization = arch.quantization
        sized = weights_gib_per_gpu(arch, "auto", quantization, real["tp"], real["pp"])
        assert sized == pytest.approx(real["gib_per_gpu"], rel=0.01)


def test_gpt_oss_stores_its_experts_in_mxfp4_beside_bf16_attention(hub) -> None:  # type: ignore[no-untyped-def]
    arch = from_hub("openai/gpt-oss-20b", None)
    assert arch.checkpoint is not None
    assert [label.split(":")[0] for label in arch.checkpoint.formats] == [
        "MXFP4 (U8 blocks + E8M0 scales, 32 per block)",
        "BF16",
    ]
    assert (arch.quantization, arch.num_sliding_window_layers, arch.num_local_experts) == ("mxfp4", 12, 32)


def test_the_fp8_checkpoint_keeps_its_lm_head_in_bf16(hub) -> None:  # type: ignore[no-untyped-def]
    arch = from_hub("RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic", None)
    assert arch.checkpoint is not None
    bf16 = next(label for label in arch.checkpoint.formats if label.startswith("BF16"))
    assert bf16 == "BF16: 3.92 GiB"  # embeddings + lm_head + norms: 2 x 128256 x 8192 x 2 B


def test_gemma_3_is_read_from_its_nested_text_config_with_transformers_defaults(hub) -> None:  # type: ignore[no-untyped-def]
    arch = from_hub("google/gemma-3-27b-it", None)
    assert (arch.vocab_size, arch.max_position_embeddings, arch.num_hidden_layers) == (262208, 131072, 62)
    assert (arch.sliding_window, arch.num_sliding_window_layers, arch.head_dim) == (1024, 52, 128)


def test_a_tensor_parallel_split_divides_the_matrices_and_keeps_the_norms_whole() -> None:
    tensors = [
        Tensor("model.layers.0.mlp.down_proj.weight", "BF16", (8, 8), 128),
        Tensor("model.layers.0.input_layernorm.weight", "BF16", (8,), 16),
    ]
    layer = checkpoint_bytes(tensors, 1).layers[0]
    assert (layer.split, layer.replicated, layer.per_rank(4)) == (128, 16, 48)


def test_pipeline_stages_take_layers_as_vllm_splits_them() -> None:
    assert pp_layer_counts(62, 4) == [15, 16, 16, 15]  # get_pp_indices: the remainder to the stages before the last


def test_headers_written_by_the_safetensors_library_size_exactly(hub_cache, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    config = {
        **POPULAR["meta-llama/Llama-3.1-8B-Instruct"]["config"],
        "num_hidden_layers": 1,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "head_dim": 32,
        "vocab_size": 100,
    }
    shapes = {
        "model.embed_tokens.weight": ("bfloat16", [100, 64], 2),
        "model.layers.0.mlp.experts.down_proj_blocks": ("uint8", [2, 64, 4, 16], 1),
        "model.layers.0.self_attn.q_proj.weight": ("float8_e4m3fn", [64, 64], 1),
        "model.layers.0.input_layernorm.weight": ("float32", [64], 4),
    }
    buffers = {name: ctypes.create_string_buffer(math.prod(shape) * size) for name, (_, shape, size) in shapes.items()}
    specs = {
        name: safetensors.TensorSpec(
            dtype=dtype, shape=shape, data_ptr=ctypes.addressof(buffers[name]), data_len=len(buffers[name])
        )
        for name, (dtype, shape, _) in shapes.items()
    }
    file = bytes(safetensors.serialize(specs, metadata={"format": "pt"}))
    with serving({"tiny/model": Repo({"config.json": json.dumps(config).encode(), "model.safetensors": file})}) as endpoint:
        monkeypatch.setenv("HF_ENDPOINT", endpoint)
        arch = from_hub("tiny/model", None)
    header = struct.unpack("<Q", file[:8])[0]
    assert arch.checkpoint is not None and arch.checkpoint.total_bytes == len(file) - 8 - header


@contextmanager
def _serve_one(files: dict[str, bytes], monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with serving({"someone/model": Repo(files)}) as endpoint:
        monkeypatch.setenv("HF_ENDPOINT", endpoint)
        yield


def test_a_repository_without_safetensors_is_sized_from_its_config_and_says_so(hub_cache, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    config = json.dumps(POPULAR["Qwen/Qwen3-14B"]["config"]).encode()
    with _serve_one({"config.json": config, "pytorch_model.bin": b""}, monkeypatch):
        arch = from_hub("someone/model", None)
    assert arch.checkpoint is None and arch.source == "Hub, config.json only (no safetensors headers)"
    assert arch.num_parameters == pytest.approx(14.77e9, rel=0.01)  # estimated from the shape


def test_a_repository_without_a_config_json_names_model_id(hub_cache, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    files = {"model.safetensors": hub_checkpoints.header_only([])}
    with _serve_one(files, monkeypatch), pytest.raises(ConfigError) as error:
        from_hub("someone/model", None)
    issue = error.value.issues[0]
    assert issue.key == "model.id" and "has no config.json on the Hub" in issue.message


def test_a_header_that_cannot_be_parsed_names_model_id(hub_cache, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    config = json.dumps(POPULAR["Qwen/Qwen3-14B"]["config"]).encode()
    files = {"config.json": config, "model.safetensors": struct.pack("<Q", 12) + b"not json at all"}
    with _serve_one(files, monkeypatch), pytest.raises(ConfigError) as error:
        from_hub("someone/model", None)
    issue = error.value.issues[0]
    assert issue.key == "model.id" and "has a safetensors header that cannot be parsed" in issue.message


def test_a_second_read_needs_no_network(hub, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from_hub("openai/gpt-oss-20b", None)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    arch = from_hub("openai/gpt-oss-20b", None)
    assert arch.source.startswith("Hub cache (the Hub is unreachable")
    assert arch.checkpoint is not None and arch.checkpoint.total_bytes == 13_761_264_768


def test_offline_reads_the_cache_and_says_so(hub, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from_hub("openai/gpt-oss-20b", None)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    requests = len(hub["openai/gpt-oss-20b"].requests)
    assert from_hub("openai/gpt-oss-20b", None).source == "Hub cache"
    assert len(hub["openai/gpt-oss-20b"].requests) == requests


@pytest.mark.parametrize("content", ["not json", '{"format": 0, "config": {}, "tensors": []}', "[1, 2]"])
def test_an_unusable_cache_entry_is_read_again_from_the_hub(hub, content) -> None:  # type: ignore[no-untyped-def]
    path = cache_path("openai/gpt-oss-20b", "main")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    assert from_hub("openai/gpt-oss-20b", None).source == "Hub"
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == 1


def test_offline_without_a_cached_copy_names_model_id(hub, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ConfigError) as error:
        from_hub("openai/gpt-oss-20b", None)
    assert error.value.issues[0].key == "model.id" and "--offline" in error.value.issues[0].message


def test_the_network_down_without_a_cache_names_model_id_and_the_cause(hub_cache) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError) as error:
        from_hub("openai/gpt-oss-20b", None)
    issue = error.value.issues[0]
    assert issue.key == "model.id" and "the Hub is unreachable (ConnectError)" in issue.message
    assert "the Hub cache (PREFLIGHT_HUB_CACHE) has no copy" in issue.message


def test_a_repository_the_hub_does_not_have_names_model_id(hub) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError) as error:
        from_hub("meta-llama/Llama-3.1-8B-Instrct", None)
    issue = error.value.issues[0]
    assert issue.key == "model.id" and "nor a repository on the Hub (404" in issue.message


def test_an_unknown_revision_names_model_revision(hub) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError) as error:
        from_hub("openai/gpt-oss-20b", "v9.9")
    assert error.value.issues[0].key == "model.revision"


def test_a_gated_model_without_a_token_names_hf_token(hub, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("HF_TOKEN")  # and no token saved by a login (the hub_cache fixture)
    with pytest.raises(ConfigError) as error:
        from_hub("google/gemma-3-27b-it", None)
    issue = error.value.issues[0]
    assert issue.key == "hf_token" and "gated on the Hub and no token is set (401)" in issue.message


def test_a_gated_model_whose_licence_the_token_did_not_accept_names_hf_token(hub, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(hub["google/gemma-3-27b-it"], "licence_accepted", False)
    with pytest.raises(ConfigError) as error:
        from_hub("google/gemma-3-27b-it", None)
    issue = error.value.issues[0]
    assert issue.key == "hf_token" and "has not accepted its licence (403)" in issue.message


def test_a_gated_model_with_a_token_is_read(hub) -> None:  # type: ignore[no-untyped-def]
    assert from_hub("google/gemma-3-27b-it", None).source == "Hub"


def test_a_pinned_revision_is_read_and_cached_under_its_name(hub) -> None:  # type: ignore[no-untyped-def]
    sha = hub["openai/gpt-oss-120b"].sha
    assert from_hub("openai/gpt-oss-120b", sha).source == "Hub"
    assert cache_path("openai/gpt-oss-120b", sha).is_file()


HUB_STACKS = Path(__file__).parent / "data" / "hub" / "stacks"


@pytest.mark.parametrize("name", ["gemma-3-27b-it", "gpt-oss-20b", "gpt-oss-120b"])
def test_a_hub_model_preflights_from_the_hub_alone(hub, name, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([str(HUB_STACKS / f"Pulumi.{name}.yaml")]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("vLLM preflight: FITS")
    assert f"model facts of {POPULAR_IDS[name]} from the Hub\n" in captured.err


def test_a_gated_hub_model_needs_the_hf_token_secret_for_its_download(hub, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([str(HUB_STACKS / "Pulumi.gemma-3-27b-it.yaml")]) == 0
    assert "vllm-serving:hf_token: is required because model.id 'google/gemma-3-27b-it' is gated on the Hugging " in (
        capsys.readouterr().err
    )


def test_a_public_hub_model_needs_no_hf_token_secret(hub, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([str(HUB_STACKS / "Pulumi.gpt-oss-20b.yaml")]) == 0
    assert "hf_token" not in capsys.readouterr().err


def test_an_unpinned_hub_model_is_told_the_commit_main_is_at(hub, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([str(HUB_STACKS / "Pulumi.gpt-oss-20b.yaml")]) == 0
    sha = hub["openai/gpt-oss-20b"].sha
    assert f"Fix: set model.revision to a commit sha (main was {sha} when the Hub was read)." in capsys.readouterr().out


def test_the_report_says_how_a_hub_checkpoint_is_stored(hub, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([str(HUB_STACKS / "Pulumi.gpt-oss-20b.yaml")]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("  Checkpoint"))
    assert row.split(None, 1)[1] == (
        "MXFP4 (U8 blocks + E8M0 scales, 32 per block): 9.46 GiB; BF16: 3.36 GiB (safetensors headers, Hub)"
    )


@pytest.mark.parametrize("name", ["gemma-3-27b-it", "gpt-oss-20b", "gpt-oss-120b"])
def test_a_hub_model_renders_from_the_hub_alone(hub, name, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert render_main([str(HUB_STACKS / f"Pulumi.{name}.yaml"), str(tmp_path)]) == 0
    assert any(path.name.startswith("06-deployment-") for path in tmp_path.iterdir())


def test_the_cli_offline_reads_the_hub_cache_and_says_so(hub, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    stack = str(HUB_STACKS / "Pulumi.gpt-oss-20b.yaml")
    assert main([stack]) == 0
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # restored after the test: --offline sets it
    capsys.readouterr()
    assert main([stack, "--offline"]) == 0
    assert "model facts of openai/gpt-oss-20b from the Hub cache (--offline)" in capsys.readouterr().err


def test_the_cli_offline_with_a_catalog_model_says_the_catalog(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    assert main([str(STACKS / "Pulumi.dev.yaml"), "--offline"]) == 0
    assert "model facts of meta-llama/Llama-3.1-8B-Instruct from the catalog (--offline)" in capsys.readouterr().err


def test_a_catalog_model_never_imports_huggingface_hub() -> None:
    assert not preflight_imports("huggingface_hub", "stacks/Pulumi.prod.yaml")


POPULAR_IDS = {repo.split("/")[1]: repo for repo in POPULAR}


def test_the_pulumi_program_reads_a_gated_hub_model_with_the_hf_token_secret(hub, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HF_TOKEN", "")  # only the stack's secret; restored (unset) after the test
    config = yaml.safe_load((HUB_STACKS / "Pulumi.gemma-3-27b-it.yaml").read_text(encoding="utf-8"))["config"]
    registered, error = run_main({key.removeprefix("vllm-serving:"): value for key, value in config.items()})
    assert error is None
    assert registered.exports["preflight"]["checkpoint"]["source"] == "Hub"


def test_the_pulumi_program_without_hf_token_names_it_for_a_gated_hub_model(hub, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HF_TOKEN", "")
    config = yaml.safe_load((HUB_STACKS / "Pulumi.gemma-3-27b-it.yaml").read_text(encoding="utf-8"))["config"]
    _, error = run_main({key.removeprefix("vllm-serving:"): value for key, value in config.items()}, hf_token=False)
    assert error is not None and "vllm-serving:hf_token: 'google/gemma-3-27b-it' is gated on the Hub" in str(error)


def _keep_in_catalog(repo: str, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preflight.hub, "CATALOG_FACTS", folder)
    script = runpy.run_path(str(REPO / "scripts" / "add_model.py"), run_name="add_model")
    assert script["main"]([repo, "--hub", "--source", "read from tests/fake_hub.py"]) == 0


def test_add_model_keeps_the_hub_facts_in_the_catalog_which_sizes_them_offline(hub, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _keep_in_catalog("openai/gpt-oss-20b", tmp_path / "catalog-hub", monkeypatch)
    read = from_hub("openai/gpt-oss-20b", None)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("PREFLIGHT_HUB_CACHE", str(tmp_path / "empty-cache"))
    kept = from_hub("openai/gpt-oss-20b", None)
    assert kept.source == f"catalog (the Hub at {hub['openai/gpt-oss-20b'].sha})"
    assert kept.checkpoint == read.checkpoint


def test_a_revision_other_than_the_catalogs_is_read_from_the_hub(hub, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _keep_in_catalog("openai/gpt-oss-20b", tmp_path / "catalog-hub", monkeypatch)
    assert from_hub("openai/gpt-oss-20b", "main").source == "Hub"


def test_the_catalog_page_lists_the_hub_facts_it_keeps(hub, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    _keep_in_catalog("openai/gpt-oss-20b", tmp_path / "catalog-hub", monkeypatch)
    docs = runpy.run_path(str(REPO / "scripts" / "gen_catalog_docs.py"), run_name="gen_catalog_docs")
    row = docs["model_row"]("openai/gpt-oss-20b", docs["hub_models"](tmp_path / "catalog-hub")["openai/gpt-oss-20b"])
    assert row.startswith("| `openai/gpt-oss-20b` | 11.96 B | `mxfp4` | 12.8 GiB | 24 | 64 (8) | 64 | 131,072 |")
    assert "catalog (the Hub at " in row and "MXFP4 (U8 blocks + E8M0 scales, 32 per block): 9.46 GiB" in row


def test_a_yarn_rope_scaling_lengthens_the_context_as_vllm_derives_it() -> None:
    config = {**POPULAR["Qwen/Qwen2.5-7B-Instruct"]["config"]}
    config["rope_scaling"] = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
    assert from_config_dict(config, None).max_position_embeddings == 131072


def test_gemma_3s_linear_rope_scaling_leaves_its_context_as_written() -> None:
    assert from_config_dict(POPULAR["google/gemma-3-27b-it"]["config"], None).max_position_embeddings == 131072


def test_llama_3s_rope_scaling_leaves_its_context_as_written() -> None:
    assert from_config_dict(POPULAR["meta-llama/Llama-3.1-8B-Instruct"]["config"], None).max_position_embeddings == 131072


def test_one_preflight_reads_the_hub_once_though_it_sizes_every_suggested_layout(hub, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    reads: list[str] = []
    read_hub = preflight.hub._read_hub

    def counted(repo: str, revision: str) -> object:
        reads.append(repo)
        return read_hub(repo, revision)

    monkeypatch.setattr(preflight.hub, "_read_hub", counted)
    assert main([str(HUB_STACKS / "Pulumi.gemma-3-27b-it.yaml")]) == 0
    assert reads == ["google/gemma-3-27b-it"]
