"""The Pulumi program: load config, validate the stack for its target (validation.assess, the same call
`python -m preflight` makes), build it. Nothing is created when any of it fails."""

import pulumi

from components.stack import build_stack
from config.errors import ConfigError
from config.sources import load_pulumi_config_with_secrets, load_pulumi_secrets
from preflight.text import blocked_text, table_text
from validation import Outcome, assess

try:
    cfg, secrets_present = load_pulumi_config_with_secrets()
except ConfigError as error:
    raise pulumi.RunError(error.render()) from None
verdict = assess(cfg, secrets_present)
if verdict.outcome is Outcome.CONFIG_ERROR:
    raise pulumi.RunError(ConfigError(list(verdict.issues)).render())
report = verdict.report
assert report is not None  # sized whenever the config is valid

pulumi.log.info(table_text(report))
for warning in report.warnings:
    pulumi.log.warn(f"preflight: {warning}")
if verdict.outcome is Outcome.BLOCKED:
    raise pulumi.RunError(blocked_text(report))

outputs = build_stack(cfg, report, load_pulumi_secrets(), stack=pulumi.get_stack())
pulumi.export("preflight", report.as_dict())
for name, value in outputs.items():
    pulumi.export(name, value)
