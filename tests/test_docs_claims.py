"""The numbers, names and formulas docs/ states about what the program computes, checked against the preflight
report and the render of the stack each one names.

Two kinds of check. A fenced block after `<!-- docs-check: formulas STACK -->` holds Python assignments; it is
run with the stack's config groups (`cache.headroom_percent`), the inputs below and `ceil`/`floor`, and every
name it assigns is compared with what the program computed for that stack. A figure in prose is a CLAIMS entry:
a pattern that must match the page, whose number is compared with the stack's computed value.
"""

from __future__ import annotations

import functools
import importlib.util
import io
import json
import math
import re
import typing
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from catalog.keda import FEATURES, Feature
from catalog.startup_phases import PROBE_MARGIN
from catalog.vllm_images import MIN_DRIVER_MAJOR, OFFICIAL_IMAGE, image_cuda_major, image_size
from catalog.vllm_metrics import metrics_for
from cli.preflight import main as preflight_main
from cli.render import rendered_objects
from components.render.keda import trigger_queries
from config.stack import StackConfig
from plan.scaling import Workload
from tests.factories import REPO, make_config
from validation import assess
from validation.sources import load_stack_file_with_secrets

DOCS = REPO / "docs"
FORMULAS = re.compile(r"<!-- docs-check: formulas (\S+) -->\n```python\n(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class Stack:
    """One stack file's config, its preflight report (the CLI's --json) and its offline render."""

    cfg: StackConfig
    report: dict[str, Any]
    objects: tuple[dict[str, Any], ...]

    def one(self, kind: str, name_contains: str = "") -> dict[str, Any]:
        found = [o for o in self.objects if o["kind"] == kind and name_contains in o["metadata"]["name"]]
        assert len(found) == 1, f"expected one {kind} named *{name_contains}*, found {len(found)}"
        return found[0]

    def server(self) -> dict[str, Any]:
        return next(o for o in self.objects if o["kind"] in ("Deployment", "StatefulSet") and "server" in o["metadata"]["name"])

    def server_container(self) -> dict[str, Any]:
        return self.server()["spec"]["template"]["spec"]["containers"][0]

    def download_job(self) -> dict[str, Any]:
        return self.one("Job", "model-download")

    def term(self, name: str) -> float:
        return next(t["seconds"] for t in self.report["startup"]["terms"] if t["name"] == name)

    def trigger(self, name: str) -> dict[str, Any]:
        return next(t for t in self.one("ScaledObject")["spec"]["triggers"] if t["name"] == name)

    def hpa(self, direction: str) -> dict[str, Any]:
        return self.one("ScaledObject")["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["behavior"][direction]

    def hpa_policy(self, direction: str) -> dict[str, Any]:
        (policy,) = self.hpa(direction)["policies"]
        return policy

    def smoke_arg(self, flag: str) -> float:
        command = self.one("Job", "smoke-test")["spec"]["template"]["spec"]["containers"][0]["command"]
        return float(command[command.index(flag) + 1])

    def gpus_per_pod(self) -> int:
        return int(self.server_container()["resources"]["limits"]["nvidia.com/gpu"])

    def shm_gib(self) -> float:
        volumes = self.server()["spec"]["template"]["spec"]["volumes"]
        return float(next(v for v in volumes if v["name"] == "dshm")["emptyDir"]["sizeLimit"].removesuffix("Gi"))

    def pod_specs(self) -> list[dict[str, Any]]:
        return [o["spec"]["template"]["spec"] for o in self.objects if o["kind"] in ("Deployment", "StatefulSet", "Job")]


@functools.cache
def stack(relative: str) -> Stack:
    path = REPO / relative
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        assert preflight_main([str(path), "--json"]) == 0, f"{relative} does not fit"
    cfg, _ = load_stack_file_with_secrets(path)
    name = path.name.removeprefix("Pulumi.").removesuffix(".yaml")
    plan = assess(cfg, stack=name, hf_token=True).plan
    assert plan is not None
    return Stack(cfg, json.loads(out.getvalue()), tuple(rendered_objects(plan)))


def inputs(s: Stack) -> dict[str, Any]:
    """What a formula block may read besides the stack's keys: figures of the report and the render."""
    startup = s.report["startup"]
    return {
        "weights_on_disk_gib": startup["weights_gib"],
        "read_throughput_gib_per_s": startup["throughput"]["mib_per_s"] / 1024,
        "image_compressed_gib": image_size(s.cfg.vllm.version).gib,
        "gpus_per_pod": s.gpus_per_pod(),
        "fitted_phases": startup["fixed"]["fitted"],  # the fitted start-up phases of the pod (catalog/startup_phases.py)
        "probe_margin": PROBE_MARGIN,  # the stacks these blocks read set no fixed term
        "max_num_seqs": s.report["engine"]["max_num_seqs"],
        "kv_cache_tokens": s.report["capacity"]["kv_cache_tokens"],
        "tokens_per_request": s.report["target"]["tokens_per_request"],
    }


# What a formula's result is compared with: the name it assigns -> the program's figure for the stack.
COMPUTED: dict[str, Callable[[Stack], float]] = {
    "load_seconds": lambda s: s.report["startup"]["probe"]["load_seconds"],
    "engine_start_seconds": lambda s: s.report["startup"]["probe"]["engine_start_seconds"],
    "graphs_seconds": lambda s: s.report["startup"]["probe"]["cuda_graph_seconds"],
    "startup_probe_failure_threshold": lambda s: s.server_container()["startupProbe"]["failureThreshold"],
    "startup_probe_seconds": lambda s: s.report["startup"]["probe"]["total_seconds"],
    "image_pull_seconds": lambda s: s.term("image pull"),
    "download_seconds": lambda s: s.term("download"),
    "first_start_seconds": lambda s: s.report["startup"]["first_start_seconds"],
    "progress_deadline_seconds": lambda s: s.server()["spec"]["progressDeadlineSeconds"],
    "download_attempt_seconds": lambda s: int(
        next(
            e["value"]
            for e in s.download_job()["spec"]["template"]["spec"]["containers"][0]["env"]
            if e["name"] == "DOWNLOAD_DEADLINE_SECONDS"
        )
    ),
    "download_job_deadline_seconds": lambda s: s.download_job()["spec"]["activeDeadlineSeconds"],
    "cache_size_gib": lambda s: int(
        s.one("PersistentVolumeClaim")["spec"]["resources"]["requests"]["storage"].removesuffix("Gi")
    ),
    "kv_cache_tokens": lambda s: s.report["capacity"]["kv_cache_tokens"],
    "tokens_per_request": lambda s: s.report["target"]["tokens_per_request"],
    "queue_threshold": lambda s: float(s.trigger("queue")["metadata"]["threshold"]),
    "running_threshold": lambda s: float(s.trigger("running")["metadata"]["threshold"]),
}
# Steps a block may name on the way to a compared result.
INTERMEDIATE = {"concurrency", "fixed_allowance_seconds"}


def formula_blocks() -> list[tuple[str, str, str]]:
    """(page, stack file, block) for every formula block in docs/."""
    return [
        (page.name, match.group(1), match.group(2))
        for page in sorted(DOCS.glob("*.md"))
        for match in FORMULAS.finditer(page.read_text(encoding="utf-8"))
    ]


def evaluate(block: str, s: Stack) -> dict[str, Any]:
    """Run the block's assignments; return what it assigned."""
    namespace: dict[str, Any] = {name: getattr(s.cfg, name) for name in type(s.cfg).model_fields}
    namespace |= inputs(s) | {"ceil": math.ceil, "floor": math.floor, "min": min, "max": max}
    before = set(namespace)
    exec(compile(block, "<docs formula>", "exec"), {"__builtins__": {}}, namespace)
    return {name: value for name, value in namespace.items() if name not in before}


BLOCKS = formula_blocks()


def test_the_docs_hold_formula_blocks() -> None:
    assert {page for page, _, _ in BLOCKS} >= {"kubernetes.md", "autoscaling-and-monitoring.md", "model-delivery.md"}


@pytest.mark.parametrize(("page", "stack_file", "block"), BLOCKS, ids=[f"{p}:{b.split()[0]}" for p, _, b in BLOCKS])
def test_every_documented_formula_gives_what_the_program_computes(page: str, stack_file: str, block: str) -> None:
    s = stack(stack_file)
    assigned = evaluate(block, s)
    unknown = sorted(set(assigned) - set(COMPUTED) - INTERMEDIATE)
    assert unknown == [], f"docs/{page}: {unknown} are not figures tests/test_docs_claims.py can compare (COMPUTED)"
    wrong = {
        name: (value, COMPUTED[name](s))
        for name, value in assigned.items()
        if name in COMPUTED and not math.isclose(value, COMPUTED[name](s), rel_tol=1e-4)
    }
    assert wrong == {}, f"docs/{page} (formula, program) for {stack_file}: {wrong}"


def test_a_wrong_formula_is_caught() -> None:
    s = stack(PROD_ON_EFS)
    formula = "download_job_deadline_seconds = ceil(weights_on_disk_gib / cache.download_throughput_gib_per_s * 1.5)"
    assert evaluate(formula + " + 900 + 120\n", s)["download_job_deadline_seconds"] != COMPUTED[
        "download_job_deadline_seconds"
    ](s)


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def figure(name: str, pattern: str) -> float:
    """The number the pattern's group captures in docs/<name> (commas allowed)."""
    match = re.search(pattern, page(name))
    assert match, f"docs/{name} no longer states /{pattern}/: update the claim in tests/test_docs_claims.py with the page"
    return float(match.group(1).replace(",", ""))


PROD = "stacks/Pulumi.prod.yaml"
PROD_ON_EFS = "stacks/examples/Pulumi.prod-on-efs.yaml"  # prod with a shared volume: its claim and download Job


def default_of(key: str) -> Any:
    """A stack key's default, read from the config models (`docker.log_opts.max_size`)."""
    *groups, last = key.split(".")
    model: Any = StackConfig
    for part in groups:  # a group's class, also behind `X | None` (docker)
        annotation = model.model_fields[part].annotation
        model = next(a for a in (annotation, *typing.get_args(annotation)) if isinstance(a, type) and issubclass(a, BaseModel))
    return model.model_fields[last].get_default(call_default_factory=True)


# (page, pattern capturing one figure, the stack, what the program computed for it)
CLAIMS: list[tuple[str, str, str, Callable[[Stack], float]]] = [
    (
        "autoscaling-and-monitoring.md",
        r"`max_num_seqs`\s+is (\d+), the KV cache",
        PROD,
        lambda s: s.report["engine"]["max_num_seqs"],
    ),
    ("autoscaling-and-monitoring.md", r"of a replica holds ([\d,]+) tokens", PROD, COMPUTED["kv_cache_tokens"]),
    ("autoscaling-and-monitoring.md", r"the target is ([\d,]+) tokens per request", PROD, COMPUTED["tokens_per_request"]),
    (
        "autoscaling-and-monitoring.md",
        r"concurrency = min\(\d+, (\d+)\)",
        PROD,
        lambda s: s.report["capacity"]["kv_cache_tokens"] // s.report["target"]["tokens_per_request"],
    ),
    ("autoscaling-and-monitoring.md", r"queue = (\d+) and running", PROD, COMPUTED["queue_threshold"]),
    ("autoscaling-and-monitoring.md", r"and running = (\d+) \(", PROD, COMPUTED["running_threshold"]),
    ("model-delivery.md", r"25 MiB/s each\): (\d+) s \+ \d+ s x", PROD_ON_EFS, COMPUTED["image_pull_seconds"]),
    ("model-delivery.md", r"25 MiB/s each\): \d+ s \+ (\d+) s x", PROD_ON_EFS, COMPUTED["download_seconds"]),
    ("model-delivery.md", r"\((\d+) \+ [\d.]+ x \(\d+ \+ \d+\)\) x", PROD_ON_EFS, COMPUTED["load_seconds"]),
    ("model-delivery.md", r"[\d.]+ x \((\d+) \+ \d+\)\) x", PROD_ON_EFS, COMPUTED["engine_start_seconds"]),
    ("model-delivery.md", r"[\d.]+ x \(\d+ \+ (\d+)\)\) x", PROD_ON_EFS, COMPUTED["graphs_seconds"]),
    ("model-delivery.md", r"\(\d+ \+ ([\d.]+) x \(\d+ \+ \d+\)\) x", PROD_ON_EFS, lambda s: PROBE_MARGIN),
    ("model-delivery.md", r"= (\d+) s on the first start", PROD_ON_EFS, COMPUTED["first_start_seconds"]),
    ("model-delivery.md", r"the startup probe allows (\d+) s", PROD_ON_EFS, COMPUTED["startup_probe_seconds"]),
    (
        "lora.md",
        r"LoRA buffers +([\d.]+) GiB per GPU",
        "stacks/examples/Pulumi.prod-router-lora.yaml",
        lambda s: s.report["memory"]["lora"]["gib_per_gpu"],
    ),
    (
        "lora.md",
        r"max_loras (\d+) x max_lora_rank",
        "stacks/examples/Pulumi.prod-router-lora.yaml",
        lambda s: s.report["memory"]["lora"]["max_loras"],
    ),
    (
        "lora.md",
        r"x max_lora_rank (\d+)\)",
        "stacks/examples/Pulumi.prod-router-lora.yaml",
        lambda s: s.report["memory"]["lora"]["max_lora_rank"],
    ),
    ("model-delivery.md", r"first-start sum plus 120 s \((\d+) s\)", PROD_ON_EFS, COMPUTED["progress_deadline_seconds"]),
    (
        "autoscaling-and-monitoring.md",
        r"KV-cache usage: [\d.]+ \((\d+) on the trigger\)",
        PROD,
        lambda s: float(s.trigger("kv_cache")["metadata"]["threshold"]),
    ),
    (
        "autoscaling-and-monitoring.md",
        r"KV-cache usage: ([\d.]+) \(",
        PROD,
        lambda s: default_of("autoscaling.kv_cache_usage_threshold"),
    ),
    (
        "autoscaling-and-monitoring.md",
        r"before the ([\d.]+) alert",
        PROD,
        lambda s: default_of("monitoring.kv_cache_usage_alert_threshold"),
    ),
    ("autoscaling-and-monitoring.md", r"# queue_fraction ([\d.]+)", PROD, lambda s: default_of("autoscaling.queue_fraction")),
    (
        "autoscaling-and-monitoring.md",
        r"`routing.error_alert_ratio` \((\d+) %\)",
        PROD,
        lambda s: default_of("routing.error_alert_ratio") * 100,
    ),
    (
        "autoscaling-and-monitoring.md",
        r"# running_headroom ([\d.]+)",
        PROD,
        lambda s: default_of("autoscaling.running_headroom"),
    ),
    (
        "autoscaling-and-monitoring.md",
        r"at most (\d+) pods per minute",
        PROD,
        lambda s: s.hpa_policy("scaleUp")["value"] * 60 / s.hpa_policy("scaleUp")["periodSeconds"],
    ),
    (
        "autoscaling-and-monitoring.md",
        r"one pod per (\d+) minutes",
        PROD,
        lambda s: s.hpa_policy("scaleDown")["periodSeconds"] / 60 / s.hpa_policy("scaleDown")["value"],
    ),
    (
        "autoscaling-and-monitoring.md",
        r"after a (\d+)-minute stabilization",
        PROD,
        lambda s: s.hpa("scaleDown")["stabilizationWindowSeconds"] / 60,
    ),
    ("exposure.md", r"--timeout-seconds (\d+) --max-tokens", PROD, lambda s: s.smoke_arg("--timeout-seconds")),
    ("exposure.md", r"--max-tokens (\d+)\n", PROD, lambda s: s.smoke_arg("--max-tokens")),
    ("exposure.md", r"`smoke_test.timeout_seconds` \(`(\d+)`\)", PROD, lambda s: default_of("smoke_test.timeout_seconds")),
    ("exposure.md", r"`smoke_test.max_tokens` \(`(\d+)`\)", PROD, lambda s: default_of("smoke_test.max_tokens")),
    ("exposure.md", r"svc:(\d+) --model", PROD, lambda s: s.one("Service")["spec"]["ports"][0]["port"]),
    ("security.md", r"\(`server.port`, (\d+)\)", PROD, lambda s: s.one("Service")["spec"]["ports"][0]["port"]),
    (
        "model-delivery.md",
        r"`delivery.claim_bind_timeout_seconds` \((\d+) s\)",
        PROD,
        lambda s: default_of("delivery.claim_bind_timeout_seconds"),
    ),
    (
        "model-delivery.md",
        r"fails after (\d+) minutes on",
        PROD,
        lambda s: default_of("delivery.claim_bind_timeout_seconds") / 60,
    ),
    (
        "multinode.md",
        r"`multinode.group_init_seconds` \((\d+) s by default\)",
        PROD,
        lambda s: default_of("multinode.group_init_seconds"),
    ),
    (
        "docker.md",
        r"docker\.cache\.download_throughput_gib_per_s` \(default ([\d.]+) GiB/s\)",
        PROD,
        lambda s: default_of("docker.cache.download_throughput_gib_per_s"),
    ),
    ("docker.md", r"`server.shm_size_gib` \(default (\d+) GiB per GPU", PROD, lambda s: s.shm_gib() / s.gpus_per_pod()),
    ("docker.md", r"\(default (\d+)m x \d+\)", PROD, lambda s: float(default_of("docker.log_opts.max_size").removesuffix("m"))),
    ("docker.md", r"\(default \d+m x (\d+)\)", PROD, lambda s: default_of("docker.log_opts.max_file")),
    ("docker.md", r"\(default `127.0.0.1:(\d+)`\)", PROD, lambda s: default_of("docker.port")),
    (
        "cluster.md",
        r"the 0\.33\.0 image is a CUDA (\d+) build",
        PROD,
        lambda s: image_cuda_major(OFFICIAL_IMAGE, "v0.33.0", "0.33.0") or 0,
    ),
    ("cluster.md", r"CUDA \d+ build: driver >= (\d+)\)", PROD, lambda s: MIN_DRIVER_MAJOR[13]),
    ("cluster.md", r"`fallback.behavior` needs ([\d.]+),", PROD, lambda s: float(FEATURES[Feature.FALLBACK_BEHAVIOR][0])),
    (
        "cluster.md",
        r"`metricType: Value` trigger ([\d.]+) \|",
        PROD,
        lambda s: float(FEATURES[Feature.FALLBACK_WITH_VALUE_TRIGGERS][0]),
    ),
    (
        "autoscaling-and-monitoring.md",
        r"KEDA before ([\d.]+) refuses a `fallback`",
        PROD,
        lambda s: float(FEATURES[Feature.FALLBACK_WITH_VALUE_TRIGGERS][0]),
    ),
    ("kubernetes.md", r"For prod on EFS that is (\d+) s against", PROD_ON_EFS, COMPUTED["download_job_deadline_seconds"]),
    ("kubernetes.md", r"against a (\d+) s `progressDeadlineSeconds`", PROD_ON_EFS, COMPUTED["progress_deadline_seconds"]),
]


@pytest.mark.parametrize(("name", "pattern", "stack_file", "computed"), CLAIMS, ids=[f"{c[0]}:{c[1][:30]}" for c in CLAIMS])
def test_every_documented_figure_is_what_the_program_computes(
    name: str, pattern: str, stack_file: str, computed: Callable[[Stack], float]
) -> None:
    stated, program = figure(name, pattern), computed(stack(stack_file))
    assert stated == pytest.approx(program, abs=0.5), f"docs/{name} states {stated:g} where {stack_file} computes {program:g}"


def table_rows(name: str, marker: str) -> list[list[str]]:
    """The cells of the table after `<!-- docs-check: MARKER -->`, header and rule left out."""
    text = page(name).split(f"<!-- docs-check: {marker} -->\n", 1)[1].split("\n\n", 1)[0]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in text.splitlines()[2:]]


def test_the_trigger_table_shows_the_queries_and_metric_types_the_program_renders() -> None:
    workload = Workload(namespace="ns", model_name="m", deployment_name="d")
    rendered = {
        name: (query.replace(workload.vllm, "{…}"), kind)
        for name, (query, kind) in trigger_queries(metrics_for("0.33.0"), workload).items()
    }
    documented = {
        row[0].split()[0].strip("`"): (row[1].strip("`"), row[2])
        for row in table_rows("autoscaling-and-monitoring.md", "triggers")
    }
    assert documented == rendered


def test_the_prod_scaled_object_uses_the_metric_types_of_the_trigger_table() -> None:
    documented = {row[0].split()[0].strip("`"): row[2] for row in table_rows("autoscaling-and-monitoring.md", "triggers")}
    triggers = stack(PROD).one("ScaledObject")["spec"]["triggers"]
    assert {t["name"]: t["metricType"] for t in triggers} == {t["name"]: documented[t["name"]] for t in triggers}


# Pages that quote others' figures (sources.md: upstream's own images) or are generated (configuration.md).
QUOTING = {"sources.md", "configuration.md"}
USER_ID = re.compile(r"(?i)(?:\buid\b|fsgroup|runasuser|runasgroup|\bgid\b)[^.\n]{0,40}?\b(\d{4,})\b")


def test_every_user_id_in_the_docs_is_the_one_every_pod_runs_as() -> None:
    ids = {spec["securityContext"][key] for spec in stack(PROD).pod_specs() for key in ("runAsUser", "runAsGroup", "fsGroup")}
    stated = {
        (path.name, int(match.group(1)))
        for path in sorted(DOCS.glob("*.md"))
        if path.name not in QUOTING
        for match in USER_ID.finditer(path.read_text(encoding="utf-8"))
    }
    assert len(ids) == 1 and {name for name, _ in stated} >= {"security.md", "docker.md", "model-delivery.md"}
    assert sorted((name, uid) for name, uid in stated if uid not in ids) == []


NAMESPACE_DEFAULT = re.compile(r"`namespace\.name`[^`\n]{0,20}\(default `([^`]+)`")


def test_the_documented_default_namespace_is_the_one_prod_renders() -> None:
    stated = {
        (path.name, match.group(1))
        for path in sorted(DOCS.glob("*.md"))
        if path.name not in QUOTING
        for match in NAMESPACE_DEFAULT.finditer(path.read_text(encoding="utf-8"))
    }
    rendered = stack(PROD).one("Namespace")["metadata"]["name"]
    assert {name for name, _ in stated} >= {"troubleshooting.md", "kubernetes.md"}
    assert {(name, default.replace("<stack>", "prod")) for name, default in stated} == {(name, rendered) for name, _ in stated}


def test_the_documented_instance_name_prefixes_every_prod_object() -> None:
    assert "`<instance>` is `vllm-<stack>`\n(for example `vllm-prod`)" in page("troubleshooting.md")
    assert "the stack's instance, `vllm-<stack>` (for example `vllm-prod`)" in page("kubernetes.md")
    names = [o["metadata"]["name"] for o in stack(PROD).objects]
    assert [name for name in names if not name.startswith("vllm-prod")] == []


def alert_rows() -> dict[str, str]:
    """The alert table of autoscaling-and-monitoring.md: alert name -> its row."""
    section = page("autoscaling-and-monitoring.md").split("### Alerts", 1)[1].split("\n### ", 1)[0]
    return {m.group(1): m.group(0) for m in re.finditer(r"^\| `(Vllm\w+)` \|.*$", section, re.MULTILINE)}


def prod_alert_windows() -> dict[str, str | None]:
    rules = stack(PROD).one("PrometheusRule")["spec"]["groups"]
    return {rule["alert"]: rule.get("for") for group in rules for rule in group["rules"] if "alert" in rule}


def test_the_alert_table_lists_every_alert_prod_renders() -> None:
    assert sorted(prod_alert_windows()) == sorted(alert_rows())


def test_every_prod_window_in_the_alert_table_is_the_rendered_one() -> None:
    stated = {name: m.group(1) for name, row in alert_rows().items() if (m := re.search(r"prod: (\d+[smh])\)", row))}
    windows = prod_alert_windows()
    assert stated and {name: windows.get(name) for name in stated} == stated


# The stack files behind the error samples in docs/ (`<!-- docs-check: config-error NAME -->`).
ERROR_SAMPLES: dict[str, dict[str, Any]] = {
    "typo-and-range": {
        "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
        "gpu": {"product": "A100-SXM4-40GB"},
        "engine": {"gpu_memory_utilization": 1.5, "tensor_paralel_size": 1},
    },
    "docker-cache": {
        "target": "docker",
        "docker": {},
        "model": {"id": "meta-llama/Llama-3.1-8B-Instruct"},
        "gpu": {"product": "L40S"},
        "cache": {"size_gib": 200},
    },
}
SAMPLE = re.compile(r"<!-- docs-check: config-error (\S+) -->\n```\n(.*?)```", re.DOTALL)


def error_samples() -> list[tuple[str, str, str]]:
    return [
        (path.name, match.group(1), match.group(2))
        for path in sorted(DOCS.glob("*.md"))
        for match in SAMPLE.finditer(path.read_text(encoding="utf-8"))
    ]


def flat(text: str) -> str:
    return " ".join(text.replace("\n  - ", "\n").split())


@pytest.mark.parametrize(("name", "sample", "text"), error_samples(), ids=[f"{p}:{n}" for p, n, _ in error_samples()])
def test_every_config_error_sample_is_what_the_cli_prints(name: str, sample: str, text: str, tmp_path: Path) -> None:
    path = tmp_path / f"Pulumi.{sample}.yaml"
    path.write_text(yaml.safe_dump({"config": {f"vllm-serving:{k}": v for k, v in ERROR_SAMPLES[sample].items()}}))
    err = io.StringIO()
    with redirect_stdout(io.StringIO()), redirect_stderr(err):
        assert preflight_main([str(path)]) == 2
    printed, at = flat(err.getvalue()), 0
    for piece in (flat(part) for part in text.split("...")):  # `...` stands for a part the page leaves out
        found = printed.find(piece, at)
        assert found >= 0, f"docs/{name}'s sample {sample!r} is not what the CLI prints:\n{err.getvalue()}"
        at = found + len(piece)


def test_the_docs_hold_the_error_samples() -> None:
    assert {sample for _, sample, _ in error_samples()} == set(ERROR_SAMPLES)


def _config_docs_generator() -> Any:
    spec = importlib.util.spec_from_file_location("gen_config_docs", REPO / "scripts" / "gen_config_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def field_of(key: str) -> Any:
    """The pydantic field of a dotted stack key, or None when the key is not one."""
    model: Any = StackConfig
    *groups, last = key.split(".")
    for part in groups:
        field = model.model_fields.get(part)
        nested = (
            []
            if field is None
            else [
                a
                for a in (field.annotation, *typing.get_args(field.annotation))
                if isinstance(a, type) and issubclass(a, BaseModel)
            ]
        )
        if not nested:
            return None
        model = nested[0]
    return model.model_fields.get(last)


# A key table row outside configuration.md: | `key` | `default` | ... (a default written with a <placeholder> is prose).
KEY_ROW = re.compile(r"^\| `(?:vllm-serving:)?([a-z_]+(?:\.[a-z0-9_]+)+)` \| (`[^`|<]*`) \|", re.MULTILINE)


def test_every_default_in_a_key_table_is_the_config_models_default() -> None:
    default = _config_docs_generator().default
    rows = [
        (path.name, match.group(1), match.group(2))
        for path in sorted(DOCS.glob("*.md"))
        if path.name not in QUOTING
        for match in KEY_ROW.finditer(path.read_text(encoding="utf-8"))
    ]
    assert len(rows) >= 5
    assert [(name, key, cell) for name, key, cell in rows if field_of(key) is None or cell != default(field_of(key))] == []


def test_the_token_file_mode_in_security_md_is_the_rendered_one() -> None:
    match = re.search(r"The Hugging Face token is a file \(mode (0[0-7]{3})", page("security.md"))
    volumes = stack(PROD_ON_EFS).download_job()["spec"]["template"]["spec"]["volumes"]
    (token,) = [v for v in volumes if v["name"] == "hf-token"]
    assert match and int(match.group(1), 8) == token["secret"]["defaultMode"]


def _warns_on_utilization(value: float) -> bool:
    verdict = assess(make_config(engine={"gpu_memory_utilization": value})).report
    assert verdict is not None
    return any(w.startswith("engine.gpu_memory_utilization") for w in verdict.verdict.warnings)


def test_the_utilization_warning_starts_where_troubleshooting_md_says() -> None:
    limit = figure("troubleshooting.md", r"`engine.gpu_memory_utilization` is above ([\d.]+)")
    assert (_warns_on_utilization(limit), _warns_on_utilization(round(limit + 0.01, 2))) == (False, True)


def test_the_fp8_warning_is_given_for_what_troubleshooting_md_says() -> None:
    assert "FP8 weights on a GPU without FP8 tensor cores, which vLLM runs weight-only" in " ".join(
        page("troubleshooting.md").split()
    )
    online = assess(make_config(engine={"quantization": "fp8"}, gpu={"product": "A100-SXM4-80GB"})).report
    stored = assess(
        make_config(
            model={"id": "RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic"},
            gpu={"product": "A100-SXM4-80GB", "count": 2},
            engine={"tensor_parallel_size": 2},
        )
    ).report
    assert online is not None and stored is not None
    fp8 = [any("FP8" in w and "tensor cores" in w for w in r.verdict.warnings) for r in (online, stored)]
    assert fp8 == [True, True]
