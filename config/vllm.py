"""`vllm`: which vLLM release and image."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from catalog.vllm_versions import LATEST_VERSION, RELEASES, SUPPORTED_VERSIONS
from config.base import ConfigGroup
from config.errors import show, suggest
from config.syntax import ImageRepository, ImageTag

# Environment variable names that carry credentials (HF_TOKEN, HUGGING_FACE_HUB_TOKEN, OPENAI_API_KEY, ...).
CREDENTIAL_ENV = re.compile(r"(^|_)(TOKEN|API_KEY|SECRET|SECRET_KEY|ACCESS_KEY|PASSWORD)$", re.IGNORECASE)


class VllmConfig(ConfigGroup):
    """The vLLM release; flags, metrics and memory accounting all follow it."""

    version: str = Field(LATEST_VERSION, description="vLLM release; one of the versions with verified flag tables.")
    image: ImageRepository = Field("vllm/vllm-openai", description="Container image repository.")
    tag: ImageTag | None = Field(None, description="Image tag; defaults to v<version>. Never `latest`.")
    digest: str | None = Field(None, pattern=r"^sha256:[0-9a-f]{64}$", description="Pin the image by digest.")
    image_pull_policy: Literal["Always", "IfNotPresent", "Never"] = Field(
        "IfNotPresent", description="Kubernetes imagePullPolicy.")
    logging_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", description="VLLM_LOGGING_LEVEL.")
    extra_env: dict[str, str] = Field(
        default_factory=dict, description="Escape hatch: more environment variables for the server.")

    @field_validator("version")
    @classmethod
    def _supported(cls, value: str) -> str:
        if value not in RELEASES:
            hint = suggest(value, list(SUPPORTED_VERSIONS))
            raise ValueError(
                f"vLLM {show(value)} is not a version this program has flag and metric tables for"
                f"{' (' + hint + ')' if hint else ''}. Fix: use one of {', '.join(SUPPORTED_VERSIONS)}.")
        return value

    @field_validator("extra_env")
    @classmethod
    def _no_credentials(cls, env: dict[str, str]) -> dict[str, str]:
        found = sorted(name for name in env if CREDENTIAL_ENV.search(name))
        if found:
            raise ValueError(
                f"sets {', '.join(found)}, which looks like a credential; it would sit in plain text in the "
                "Pulumi state and the pod spec. Fix: remove it; give the Hugging Face token with "
                "`pulumi config set --secret hf_token` and the API key with `pulumi config set --secret api_key`.")
        return env

    @field_validator("tag")
    @classmethod
    def _pinned(cls, value: str | None) -> str | None:
        if value in ("latest", "nightly"):
            raise ValueError(f"tag {show(value)} moves under you. Fix: pin a release tag such as v{LATEST_VERSION}.")
        return value

    @property
    def image_ref(self) -> str:
        tag = self.tag or RELEASES[self.version].image_tag
        return f"{self.image}:{tag}@{self.digest}" if self.digest else f"{self.image}:{tag}"
