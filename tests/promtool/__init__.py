"""External validators for the observability tests: promtool, and the upstream CRD schemas.

promtool (Debian package `prometheus`) parses and unit-tests the rules the program renders. The CRD
schemas are upstream files kept outside the project (by default ../shared/crds beside the repository, or
the folder named by VLLM_SERVING_CRDS); objects are validated against them with unknown fields rejected,
which the API server would otherwise silently prune. Where the folder is absent the schema tests are
skipped with that reason, unless VLLM_SERVING_REQUIRE_CRDS=1 (set by .ci/run, whose machine has them).
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
CRDS = Path(os.environ.get("VLLM_SERVING_CRDS", REPO.parent / "shared" / "crds"))
LABEL_TEMPLATE = re.compile(r"\{\{ \$labels\.(\w+) \}\}")


def promtool() -> str:
    path = shutil.which("promtool")
    assert path, "promtool not found on PATH. Fix: apt-get install -y prometheus (provides /usr/bin/promtool)."
    return path


def run_promtool(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([promtool(), *map(str, args)], capture_output=True, text=True, timeout=30, check=False)


def write_yaml(path: Path, document: Any) -> Path:
    # libyaml's emitter where PyYAML has it (the rule files are large; the pure-Python one is most of a test's time)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    path.write_text(yaml.dump(document, Dumper=dumper, sort_keys=False), encoding="utf-8")
    return path


def check_rules(path: Path) -> subprocess.CompletedProcess[str]:
    return run_promtool("check", "rules", path)


def recording_rules(expressions: list[str]) -> dict[str, Any]:
    """Every expression as a recording rule, so `promtool check rules` parses each one."""
    rules = [{"record": f"check:expr_{n}", "expr": expr} for n, expr in enumerate(expressions)]
    return {"groups": [{"name": "parse-check", "rules": rules}]}


def expected_alert(rule: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    """What promtool must see for `rule` firing on a series with `labels`: the rule's labels and annotations
    are taken from the rendered rule itself, with `{{ $labels.x }}` filled in."""

    def fill(text: str) -> str:
        return LABEL_TEMPLATE.sub(lambda m: labels[m.group(1)], text)

    return {
        "exp_labels": {**labels, **rule.get("labels", {})},
        "exp_annotations": {key: fill(value) for key, value in rule.get("annotations", {}).items()},
    }


# Where each schema file comes from upstream (repository, path; ../shared/crds/README.md pins the commits).
UPSTREAM_CRDS = {
    "keda.sh_scaledobjects.yaml": "kedacore/keda config/crd/bases/",
    "monitoring.coreos.com_servicemonitors.yaml": "prometheus-operator/prometheus-operator example/prometheus-operator-crd/",
    "monitoring.coreos.com_podmonitors.yaml": "prometheus-operator/prometheus-operator example/prometheus-operator-crd/",
    "monitoring.coreos.com_prometheusrules.yaml": "prometheus-operator/prometheus-operator example/prometheus-operator-crd/",
    "leaderworkerset.x-k8s.io_leaderworkersets.yaml": "kubernetes-sigs/lws config/crd/bases/",
    "gateway.networking.k8s.io_httproutes.yaml": "kubernetes-sigs/gateway-api config/crd/standard/",
    "inference.networking.k8s.io_inferencepools.yaml": "kubernetes-sigs/gateway-api-inference-extension config/crd/bases/",
    "gateway.networking.k8s.io_referencegrants.yaml": "kubernetes-sigs/gateway-api config/crd/standard/",
    "http.keda.sh_httpscaledobjects.yaml": "kedacore/http-add-on config/crd/bases/",
}


def missing_crd_reason(file_name: str) -> str | None:
    """Why a schema test cannot run, and how to enable it; None when the file is there."""
    if not CRDS.is_dir():
        return (
            f"upstream CRD schemas not found ({CRDS} is no folder). To run the custom-resource schema tests, set "
            "VLLM_SERVING_CRDS to a folder holding the upstream CRD files, named as upstream names them "
            "(tests/promtool/__init__.py UPSTREAM_CRDS lists each repository and path); "
            "VLLM_SERVING_REQUIRE_CRDS=1 makes a missing file an error"
        )
    if not (CRDS / file_name).is_file():
        return (
            f"upstream CRD schema {file_name} not found in {CRDS}: copy it there from "
            f"{UPSTREAM_CRDS.get(file_name, 'its upstream repository ')}{file_name}"
        )
    return None


@cache
def crd_schema(file_name: str) -> dict[str, Any]:
    path = CRDS / file_name
    message = missing_crd_reason(file_name)
    if message is not None:
        assert os.environ.get("VLLM_SERVING_REQUIRE_CRDS") != "1", message
        pytest.skip(message)
    # libyaml when present: the LeaderWorkerSet CRD is 1.3 MB, seconds for the pure-Python loader.
    document = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return strict(document["spec"]["versions"][0]["schema"]["openAPIV3Schema"])


def strict(schema: Any) -> Any:
    """The schema with additionalProperties false wherever it lists properties and allows nothing else."""
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result = {key: strict(value) for key, value in schema.items()}
    if (
        "properties" in result
        and "additionalProperties" not in result
        and not result.get("x-kubernetes-preserve-unknown-fields")
    ):
        result["additionalProperties"] = False
    return result


def crd_errors(manifest: dict[str, Any], file_name: str) -> list[str]:
    validator = jsonschema.Draft7Validator(crd_schema(file_name))
    return [f"{'.'.join(map(str, error.absolute_path))}: {error.message}" for error in validator.iter_errors(manifest)]


# One `promtool test rules` run for all the unit-test files of a module: its start-up (~0.3 s CPU) was most of each
# scenario's cost. promtool prints "Unit Testing:  <file>" on stdout, then SUCCESS on stdout or FAILED and the errors
# on stderr, file after file (prometheus/prometheus cmd/promtool/unittest.go, RulesUnitTest); both go unbuffered to
# one pipe here, so each file's section carries its own failure.
UnitTest = tuple[list[dict[str, Any]], dict[str, Any]]  # rule groups, and the unit-test document using them
UNIT_TESTING = "Unit Testing:  "


def promtool_scenario(build: Callable[..., UnitTest]) -> Callable[..., None]:
    """A test that `promtool test rules` passes on what `build` returns. The module's tests made so are run in
    one promtool by the module-scoped `promtool_batch` fixture (tests/conftest.py); each asserts on its own file."""

    def test(request: pytest.FixtureRequest, promtool_batch: dict[str, str], **params: Any) -> None:
        section = promtool_batch.get(request.node.nodeid, promtool_batch[""])
        assert section.splitlines()[1:] == ["  SUCCESS"], section

    functools.update_wrapper(test, build)
    del test.__wrapped__  # type: ignore[attr-defined]  # pytest would read build's own signature
    own = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for name in ("request", "promtool_batch")]
    test.__signature__ = inspect.Signature([*own, *inspect.signature(build).parameters.values()])  # type: ignore[attr-defined]
    test.build = build  # type: ignore[attr-defined]
    return test


def run_unit_tests(folder: Path, items: list[pytest.Item]) -> dict[str, str]:
    """Each item's section of one promtool run over all their files (by node id; "" holds the whole output)."""
    files: dict[str, str] = {}
    for n, item in enumerate(items):
        function = item.function  # type: ignore[attr-defined]
        params = getattr(item, "callspec", None)
        wanted = inspect.signature(function.build).parameters
        groups, test = function.build(**{k: v for k, v in (params.params if params else {}).items() if k in wanted})
        rules = write_yaml(folder / f"rules-{n}.yaml", {"groups": groups})
        files[write_yaml(folder / f"test-{n}.yaml", {"rule_files": [rules.name], **test}).name] = item.nodeid
    result = subprocess.run(
        [promtool(), "test", "rules", *files],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
        check=False,
    )
    sections = {"": result.stdout}
    for section in result.stdout.split(UNIT_TESTING)[1:]:
        name = section.splitlines()[0].strip()
        sections[files[name]] = UNIT_TESTING + section.rstrip()
    return sections
