"""What moving a stack to another vLLM release (or image tag) changes: `python -m preflight HEAD --against BASE`.

Four findings, each from the tables the program already keeps, none from a second hand-written list:
- flags: every flag (and value) of the rendered `vllm serve` command lines, the base's and the head's, that the new
  release's generated table (catalog/data/vllm/<version>.json via catalog/vllm_flags.py) does not accept, with the
  replacement catalog/vllm_flags.py REPLACEMENTS names;
- metrics: every series the rendered KEDA triggers, alerts and dashboard select (components/render/queries.py,
  read back out of the rendered objects) that the new release does not export (catalog/vllm_metrics.py), with
  the new release's name for the same signal;
- sizing: the head's stack sized under the old and the new release (memory verdict, KV tokens, max concurrency);
- driver: the new image's driver floor (catalog/vllm_images.py) and the cluster check's driver finding, when a
  cluster snapshot was given.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from catalog.vllm_flags import FLAG_TABLES, FlagTable
from catalog.vllm_images import DriverFloor, driver_floor
from catalog.vllm_metrics import metrics_for, renamed_signal, series_type
from cluster.findings import Finding
from cluster.report import ClusterResult
from components.render.manifests import stack_manifests
from components.render.queries import used_metrics
from config.stack import StackConfig
from plan import Plan
from plan.sizing import resolve_sizing
from validation.vllm import flag_values


@dataclass(frozen=True)
class FlagChange:
    flag: str
    value: str | None  # set when the flag stays but this value is refused
    change: str  # "rejected", "renamed" (the replacement names another flag) or "value rejected"
    replacement: str | None  # what to use instead (catalog/vllm_flags.py REPLACEMENTS), or the accepted values
    still_rendered: bool  # the head's command line still carries it: the new server would refuse to start


@dataclass(frozen=True)
class MetricChange:
    name: str
    consumers: tuple[str, ...]  # KEDA, alerts, dashboard
    replacement: str | None  # the new release's series for the same signal
    still_used: bool  # the head's queries still select it: that trigger, alert or panel reads nothing


@dataclass(frozen=True)
class ReleaseSizing:
    vllm_version: str
    memory_era: str
    fits: bool
    reasons: tuple[str, ...]
    kv_cache_tokens: int
    max_concurrency_at_max_model_len: float


@dataclass(frozen=True)
class UpgradeImpact:
    old_version: str
    new_version: str
    old_image: str
    new_image: str
    flags: tuple[FlagChange, ...]
    metrics: tuple[MetricChange, ...]
    sizing: tuple[ReleaseSizing, ReleaseSizing]  # the head's stack under the old release, then the new one
    driver_floor: DriverFloor | None  # the new image's; None when its CUDA build has no floor in the table
    driver_findings: tuple[Finding, ...]  # the cluster check's, when a snapshot was given

    def as_dict(self) -> dict[str, Any]:
        return {
            "from": {"vllm_version": self.old_version, "image": self.old_image},
            "to": {"vllm_version": self.new_version, "image": self.new_image},
            "flags": [asdict(change) for change in self.flags],
            "metrics": [{**asdict(change), "consumers": list(change.consumers)} for change in self.metrics],
            "sizing": [{**asdict(row), "reasons": list(row.reasons)} for row in self.sizing],
            "driver": None if self.driver_floor is None else asdict(self.driver_floor),
            "driver_findings": [finding.as_dict() for finding in self.driver_findings],
        }


# --- the words, from the JSON form: the text report and the PR comment (cli/pr_comment.py) print the same -----


def headline(data: dict[str, Any]) -> str:
    old, new = data["from"], data["to"]
    return f"vLLM {old['vllm_version']} -> {new['vllm_version']} ({old['image']} -> {new['image']})"


def sections(data: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(title, one line a finding) for flags, metrics, memory and the driver."""
    return [
        ("Flags", [flag_text(change) for change in data["flags"]] or ["every rendered flag is accepted"]),
        ("Metrics", [metric_text(change) for change in data["metrics"]] or ["every queried series is exported"]),
        ("Memory", [sizing_text(row) for row in data["sizing"]]),
        ("Driver", driver_lines(data)),
    ]


def flag_text(change: dict[str, Any]) -> str:
    what = change["flag"] if change["value"] is None else f"{change['flag']} {change['value']}"
    instead = f"; use {change['replacement']}" if change["replacement"] else ""
    where = "still on the command line: the server would exit" if change["still_rendered"] else "no longer rendered"
    return f"{what}: {change['change']} by the new release{instead} ({where})"


def metric_text(change: dict[str, Any]) -> str:
    effect = "the rendered queries no longer read it"
    if change["still_used"]:
        effect = "still read by the rendered queries: they get no data"
    elif change["replacement"]:
        effect = f"the rendered queries read {change['replacement']} instead; your own queries on the old name go empty"
    return f"{change['name']} ({', '.join(change['consumers'])}): not exported by the new release; {effect}"


