"""One validation of a stack for its target, called by `__main__.py` and `python -m preflight` alike.

`validate_config` (validation/keys.py) parses the keys and checks the rules between them (one module per
config group); `check_stack` adds every rule that needs the preflight report or the target, returning all
problems at once; `assess` runs both halves in the order both callers use, so the CLI's exit code and
the program's outcome cannot disagree.
Components trust a config that passed here and re-check nothing. Pure: never imports pulumi.

To add a rule: write `def rule(subject: Subject) -> list[ConfigIssue]` and append it to RULES.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

from catalog.vllm_flags import FLAG_TABLES
from cluster.report import NOT_CHECKED, ClusterResult
from config.errors import ConfigError, ConfigIssue
from config.stack import StackConfig
from plan import Plan, resolve
from plan.names import instance_name
from preflight.report import PreflightReport
from validation.delivery import rollout_deadline_issues, startup_probe_issues
from validation.kubernetes import check_kubernetes
from validation.lora import module_issues
from validation.observability import zero_issues
from validation.secrets import missing_secrets, previous_api_key_issues
from validation.values import check_token_budget
from validation.vllm import check_rendered_args, check_vllm_config


@dataclass(frozen=True)
class Subject:
    """What a rule may look at."""

    config: StackConfig
    plan: Plan  # plan.resolve's, the one the renderers read
    secrets_present: frozenset[str] | None  # None: unknown offline (ESC or CI may set them)

    @property
    def report(self) -> PreflightReport:
        return self.plan.sizing


Rule = Callable[[Subject], list[ConfigIssue]]


def _kubernetes(subject: Subject) -> list[ConfigIssue]:
    return check_kubernetes(subject.config, subject.report) if subject.config.target == "kubernetes" else []


def _vllm(subject: Subject) -> list[ConfigIssue]:
    return check_vllm_config(subject.config, subject.report.resolved)


def _secrets(subject: Subject) -> list[ConfigIssue]:
    if subject.secrets_present is None:
        return []
    return missing_secrets(subject.config, subject.secrets_present, subject.report.resolved.architecture)


def _previous_api_key(subject: Subject) -> list[ConfigIssue]:
    """The plan knows the api_key_previous secret is set from the stack's secrets, or from the stack file offline."""
    if not subject.plan.server.api_key_previous:
        return []
    return previous_api_key_issues(subject.config, subject.plan.engine.release.version)


def _startup_probe(subject: Subject) -> list[ConfigIssue]:
    return startup_probe_issues(subject.report.startup)


def _rollout_deadline(subject: Subject) -> list[ConfigIssue]:
    """The longest Pulumi wait: the rollout gate's Job, or a LeaderWorkerSet's own update."""
    delivery, gate = subject.plan.delivery, subject.plan.rollout_gate
    wait = max(delivery.pulumi_timeout_seconds, gate.pulumi_timeout_seconds if gate is not None else 0)
    return rollout_deadline_issues(subject.config, delivery.budget, delivery.rollout_seconds, wait)


def _command_line(subject: Subject) -> list[ConfigIssue]:
    """The plan's finished `vllm serve` command line (plan/server.py; a multi-node worker's included) against the
    release's own flag table, so nothing reaches the server that its parser would refuse."""
    plan = subject.plan
    worker_flags = plan.multinode.worker_flags if plan.multinode is not None else ()
    return check_rendered_args([*plan.server.args, *worker_flags], FLAG_TABLES[plan.engine.release.version])


def _token_budget(subject: Subject) -> list[ConfigIssue]:
    return check_token_budget(subject.config.smoke_test, subject.report.resolved.max_model_len)


def _lora_modules(subject: Subject) -> list[ConfigIssue]:
    return module_issues(subject.config.lora, subject.report.resolved.architecture)


RULES: list[Rule] = [
    _kubernetes,
    _vllm,
    _secrets,
    _previous_api_key,
    _startup_probe,
    _rollout_deadline,
    _command_line,
    _token_budget,
    _lora_modules,
]


def check_stack(cfg: StackConfig, plan: Plan, secrets_present: frozenset[str] | None = None) -> list[ConfigIssue]:
    """Every problem of a parsed stack for its target, in rule order; empty when it may be built. `plan`: the
    stack's plan.resolve."""
    subject = Subject(cfg, plan, secrets_present)
    return [issue for rule in RULES for issue in rule(subject)]


class Outcome(IntEnum):
    """The verdict, numbered as `python -m preflight` exits."""

    FITS = 0
    BLOCKED = 1
    CONFIG_ERROR = 2


# Checks the stack's plan against a cluster's facts (a snapshot offline, the live cluster in the program).
ClusterCheck = Callable[[Plan], ClusterResult]


@dataclass(frozen=True)
class Verdict:
    plan: Plan | None  # None when the config could not be sized
    issues: tuple[ConfigIssue, ...]
    cluster: ClusterResult = NOT_CHECKED

    @property
    def report(self) -> PreflightReport | None:
        return None if self.plan is None else self.plan.sizing

    @property
    def outcome(self) -> Outcome:
        if self.issues or self.report is None:
            return Outcome.CONFIG_ERROR
        return Outcome.FITS if self.report.verdict.fits and not self.cluster.blocked else Outcome.BLOCKED


def assess(
    cfg: StackConfig,
    secrets_present: frozenset[str] | None = None,
    cluster_check: ClusterCheck | None = None,
    *,
    stack: str = "dev",
    hf_token: bool | None = None,
    api_key_previous: bool | None = None,
) -> Verdict:
    """Plan the stack (plan.resolve, once), validate it for its target, then check it against the cluster when
    facts are at hand. A config error outranks a memory or cluster verdict; a cluster not checked never blocks.
    `hf_token`, `api_key_previous`: whether that secret is set; by default, whether secrets_present names it."""
    token = _named(secrets_present, "hf_token") if hf_token is None else hf_token
    previous = _named(secrets_present, "api_key_previous") if api_key_previous is None else api_key_previous
    try:
        plan = resolve(cfg, instance_name(stack), hf_token=token, api_key_previous=previous)
    except ConfigError as error:  # e.g. an unreadable model.config_json
        return Verdict(None, tuple(error.issues))
    issues = tuple(check_stack(cfg, plan, secrets_present)) + tuple(zero_issues(plan.zero))
    if issues or cluster_check is None or cfg.target != "kubernetes":
        return Verdict(plan, issues)
    return Verdict(plan, issues, cluster_check(plan))


def _named(secrets_present: frozenset[str] | None, name: str) -> bool:
    return bool(secrets_present and name in secrets_present)
