"""A cluster check's result: block (the deploy cannot work), warn (it may not), ok (checked and fine)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["block", "warn", "ok"]


@dataclass(frozen=True)
class Finding:
    check: str  # gpu, driver, storage, keda, prometheus, namespace
    level: Level
    message: str  # the cause, naming the objects and values
    fix: str = ""

    def render(self) -> str:
        return f"{self.check}: {self.message}" + (f" Fix: {self.fix}" if self.fix else "")

    def as_dict(self) -> dict[str, str]:
        return {"check": self.check, "level": self.level, "message": self.message, "fix": self.fix}
