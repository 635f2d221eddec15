"""The Pulumi program: load config, run the preflight, build the stack. Nothing is created when either fails."""

import pulumi

from components.stack import build_stack
from config.errors import ConfigError
from config.sources import load_pulumi_config, load_pulumi_secrets
from preflight import run_preflight
from preflight.render import render_blocked, render_table

try:
    cfg = load_pulumi_config()
    report = run_preflight(cfg)
except ConfigError as error:
    raise pulumi.RunError(error.render()) from None

pulumi.log.info(render_table(report))
for warning in report.warnings:
    pulumi.log.warn(f"preflight: {warning}")
if not report.fits:
    raise pulumi.RunError(render_blocked(report))

try:
    outputs = build_stack(cfg, report, load_pulumi_secrets(), stack=pulumi.get_stack())
except ConfigError as error:
    raise pulumi.RunError(error.render()) from None

pulumi.export("preflight", report.as_dict())
for name, value in outputs.items():
    pulumi.export(name, value)
