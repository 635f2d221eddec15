"""Run program code under Pulumi's mocks and keep what it registers, for field-by-field assertions.

Mocked inputs arrive with Kubernetes' camelCase wire names and numbers as floats.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import resource as pulumi_resource
from pulumi.runtime.proto import source_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

PROJECT = "vllm-serving"


class RecordingMocks(pulumi.runtime.Mocks):
    """Echo every resource's inputs back as its state, and keep them. `fail`: the error a resource's create
    stops with, as the provider would raise it when its await fails (None: it is created)."""

    def __init__(self, fail: Callable[[pulumi.runtime.MockResourceArgs], str | None] | None = None) -> None:
        self.resources: list[pulumi.runtime.MockResourceArgs] = []
        self.fail = fail

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        failure = self.fail(args) if self.fail is not None else None
        if failure is not None:
            raise RuntimeError(failure)
        self.resources.append(args)
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[Any, Any], list[tuple[str, str]] | None]:
        return {}, None


@dataclass
class Registered:
    """What one program run registered."""

    resources: list[pulumi.runtime.MockResourceArgs] = field(default_factory=list)
    exports: dict[str, Any] = field(default_factory=dict)

    def of_type(self, typ: str) -> list[pulumi.runtime.MockResourceArgs]:
        return [r for r in self.resources if r.typ == typ]

    def one(self, typ: str) -> dict[str, Any]:
        found = self.of_type(typ)
        assert len(found) == 1, f"expected one {typ}, found {[r.name for r in found]}"
        return found[0].inputs

    def named(self, name: str) -> pulumi.runtime.MockResourceArgs:
        found = [r for r in self.resources if r.name == name]
        assert len(found) == 1, f"expected one resource named {name}, found {len(found)}"
        return found[0]

    @property
    def types(self) -> list[str]:
        return sorted(r.typ for r in self.resources)


def run_program(
    build: Callable[[], Any], config: Mapping[str, Any] | None = None, secret_keys: tuple[str, ...] = (), stack: str = "test"
) -> Registered:
    """Run `build` under fresh mocks with the given project config; return what it registered."""
    registered, error = run_program_catching(build, config, secret_keys, stack)
    if error is not None:
        raise error
    return registered


def run_program_catching(
    build: Callable[[], Any],
    config: Mapping[str, Any] | None = None,
    secret_keys: tuple[str, ...] = (),
    stack: str = "test",
    mocks: RecordingMocks | None = None,
) -> tuple[Registered, BaseException | None]:
    """Like run_program, but a failing program still returns what it registered before it failed."""
    mocks = mocks or RecordingMocks()
    pulumi.runtime.set_mocks(mocks, project=PROJECT, stack=stack, preview=False)
    values = {
        k if ":" in k else f"{PROJECT}:{k}": v if isinstance(v, str) else json.dumps(v) for k, v in (config or {}).items()
    }  # a key with a namespace (kubernetes:context) keeps it
    pulumi.runtime.set_all_config(values, [f"{PROJECT}:{k}" for k in secret_keys])
    exports: dict[str, Any] = {}
    settings = pulumi_mocks.SETTINGS
    settings.rpc_manager.clear()
    settings.outputs.clear()
    original_export = pulumi.export

    def record_export(name: str, value: Any) -> None:
        exports[name] = value
        original_export(name, value)

    pulumi.export = record_export
    failure: BaseException | None = None
    try:
        with _no_source_positions():
            _sync_await(run_pulumi_func(build))
    except Exception as error:  # handed back to the caller, with what was registered before it
        failure = error
    finally:
        pulumi.export = original_export
    if failure is not None:
        _drop_failed_futures(settings)
    return Registered(mocks.resources, exports), failure


@contextlib.contextmanager
def _no_source_positions() -> Iterator[None]:
    """Pulumi walks the whole Python stack at each resource (traceback.extract_stack, a file URI a frame) to send
    the engine where it was declared; under pytest's deep stack that walk was a fifth of a mocked run. The mock
    monitor reads neither field it fills (pulumi 3.272.0 pulumi/runtime/mocks.py MockMonitor.RegisterResource
    and ReadResource build MockResourceArgs from type, name, inputs, provider and id only), so no test can see
    it: under the mocks the walk gives an empty trace. A renamed SDK function fails here, loudly."""
    original = pulumi_resource._get_stack_trace
    pulumi_resource._get_stack_trace = source_pb2.StackTrace  # no frames, no position
    try:
        yield
    finally:
        pulumi_resource._get_stack_trace = original


def _drop_failed_futures(settings: Any) -> None:
    """Free a failed program's futures now: garbage-collected later, asyncio would print "Future exception was
    never retrieved" into whatever test runs then (a golden's captured stderr, say)."""
    settings.rpc_manager.clear()
    settings.outputs.clear()
    collect_quietly()


def collect_quietly(generation: int = 2) -> None:
    """Collect garbage without asyncio's "never retrieved" lines for the futures of programs that failed on purpose."""
    with _asyncio_logger_muted():
        gc.collect(generation)


@contextlib.contextmanager
def _asyncio_logger_muted() -> Iterator[None]:
    asyncio_logger = logging.getLogger("asyncio")
    was = asyncio_logger.disabled
    asyncio_logger.disabled = True
    try:
        yield
    finally:
        asyncio_logger.disabled = was


def resolve(value: Any) -> Any:
    """The plain value behind an Output (after run_program has finished)."""
    if isinstance(value, pulumi.Output):
        return _sync_await(value.future())
    return value
