"""The Pulumi program: load config, run the preflight and the cluster checks, build the stack.
Nothing is created when any of them fails."""

import pulumi

from components.stack import build_stack
from config.errors import ConfigError
from config.sources import load_pulumi_config, load_pulumi_secrets
from preflight import run_preflight
from preflight.cluster import program_cluster_result
from preflight.render import render_blocked, render_table

try:
    cfg = load_pulumi_config()
    report = run_preflight(cfg)
    kubernetes_config = pulumi.Config("kubernetes")  # the provider's own settings: same cluster, same context
    cluster = program_cluster_result(cfg, report, pulumi.get_stack(), kubernetes_config.get("kubeconfig"),
                                     kubernetes_config.get("context"))
except ConfigError as error:
    raise pulumi.RunError(error.render()) from None

pulumi.log.info(render_table(report, cluster))
for warning in report.warnings:
    pulumi.log.warn(f"preflight: {warning}")
for finding in cluster.findings:
    if finding.level == "warn":
        pulumi.log.warn(f"cluster: {finding.render()}")
if not report.fits:
    raise pulumi.RunError(render_blocked(report))
if cluster.blocked:
    raise pulumi.RunError("\n".join([f"The cluster cannot run this stack ({cluster.source}); nothing was created.",
                                     *(f"  - {f.render()}" for f in cluster.findings if f.level == "block")]))

try:
    outputs = build_stack(cfg, report, load_pulumi_secrets(), stack=pulumi.get_stack())
except ConfigError as error:
    raise pulumi.RunError(error.render()) from None

pulumi.export("preflight", report.as_dict())
pulumi.export("cluster", cluster.as_dict())
for name, value in outputs.items():
    pulumi.export(name, value)
