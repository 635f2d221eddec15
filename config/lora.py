"""`lora`: LoRA adapters served on top of the base model, each under its own name (docs/lora.md).

An adapter comes from the Hub at a pinned commit, or from a folder of the stack's bucket (delivery.mode
object_storage). Its rank and target modules are copied from its adapter_config.json (`r`,
`target_modules`): the preflight sizes vLLM's LoRA buffers and checks the adapter fits them offline.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints, model_validator

from config.base import ConfigGroup
from config.errors import show
from config.syntax import HubRepoId, PositiveInt, ServedModelName

# A full commit sha: an adapter's snapshot folder in the cache is named after it (the server loads offline).
CommitSha = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{40}$")]
BucketFolder = Annotated[str, StringConstraints(pattern=r"^s3://[a-z0-9][a-z0-9.\-]{1,62}/[^\s]*$", max_length=1024)]
ModuleName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")]


class LoraAdapter(ConfigGroup):
    """One adapter: the name clients send as `model`, where it comes from, and its shape."""

    name: ServedModelName = Field(description="The name clients send as `model` (vLLM --lora-modules name=path).")
    id: HubRepoId | None = Field(None, description="Hugging Face repository of the adapter (with revision).")
    revision: CommitSha | None = Field(None, description="The adapter's commit sha on the Hub (40 hex digits).")
    uri: BucketFolder | None = Field(
        None, description="A folder of the stack's bucket holding adapter_config.json and adapter_model.safetensors."
    )
    rank: PositiveInt = Field(description="The adapter's rank: `r` in its adapter_config.json.")
    target_modules: tuple[ModuleName, ...] = Field(
        min_length=1, description="`target_modules` of its adapter_config.json, e.g. [q_proj, v_proj]."
    )

    @model_validator(mode="after")
    def _one_source(self) -> LoraAdapter:
        if (self.id is None) == (self.uri is None):
            raise ValueError(
                f"adapter {show(self.name)} needs exactly one source. Fix: give id and revision (the Hub), or uri "
                "(a folder of the bucket)."
            )
        if self.id is not None and self.revision is None:
            raise ValueError(
                f"adapter {show(self.name)} from the Hub needs revision, a commit sha: the server loads offline from "
                "the snapshot named after it. Fix: copy the sha from the adapter's Hub page (Files, History)."
            )
        if self.uri is not None and self.revision is not None:
            raise ValueError(f"adapter {show(self.name)}: revision goes with id, not uri. Fix: remove revision.")
        return self


class LoraConfig(ConfigGroup):
    """vLLM's LoRA settings; off while `adapters` is empty."""

    adapters: tuple[LoraAdapter, ...] = Field((), max_length=64, description="The adapters served with the model.")
    max_loras: PositiveInt | None = Field(
        None, description="--max-loras: adapters in one batch, each with its GPU buffers; unset: every adapter."
    )
    max_lora_rank: PositiveInt | None = Field(
        None, description="--max-lora-rank: the GPU buffers' rank; unset: the smallest vLLM rank holding every adapter."
    )
    max_cpu_loras: PositiveInt | None = Field(
        None, description="--max-cpu-loras: adapters cached in host memory (at least max_loras); unset: vLLM's."
    )
    runtime_loading: bool = Field(
        False,
        description="Allow /v1/load_lora_adapter and /v1/unload_lora_adapter (VLLM_ALLOW_RUNTIME_LORA_UPDATING).",
    )

    @property
    def enabled(self) -> bool:
        return bool(self.adapters) or self.runtime_loading