def sizing_text(row: dict[str, Any]) -> str:
    verdict = "FITS" if row["fits"] else "BLOCKED: " + "; ".join(row["reasons"])
    return (
        f"under vLLM {row['vllm_version']} ({row['memory_era']}): {verdict}, {row['kv_cache_tokens']:,} KV tokens, "
        f"max concurrency {row['max_concurrency_at_max_model_len']:.2f}"
    )


def driver_lines(data: dict[str, Any]) -> list[str]:
    floor, image = data["driver"], data["to"]["image"]
    if floor is None:
        return [f"no driver floor known for {image} (a CUDA 12 or custom build): not checked"]
    lines = [f"{image} is a CUDA {floor['cuda_major']} build: NVIDIA driver >= {floor['min_driver_major']}"]
    if not data["driver_findings"]:
        return [*lines, "cluster: not checked (pass --cluster FILE)"]
    return lines + [
        f"cluster [{f['level']}] {f['message']}" + (f" Fix: {f['fix']}" if f["fix"] else "") for f in data["driver_findings"]
    ]


def text_lines(data: dict[str, Any]) -> list[str]:
    """The text report's section."""
    lines = [f"Upgrade: {headline(data)}"]
    for title, items in sections(data):
        lines += [f"  {title}:", *(f"    - {item}" for item in items)]
    return lines


def markdown_lines(data: dict[str, Any]) -> list[str]:
    """The same as nested Markdown bullets (`--markdown`, the PR comment)."""
    lines = [f"- **Upgrade: {headline(data)}**"]
    for title, items in sections(data):
        lines += [f"  - {title}:", *(f"    - {item}" for item in items)]
    return lines


def is_upgrade(base: Plan, head: Plan) -> bool:
    """The release or the image changed between the two plans."""
    return (base.delivery.vllm.version, base.server.image) != (head.delivery.vllm.version, head.server.image)


def upgrade_impact(base: Plan, head: Plan, head_cfg: StackConfig, cluster: ClusterResult) -> UpgradeImpact:
    old, new = base.delivery.vllm, head.delivery.vllm
    return UpgradeImpact(
        old_version=old.version,
        new_version=new.version,
        old_image=base.server.image,
        new_image=head.server.image,
        flags=tuple(flag_changes(command_line(base), command_line(head), FLAG_TABLES[new.version])),
        metrics=tuple(metric_changes(base, head)),
        sizing=(release_sizing(head_cfg, old.version), release_sizing(head_cfg, new.version)),
        driver_floor=driver_floor(new.image, new.image_tag, new.version),
        driver_findings=tuple(f for f in cluster.findings if f.check == "driver"),
    )


def command_line(plan: Plan) -> list[str]:
    """Every argument after `vllm serve` any pod of the stack gets (a multi-node worker adds its own)."""
    return [*plan.server.args, *(plan.multinode.worker_flags if plan.multinode else ())]


def flag_changes(old_args: list[str], new_args: list[str], table: FlagTable) -> list[FlagChange]:
    """The flags of both command lines the new release's table refuses, the old line's first."""
    head = dict.fromkeys(flag_values(new_args))
    head_flags = {flag for flag, _ in head}
    changes: dict[tuple[str, str | None], FlagChange] = {}
    for flag, value in dict.fromkeys([*flag_values(old_args), *head]):
        if flag not in table.flags:
            hint = table.removed.get(flag)
            kind = "renamed" if hint and hint.startswith("--") else "rejected"
            changes.setdefault((flag, None), FlagChange(flag, None, kind, hint, flag in head_flags))
        elif (choices := table.choices.get(flag)) and value is not None and value not in {str(c) for c in choices}:
            accepted = f"one of {', '.join(map(str, choices))}"
            changes[(flag, value)] = FlagChange(flag, value, "value rejected", accepted, (flag, value) in head)
    return list(changes.values())


def metric_changes(base: Plan, head: Plan) -> list[MetricChange]:
    """Series the base's or the head's queries select that the new release does not export."""
    old, new = metrics_for(base.delivery.vllm.version), metrics_for(head.delivery.vllm.version)
    before = used_metrics(stack_manifests(base)) if base.target == "kubernetes" else {}
    after = used_metrics(stack_manifests(head)) if head.target == "kubernetes" else {}
    changes = []
    for name, consumers in {**before, **after}.items():
        if series_type(name, new.metrics) is None:
            changes.append(MetricChange(name, consumers, renamed_signal(name, old, new), name in after))
    return changes


def release_sizing(cfg: StackConfig, version: str) -> ReleaseSizing:
    """The stack's memory verdict and capacity had it named this release (its image tag left to the release)."""
    vllm = cfg.vllm.model_copy(update={"version": version, "tag": None})
    report = resolve_sizing(cfg.model_copy(update={"vllm": vllm}))
    return ReleaseSizing(
        vllm_version=version,
        memory_era=report.resolved.release.era.value,
        fits=report.verdict.fits,
        reasons=report.verdict.reasons,
        kv_cache_tokens=report.capacity.kv_cache_tokens,
        max_concurrency_at_max_model_len=round(report.capacity.max_concurrency_at_max_model_len, 2),
    )
