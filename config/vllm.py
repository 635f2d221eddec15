"""`vllm`: which vLLM release and image."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from catalog.vllm_versions import LATEST_VERSION, OLDEST_VERSION, RELEASES, SUPPORTED_VERSIONS
from config.base import ConfigGroup
from config.errors import show, suggest
from config.syntax import ImageRepository, ImageTag

# A release number inside an image tag: "v0.11.0", "v0.6.6.post1", "0.10.1.1-cu128".
TAG_RELEASE = re.compile(r"(?<![\d.])v?(\d+\.\d+\.\d+(?:\.\d+)?(?:\.post\d+)?)(?![\d.])")


def tag_release(tag: str) -> str | None:
    """The vLLM release an image tag names, or None for a tag without a release number."""
    match = TAG_RELEASE.search(tag)
    return match.group(1) if match else None


class VllmConfig(ConfigGroup):
    """The vLLM release; flags, metrics and memory accounting all follow it."""

    version: str = Field(
        LATEST_VERSION,
        description=(
            "vLLM release; any release with a generated flag table (catalog/data/vllm). Defaults to the release "
            "vllm.tag names, else the newest."
        ),
    )
    image: ImageRepository = Field("vllm/vllm-openai", description="Container image repository.")
    tag: ImageTag | None = Field(
        None, description=("Image tag; defaults to v<version>. Never `latest`. A release number in it must equal vllm.version.")
    )
    digest: str | None = Field(None, pattern=r"^sha256:[0-9a-f]{64}$", description="Pin the image by digest.")
    image_pull_policy: Literal["Always", "IfNotPresent", "Never"] = Field(
        "IfNotPresent", description="Kubernetes imagePullPolicy."
    )
    logging_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", description="VLLM_LOGGING_LEVEL.")
    extra_env: dict[str, str] = Field(
        default_factory=dict,
        description="Escape hatch: more environment variables for the server; HF_ENDPOINT and the proxy variables "
        "(HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY) also reach every container that fetches from the Hub.",
    )

    @model_validator(mode="before")
    @classmethod
    def _version_from_tag(cls, data: object) -> object:
        """With only vllm.tag set, the version is the release the tag names (flags follow the image)."""
        if isinstance(data, dict) and "version" not in data and isinstance(data.get("tag"), str):
            release = tag_release(data["tag"])
            if release is not None:
                return {**data, "version": release}
        return data

    @field_validator("version")
    @classmethod
    def _supported(cls, value: str) -> str:
        if value not in RELEASES:
            hint = suggest(value, list(SUPPORTED_VERSIONS))
            raise ValueError(
                f"vLLM {show(value)} is not a release this program has flag and metric tables for"
                f"{' (' + hint + ')' if hint else ''}. Fix: use a release from {OLDEST_VERSION} to "
                f"{LATEST_VERSION} (catalog/data/vllm), or generate its table with scripts/vllm_release_tables.py."
            )
        return value

    @field_validator("tag")
    @classmethod
    def _pinned(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value in ("latest", "nightly"):
            raise ValueError(f"tag {show(value)} moves under you. Fix: pin a release tag such as v{LATEST_VERSION}.")
        version = info.data.get("version")
        release = tag_release(value) if value else None
        if release is not None and version is not None and release != version:
            raise ValueError(
                f"tag {show(value)} is vLLM {release} but vllm.version is {version}: the flags and metric names would "
                f"be {version}'s on a {release} image. Fix: set vllm.version to {release}, or remove vllm.tag "
                f"(it defaults to v{version})."
            )
        return value

    @property
    def image_tag(self) -> str:
        """The tag the image runs: vllm.tag, or the release's default."""
        return self.tag or RELEASES[self.version].image_tag

    @property
    def image_ref(self) -> str:
        tag = self.image_tag
        return f"{self.image}:{tag}@{self.digest}" if self.digest else f"{self.image}:{tag}"
