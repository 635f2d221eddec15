"""`vllm`: which vLLM release and image."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from catalog.vllm_versions import LATEST_VERSION, RELEASES, SUPPORTED_VERSIONS
from config.base import ConfigGroup
from config.errors import suggest


class VllmConfig(ConfigGroup):
    """The vLLM release; flags, metrics and memory accounting all follow it."""

    version: str = Field(LATEST_VERSION, description="vLLM release; one of the versions with verified flag tables.")
    image: str = Field("vllm/vllm-openai", description="Container image repository.")
    tag: str | None = Field(None, description="Image tag; defaults to v<version>. Never `latest`.")
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
                f"vLLM {value!r} is not a version this program has flag and metric tables for"
                f"{' (' + hint + ')' if hint else ''}. Fix: use one of {', '.join(SUPPORTED_VERSIONS)}.")
        return value

    @field_validator("tag")
    @classmethod
    def _pinned(cls, value: str | None) -> str | None:
        if value in ("latest", "nightly"):
            raise ValueError(f"tag {value!r} moves under you. Fix: pin a release tag such as v{LATEST_VERSION}.")
        return value

    @property
    def image_ref(self) -> str:
        tag = self.tag or RELEASES[self.version].image_tag
        return f"{self.image}:{tag}@{self.digest}" if self.digest else f"{self.image}:{tag}"
