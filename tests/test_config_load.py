"""Config is read once, at the edge: from a stack file or from the Pulumi engine, into one frozen model."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel, ValidationError

from config.base import number_kind
from config.errors import ConfigError
from config.messages import nested_model
from config.stack import StackConfig
from tests.factories import REPO, STACKS, load_pulumi_config, load_stack_file, make_config
from tests.harness import run_program

ALL_STACK_FILES = sorted(STACKS.glob("Pulumi.*.yaml")) + sorted((STACKS / "examples").glob("Pulumi.*.yaml"))


@pytest.mark.parametrize("path", ALL_STACK_FILES, ids=lambda p: p.name)
def test_every_shipped_stack_file_validates(path: Path) -> None:
    assert isinstance(load_stack_file(path), StackConfig)


def _models(model: type[BaseModel]) -> list[type[BaseModel]]:
    found = [model]
    for field in model.model_fields.values():
        for arg in (field.annotation, *typing.get_args(field.annotation)):
            if isinstance(arg, type) and issubclass(arg, BaseModel) and arg not in found:
                found += [m for m in _models(arg) if m not in found]
    return found


@pytest.mark.parametrize("model", _models(StackConfig), ids=lambda m: m.__name__)
def test_every_config_key_is_documented(model: type[BaseModel]) -> None:
    undocumented = [name for name, field in model.model_fields.items() if not field.description]
    assert not undocumented, f"{model.__name__} lacks descriptions for {undocumented}"


def test_pulumi_yaml_declares_the_scalar_keys_with_the_models_defaults() -> None:
    project = yaml.safe_load((REPO / "Pulumi.yaml").read_text())
    assert project["name"] == "vllm-serving"
    assert project["stackConfigDir"] == "stacks"
    for key, declaration in project["config"].items():
        assert declaration["type"] in ("string", "integer", "boolean", "array")
        assert StackConfig.model_fields[key].default == declaration["default"], key


def test_the_config_model_is_frozen() -> None:
    cfg = make_config()
    with pytest.raises(ValidationError):
        cfg.replicas = 3  # type: ignore[misc]


def test_keys_of_other_packages_in_a_stack_file_are_left_alone(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.x.yaml"
    stack.write_text(
        "config:\n  kubernetes:context: gpu-cluster\n  vllm-serving:model:\n"
        "    id: meta-llama/Llama-3.1-8B-Instruct\n  vllm-serving:gpu:\n    product: L4\n"
    )
    assert load_stack_file(stack).gpu.product == "L4"


def test_a_secret_set_with_pulumi_config_set_secret_is_accepted(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.x.yaml"
    stack.write_text(
        "config:\n  vllm-serving:hf_token:\n    secure: AAABAJx1\n  vllm-serving:model:\n"
        "    id: meta-llama/Llama-3.1-8B-Instruct\n  vllm-serving:gpu:\n    product: L4\n"
    )
    assert load_stack_file(stack).model.id == "meta-llama/Llama-3.1-8B-Instruct"


def _load_under_pulumi(config: dict[str, object], secret_keys: tuple[str, ...] = ()) -> StackConfig:
    loaded: list[StackConfig] = []
    run_program(lambda: loaded.append(load_pulumi_config()), config=config, secret_keys=secret_keys)
    return loaded[0]


def test_the_pulumi_engine_config_is_read_into_the_same_model() -> None:
    cfg = _load_under_pulumi(
        {"model": {"id": "meta-llama/Llama-3.1-8B-Instruct"}, "gpu": {"product": "L4"}, "replicas": "2", "hf_token": "hf_x"},
        secret_keys=("hf_token",),
    )
    assert (cfg.gpu.product, cfg.replicas) == ("L4", 2)


def test_a_plain_text_token_in_the_pulumi_config_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"vllm-serving:hf_token: is stored in plain text"):
        _load_under_pulumi({"model": {"id": "meta-llama/Llama-3.1-8B-Instruct"}, "gpu": {"product": "L4"}, "hf_token": "hf_x"})


def test_a_ten_megabyte_value_from_the_pulumi_engine_is_refused_quoting_eighty_characters() -> None:
    with pytest.raises(ConfigError) as caught:
        _load_under_pulumi({"model": {"id": "a" * 10_000_000}, "gpu": {"product": "L4"}})
    (issue,) = caught.value.issues
    assert (issue.key, "(10000000 characters), longer than the 4096 allowed" in issue.message, len(issue.render()) < 300) == (
        "model.id",
        True,
        True,
    )


@pytest.mark.parametrize("levels", [30, 100_000], ids=["deeper than the limit", "deeper than JSON can decode"])
def test_deep_nesting_from_the_pulumi_engine_is_a_config_error(levels: int) -> None:
    text = '{"id": ' + "[" * levels + "1" + "]" * levels + "}"  # the engine hands values over as JSON text
    with pytest.raises(ConfigError, match="vllm-serving:model"):
        _load_under_pulumi({"model": text, "gpu": {"product": "L4"}})


def _number_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    keys = []
    for name, field in model.model_fields.items():
        nested = nested_model(field.annotation)
        if nested is not None:
            keys += _number_keys(nested, f"{prefix}{name}.")
        elif number_kind(field.annotation) is not None:
            keys.append(f"{prefix}{name}")
    return keys


def _set_path(key: str, value: object) -> dict[str, object]:
    head, _, rest = key.partition(".")
    return {head: _set_path(rest, value) if rest else value}


@pytest.mark.parametrize("key", _number_keys(StackConfig))
def test_a_boolean_given_for_a_number_is_refused_naming_the_key(key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        make_config(**_set_path(key, True))
    assert any(issue.key == key and "got True" in issue.message for issue in caught.value.issues), caught.value.render()


def test_a_boolean_in_a_structured_pulumi_value_is_refused_where_a_number_belongs() -> None:
    with pytest.raises(ConfigError, match=r"vllm-serving:engine.tensor_parallel_size: expected a whole number"):
        _load_under_pulumi(
            {
                "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
                "gpu": {"product": "L4"},
                "engine": '{"tensor_parallel_size": true}',
            }
        )
