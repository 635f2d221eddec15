"""The cluster part of the preflight report: not checked (and why), or the findings and where the facts came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cluster.findings import Finding

LEVEL_ORDER = {"block": 0, "warn": 1, "ok": 2}


@dataclass(frozen=True)
class ClusterResult:
    checked: bool
    source: str  # where the facts came from, or why the cluster was not checked
    findings: tuple[Finding, ...] = ()

    @property
    def blocked(self) -> bool:
        return any(f.level == "block" for f in self.findings)

    @property
    def verdict(self) -> str:
        """`not checked`, `blocked`, `warnings` or `passed`: never `passed` without facts."""
        if not self.checked:
            return "not checked"
        if self.blocked:
            return "blocked"
        return "warnings" if any(f.level == "warn" for f in self.findings) else "passed"

    def headline(self) -> str:
        return f"cluster: {self.verdict} ({self.source})"

    def lines(self) -> list[str]:
        """One line per finding, blocking ones first: `[block] storage: ... Fix: ...`."""
        ordered = sorted(self.findings, key=lambda f: LEVEL_ORDER[f.level])
        return [f"[{f.level}] {f.render()}" for f in ordered]

    def as_dict(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "verdict": self.verdict,
            "source": self.source,
            "findings": [f.as_dict() for f in self.findings],
        }


def not_checked(reason: str) -> ClusterResult:
    return ClusterResult(False, reason)


NOT_CHECKED = not_checked("no cluster facts: pass --cluster FILE, or run pulumi preview with access to the cluster")
