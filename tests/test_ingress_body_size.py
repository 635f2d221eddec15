"""The largest request the Ingress forwards. ingress-nginx answers a request body over 1 MiB with 413
(kubernetes/ingress-nginx internal/ingress/controller/config/config.go@003f04ca:38 bodySize "1m") unless the
Ingress's proxy-body-size annotation says otherwise, and keeps that default for a value its SizeRegex refuses
(internal/ingress/annotations/parser/validators.go@3146b86a:55): docs/exposure.md."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from components.render.exposure import render_exposure
from config.stack import StackConfig
from plan.traffic import PROMPT_BYTES_PER_TOKEN
from tests.factories import REPO, make_config
from tests.kubernetes_fixtures import plan_of
from tests.program import run_stack_file
from tests.test_landing import refused_key
from tests.test_preflight_model_source import INLINE_8B

BODY_SIZE = "nginx.ingress.kubernetes.io/proxy-body-size"
SIZE_REGEX = re.compile(r"^\d+[bkmg]?$", re.IGNORECASE)  # validators.go@3146b86a:55, as ingress-nginx checks it
INGRESS = {"class_name": "nginx", "host": "llm.example.com", "controller_namespace": "ingress-nginx"}
LARGEST_VOCABULARY_TOKEN = 262_143  # a 262,144-token vocabulary (Gemma 3's), the widest token id in JSON


def exposed(max_model_len: int, multimodal: bool = False, **ingress: Any) -> StackConfig:
    model = {"model": {"id": "my-org/private-vl", "architecture": {**INLINE_8B, "multimodal": True}}} if multimodal else {}
    return make_config(
        security={"require_api_key": True},
        engine={"max_model_len": max_model_len},
        exposure={"ingress": {**INGRESS, **ingress}},
        **model,
    )


def body_size(cfg: StackConfig) -> str:
    plan = plan_of(cfg, "prod")
    (ingress,) = render_exposure(plan.identity, plan.traffic)
    return str(ingress["metadata"]["annotations"][BODY_SIZE])


def bound_bytes(value: str) -> int:
    assert value.endswith("m")
    return int(value[:-1]) * 2**20


def test_a_long_context_ingress_forwards_a_prompt_that_fills_max_model_len() -> None:
    assert body_size(exposed(131072)) == "2m"


def test_a_short_context_keeps_ingress_nginxs_own_one_mebibyte_as_the_floor() -> None:
    assert body_size(exposed(8192)) == "1m"


def test_a_stated_max_request_body_mib_is_rendered_as_stated() -> None:
    assert body_size(exposed(8192, max_request_body_mib=64)) == "64m"


@pytest.mark.parametrize("max_model_len", [2048, 131072, 1_048_576])
def test_the_rendered_size_is_one_ingress_nginx_accepts_rather_than_dropping_for_its_default(max_model_len: int) -> None:
    assert SIZE_REGEX.match(body_size(exposed(max_model_len)))


def test_max_model_len_token_ids_of_the_widest_vocabulary_fit_the_bound() -> None:
    tokens = 131072
    request = json.dumps({"model": "llama-8b", "prompt": [LARGEST_VOCABULARY_TOKEN] * tokens, "max_tokens": 1})
    assert len(request.encode()) <= bound_bytes(body_size(exposed(tokens)))


def test_max_model_len_tokens_of_escaped_cjk_text_two_characters_a_token_fit_the_bound() -> None:
    tokens = 131072
    messages = [{"role": "user", "content": "中文" * tokens}]  # json.dumps escapes each as \\uXXXX: 12 bytes a token
    request = json.dumps({"model": "llama-8b", "messages": messages, "max_tokens": 1})
    assert len(request.encode()) <= bound_bytes(body_size(exposed(tokens)))


def test_a_multimodal_model_behind_an_ingress_sized_for_text_warns_naming_the_key() -> None:
    warnings = plan_of(exposed(8192, multimodal=True), "prod").sizing.verdict.warnings
    (warning,) = [w for w in warnings if w.startswith("exposure.ingress:")]
    assert "at most 1 MiB" in warning and "413" in warning and "exposure.ingress.max_request_body_mib" in warning


def test_a_multimodal_model_with_a_stated_bound_does_not_warn() -> None:
    warnings = plan_of(exposed(8192, multimodal=True, max_request_body_mib=50), "prod").sizing.verdict.warnings
    assert not [w for w in warnings if w.startswith("exposure.ingress:")]


def test_a_text_model_behind_an_ingress_does_not_warn() -> None:
    warnings = plan_of(exposed(8192), "prod").sizing.verdict.warnings
    assert not [w for w in warnings if w.startswith("exposure.ingress:")]


@pytest.mark.parametrize("value", [0, -1, "big", True])
def test_a_max_request_body_mib_that_is_not_a_positive_whole_number_is_refused_naming_the_key(value: Any) -> None:
    issue = refused_key(
        "exposure.ingress.max_request_body_mib",
        security={"require_api_key": True},
        exposure={"ingress": {**INGRESS, "max_request_body_mib": value}},
    )
    assert issue.fix


def test_the_program_registers_the_ingress_with_the_body_bound() -> None:
    extra = {
        "api_key": "sk-test-key",
        "security": {"require_api_key": True},
        "exposure": {"ingress": INGRESS},
        "engine": {"max_model_len": 131072, "served_model_name": "llama-8b"},
    }
    found, error = run_stack_file(REPO / "stacks" / "Pulumi.dev.yaml", extra)
    assert error is None, error
    annotations = found.one("kubernetes:networking.k8s.io/v1:Ingress")["metadata"]["annotations"]
    assert annotations[BODY_SIZE] == "2m"


def test_the_sizes_docs_exposure_states_are_the_ones_rendered() -> None:
    page = (REPO / "docs" / "exposure.md").read_text(encoding="utf-8")
    stated = re.findall(r"`(\d+m)`\s+at\s+([\d,]+)", page)
    assert len(stated) == 2
    assert [body_size(exposed(int(tokens.replace(",", "")))) for _, tokens in stated] == [size for size, _ in stated]


def test_the_bytes_a_token_docs_exposure_states_is_the_planned_figure() -> None:
    page = (REPO / "docs" / "exposure.md").read_text(encoding="utf-8")
    assert f"at {PROMPT_BYTES_PER_TOKEN} bytes a token" in page
