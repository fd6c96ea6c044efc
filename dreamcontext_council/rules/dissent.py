"""A persona that challenged more of the claims than the threshold share: a dissent flag."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DissentFlag:
    """A persona that challenged more than the threshold share of the claims."""

    persona: str
    share: float
    claims_challenged: int
    total: int

    @property
    def message(self) -> str:
        """One line for the report and debate.md: who dissents, on how many claims."""
        return (
            f"{self.persona} dissents on {self.claims_challenged} of {self.total} claims "
            f"({_percent(self.share)})"
        )


def _percent(share: float) -> str:
    return f"{round(share * 100, 1):g}%"
