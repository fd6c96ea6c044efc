"""What `council doctor` finds: one line each, and whether `--repair` fixes it."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Finding:
    """One thing out of step; `repairable` things are fixed by `doctor --repair`."""

    debate_id: str | None  # None for index.json
    problem: str
    fix: str
    repairable: bool
    repaired: bool = False
    where: str | None = None  # what the finding is about when not a debate or index.json

    def line(self) -> str:
        where = self.where or self.debate_id or "index.json"
        done = " (repaired)" if self.repaired else ""
        return f"{where}: {self.problem}; {self.fix}{done}"

    def to_json(self) -> dict[str, object]:
        return asdict(self)
