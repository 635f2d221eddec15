"""The Pulumi program: load config, validate the stack for its target and its cluster (validation.assess, the
same call `python -m preflight` makes), build it. Nothing is created when any of it fails."""

import pulumi

from cluster.report import ClusterResult
from components.stack import build_stack
from config.errors import ConfigError
from config.sources import load_kubernetes_provider_settings, load_pulumi_secrets, share_hf_token_with_the_hub_read
from plan import Plan
from plan.cost import cost_rows
from preflight.text import blocked_text, table_text
from validation import Outcome, assess
from validation.cluster import program_cluster_result
from validation.sources import load_pulumi_config_with_secrets


def live_cluster(plan: Plan) -> ClusterResult:
    """The cluster as the Kubernetes provider sees it: same kubeconfig, same context (read-only)."""
    kubeconfig, context = load_kubernetes_provider_settings()
    return program_cluster_result(plan, kubeconfig, context)


share_hf_token_with_the_hub_read()  # a gated model outside the catalog is read from the Hub at preview
try:
    cfg, secrets_present = load_pulumi_config_with_secrets()
    verdict = assess(cfg, secrets_present, cluster_check=live_cluster, stack=pulumi.get_stack())
except ConfigError as error:
    raise pulumi.RunError(error.render()) from None
if verdict.outcome is Outcome.CONFIG_ERROR:
    raise pulumi.RunError(ConfigError(list(verdict.issues)).render())
plan, cluster = verdict.plan, verdict.cluster
assert plan is not None  # planned whenever the config is valid
report = plan.sizing

pulumi.log.info(table_text(report, cluster, cost_rows(plan.cost)))
for warning in report.verdict.warnings:
    pulumi.log.warn(f"preflight: {warning}")
for finding in cluster.findings:
    if finding.level == "warn":
        pulumi.log.warn(f"cluster: {finding.render()}")
if not report.verdict.fits:
    raise pulumi.RunError(blocked_text(report))
if cluster.blocked:
    raise pulumi.RunError(
        "\n".join(
            [
                f"The cluster cannot run this stack ({cluster.source}); nothing was created.",
                *(f"  - {f.render()}" for f in cluster.findings if f.level == "block"),
            ]
        )
    )

outputs = build_stack(plan, load_pulumi_secrets())
pulumi.export("preflight", report.as_dict())
pulumi.export("cluster", cluster.as_dict())
pulumi.export("cost", plan.cost.as_dict())
for name, value in outputs.items():
    pulumi.export(name, value)
